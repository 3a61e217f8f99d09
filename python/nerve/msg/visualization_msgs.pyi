"""Message types of `visualization_msgs`: written by `python -m nerve.msg stubs`, for editors."""

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from nerve.msg import Message, builtin_interfaces, geometry_msgs, sensor_msgs, std_msgs

class ImageMarker(Message):
    """``visualization_msgs/msg/ImageMarker``."""

    CIRCLE: ClassVar[int]
    LINE_STRIP: ClassVar[int]
    LINE_LIST: ClassVar[int]
    POLYGON: ClassVar[int]
    POINTS: ClassVar[int]
    ADD: ClassVar[int]
    REMOVE: ClassVar[int]
    header: std_msgs.Header
    ns: str
    id: int
    type: int
    action: int
    position: geometry_msgs.Point
    scale: float
    outline_color: std_msgs.ColorRGBA
    filled: int
    fill_color: std_msgs.ColorRGBA
    lifetime: builtin_interfaces.Duration
    points: list[geometry_msgs.Point]
    outline_colors: list[std_msgs.ColorRGBA]
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        ns: str = ...,
        id: int = ...,
        type: int = ...,
        action: int = ...,
        position: geometry_msgs.Point | dict[str, Any] = ...,
        scale: float = ...,
        outline_color: std_msgs.ColorRGBA | dict[str, Any] = ...,
        filled: int = ...,
        fill_color: std_msgs.ColorRGBA | dict[str, Any] = ...,
        lifetime: builtin_interfaces.Duration | dict[str, Any] = ...,
        points: Sequence[geometry_msgs.Point | dict[str, Any]] = ...,
        outline_colors: Sequence[std_msgs.ColorRGBA | dict[str, Any]] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> ImageMarker: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> ImageMarker: ...

class InteractiveMarker(Message):
    """``visualization_msgs/msg/InteractiveMarker``."""

    header: std_msgs.Header
    pose: geometry_msgs.Pose
    name: str
    description: str
    scale: float
    menu_entries: list[MenuEntry]
    controls: list[InteractiveMarkerControl]
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        pose: geometry_msgs.Pose | dict[str, Any] = ...,
        name: str = ...,
        description: str = ...,
        scale: float = ...,
        menu_entries: Sequence[MenuEntry | dict[str, Any]] = ...,
        controls: Sequence[InteractiveMarkerControl | dict[str, Any]] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> InteractiveMarker: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> InteractiveMarker: ...

class InteractiveMarkerControl(Message):
    """``visualization_msgs/msg/InteractiveMarkerControl``."""

    INHERIT: ClassVar[int]
    FIXED: ClassVar[int]
    VIEW_FACING: ClassVar[int]
    NONE: ClassVar[int]
    MENU: ClassVar[int]
    BUTTON: ClassVar[int]
    MOVE_AXIS: ClassVar[int]
    MOVE_PLANE: ClassVar[int]
    ROTATE_AXIS: ClassVar[int]
    MOVE_ROTATE: ClassVar[int]
    MOVE_3D: ClassVar[int]
    ROTATE_3D: ClassVar[int]
    MOVE_ROTATE_3D: ClassVar[int]
    name: str
    orientation: geometry_msgs.Quaternion
    orientation_mode: int
    interaction_mode: int
    always_visible: bool
    markers: list[Marker]
    independent_marker_orientation: bool
    description: str
    def __init__(
        self,
        *,
        name: str = ...,
        orientation: geometry_msgs.Quaternion | dict[str, Any] = ...,
        orientation_mode: int = ...,
        interaction_mode: int = ...,
        always_visible: bool = ...,
        markers: Sequence[Marker | dict[str, Any]] = ...,
        independent_marker_orientation: bool = ...,
        description: str = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> InteractiveMarkerControl: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> InteractiveMarkerControl: ...

class InteractiveMarkerFeedback(Message):
    """``visualization_msgs/msg/InteractiveMarkerFeedback``."""

    KEEP_ALIVE: ClassVar[int]
    POSE_UPDATE: ClassVar[int]
    MENU_SELECT: ClassVar[int]
    BUTTON_CLICK: ClassVar[int]
    MOUSE_DOWN: ClassVar[int]
    MOUSE_UP: ClassVar[int]
    header: std_msgs.Header
    client_id: str
    marker_name: str
    control_name: str
    event_type: int
    pose: geometry_msgs.Pose
    menu_entry_id: int
    mouse_point: geometry_msgs.Point
    mouse_point_valid: bool
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        client_id: str = ...,
        marker_name: str = ...,
        control_name: str = ...,
        event_type: int = ...,
        pose: geometry_msgs.Pose | dict[str, Any] = ...,
        menu_entry_id: int = ...,
        mouse_point: geometry_msgs.Point | dict[str, Any] = ...,
        mouse_point_valid: bool = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> InteractiveMarkerFeedback: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> InteractiveMarkerFeedback: ...

class InteractiveMarkerInit(Message):
    """``visualization_msgs/msg/InteractiveMarkerInit``."""

    server_id: str
    seq_num: int
    markers: list[InteractiveMarker]
    def __init__(
        self,
        *,
        server_id: str = ...,
        seq_num: int = ...,
        markers: Sequence[InteractiveMarker | dict[str, Any]] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> InteractiveMarkerInit: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> InteractiveMarkerInit: ...

class InteractiveMarkerPose(Message):
    """``visualization_msgs/msg/InteractiveMarkerPose``."""

    header: std_msgs.Header
    pose: geometry_msgs.Pose
    name: str
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        pose: geometry_msgs.Pose | dict[str, Any] = ...,
        name: str = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> InteractiveMarkerPose: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> InteractiveMarkerPose: ...

class InteractiveMarkerUpdate(Message):
    """``visualization_msgs/msg/InteractiveMarkerUpdate``."""

    KEEP_ALIVE: ClassVar[int]
    UPDATE: ClassVar[int]
    server_id: str
    seq_num: int
    type: int
    markers: list[InteractiveMarker]
    poses: list[InteractiveMarkerPose]
    erases: list[str]
    def __init__(
        self,
        *,
        server_id: str = ...,
        seq_num: int = ...,
        type: int = ...,
        markers: Sequence[InteractiveMarker | dict[str, Any]] = ...,
        poses: Sequence[InteractiveMarkerPose | dict[str, Any]] = ...,
        erases: Sequence[str] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> InteractiveMarkerUpdate: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> InteractiveMarkerUpdate: ...

class Marker(Message):
    """``visualization_msgs/msg/Marker``."""

    ARROW: ClassVar[int]
    CUBE: ClassVar[int]
    SPHERE: ClassVar[int]
    CYLINDER: ClassVar[int]
    LINE_STRIP: ClassVar[int]
    LINE_LIST: ClassVar[int]
    CUBE_LIST: ClassVar[int]
    SPHERE_LIST: ClassVar[int]
    POINTS: ClassVar[int]
    TEXT_VIEW_FACING: ClassVar[int]
    MESH_RESOURCE: ClassVar[int]
    TRIANGLE_LIST: ClassVar[int]
    ARROW_STRIP: ClassVar[int]
    ADD: ClassVar[int]
    MODIFY: ClassVar[int]
    DELETE: ClassVar[int]
    DELETEALL: ClassVar[int]
    header: std_msgs.Header
    ns: str
    id: int
    type: int
    action: int
    pose: geometry_msgs.Pose
    scale: geometry_msgs.Vector3
    color: std_msgs.ColorRGBA
    lifetime: builtin_interfaces.Duration
    frame_locked: bool
    points: list[geometry_msgs.Point]
    colors: list[std_msgs.ColorRGBA]
    texture_resource: str
    texture: sensor_msgs.CompressedImage
    uv_coordinates: list[UVCoordinate]
    text: str
    mesh_resource: str
    mesh_file: MeshFile
    mesh_use_embedded_materials: bool
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        ns: str = ...,
        id: int = ...,
        type: int = ...,
        action: int = ...,
        pose: geometry_msgs.Pose | dict[str, Any] = ...,
        scale: geometry_msgs.Vector3 | dict[str, Any] = ...,
        color: std_msgs.ColorRGBA | dict[str, Any] = ...,
        lifetime: builtin_interfaces.Duration | dict[str, Any] = ...,
        frame_locked: bool = ...,
        points: Sequence[geometry_msgs.Point | dict[str, Any]] = ...,
        colors: Sequence[std_msgs.ColorRGBA | dict[str, Any]] = ...,
        texture_resource: str = ...,
        texture: sensor_msgs.CompressedImage | dict[str, Any] = ...,
        uv_coordinates: Sequence[UVCoordinate | dict[str, Any]] = ...,
        text: str = ...,
        mesh_resource: str = ...,
        mesh_file: MeshFile | dict[str, Any] = ...,
        mesh_use_embedded_materials: bool = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Marker: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Marker: ...

class MarkerArray(Message):
    """``visualization_msgs/msg/MarkerArray``."""

    markers: list[Marker]
    def __init__(
        self,
        *,
        markers: Sequence[Marker | dict[str, Any]] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> MarkerArray: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> MarkerArray: ...

class MenuEntry(Message):
    """``visualization_msgs/msg/MenuEntry``."""

    FEEDBACK: ClassVar[int]
    ROSRUN: ClassVar[int]
    ROSLAUNCH: ClassVar[int]
    id: int
    parent_id: int
    title: str
    command: str
    command_type: int
    def __init__(
        self,
        *,
        id: int = ...,
        parent_id: int = ...,
        title: str = ...,
        command: str = ...,
        command_type: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> MenuEntry: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> MenuEntry: ...

class MeshFile(Message):
    """``visualization_msgs/msg/MeshFile``."""

    filename: str
    data: np.ndarray | list[int]
    def __init__(
        self,
        *,
        filename: str = ...,
        data: Sequence[int] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> MeshFile: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> MeshFile: ...

class UVCoordinate(Message):
    """``visualization_msgs/msg/UVCoordinate``."""

    u: float
    v: float
    def __init__(
        self,
        *,
        u: float = ...,
        v: float = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> UVCoordinate: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> UVCoordinate: ...

class _GetInteractiveMarkers_Request(Message):
    """``visualization_msgs/srv/GetInteractiveMarkers_Request``."""

    def __init__(self) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _GetInteractiveMarkers_Request: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _GetInteractiveMarkers_Request: ...

class _GetInteractiveMarkers_Response(Message):
    """``visualization_msgs/srv/GetInteractiveMarkers_Response``."""

    sequence_number: int
    markers: list[InteractiveMarker]
    def __init__(
        self,
        *,
        sequence_number: int = ...,
        markers: Sequence[InteractiveMarker | dict[str, Any]] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _GetInteractiveMarkers_Response: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _GetInteractiveMarkers_Response: ...

class _GetInteractiveMarkers:
    """The parts of ``visualization_msgs/srv/GetInteractiveMarkers``."""

    Request: type[_GetInteractiveMarkers_Request]
    Response: type[_GetInteractiveMarkers_Response]

GetInteractiveMarkers: _GetInteractiveMarkers

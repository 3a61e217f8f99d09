"""Message types of `nav_msgs`: written by `python -m nerve.msg stubs`, for editors."""

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from nerve.msg import Message, builtin_interfaces, geometry_msgs, std_msgs

class Goals(Message):
    """``nav_msgs/msg/Goals``."""

    header: std_msgs.Header
    goals: list[geometry_msgs.PoseStamped]
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        goals: Sequence[geometry_msgs.PoseStamped | dict[str, Any]] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Goals: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Goals: ...

class GridCells(Message):
    """``nav_msgs/msg/GridCells``."""

    header: std_msgs.Header
    cell_width: float
    cell_height: float
    cells: list[geometry_msgs.Point]
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        cell_width: float = ...,
        cell_height: float = ...,
        cells: Sequence[geometry_msgs.Point | dict[str, Any]] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> GridCells: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> GridCells: ...

class MapMetaData(Message):
    """``nav_msgs/msg/MapMetaData``."""

    map_load_time: builtin_interfaces.Time
    resolution: float
    width: int
    height: int
    origin: geometry_msgs.Pose
    def __init__(
        self,
        *,
        map_load_time: builtin_interfaces.Time | dict[str, Any] = ...,
        resolution: float = ...,
        width: int = ...,
        height: int = ...,
        origin: geometry_msgs.Pose | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> MapMetaData: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> MapMetaData: ...

class OccupancyGrid(Message):
    """``nav_msgs/msg/OccupancyGrid``."""

    header: std_msgs.Header
    info: MapMetaData
    data: np.ndarray | list[int]
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        info: MapMetaData | dict[str, Any] = ...,
        data: Sequence[int] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> OccupancyGrid: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> OccupancyGrid: ...

class Odometry(Message):
    """``nav_msgs/msg/Odometry``."""

    header: std_msgs.Header
    child_frame_id: str
    pose: geometry_msgs.PoseWithCovariance
    twist: geometry_msgs.TwistWithCovariance
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        child_frame_id: str = ...,
        pose: geometry_msgs.PoseWithCovariance | dict[str, Any] = ...,
        twist: geometry_msgs.TwistWithCovariance | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Odometry: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Odometry: ...

class Path(Message):
    """``nav_msgs/msg/Path``."""

    header: std_msgs.Header
    poses: list[geometry_msgs.PoseStamped]
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        poses: Sequence[geometry_msgs.PoseStamped | dict[str, Any]] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Path: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Path: ...

class _GetMap_Request(Message):
    """``nav_msgs/srv/GetMap_Request``."""

    def __init__(self) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _GetMap_Request: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _GetMap_Request: ...

class _GetMap_Response(Message):
    """``nav_msgs/srv/GetMap_Response``."""

    map: OccupancyGrid
    def __init__(
        self,
        *,
        map: OccupancyGrid | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _GetMap_Response: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _GetMap_Response: ...

class _GetMap:
    """The parts of ``nav_msgs/srv/GetMap``."""

    Request: type[_GetMap_Request]
    Response: type[_GetMap_Response]

GetMap: _GetMap

class _GetPlan_Request(Message):
    """``nav_msgs/srv/GetPlan_Request``."""

    start: geometry_msgs.PoseStamped
    goal: geometry_msgs.PoseStamped
    tolerance: float
    def __init__(
        self,
        *,
        start: geometry_msgs.PoseStamped | dict[str, Any] = ...,
        goal: geometry_msgs.PoseStamped | dict[str, Any] = ...,
        tolerance: float = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _GetPlan_Request: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _GetPlan_Request: ...

class _GetPlan_Response(Message):
    """``nav_msgs/srv/GetPlan_Response``."""

    plan: Path
    def __init__(
        self,
        *,
        plan: Path | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _GetPlan_Response: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _GetPlan_Response: ...

class _GetPlan:
    """The parts of ``nav_msgs/srv/GetPlan``."""

    Request: type[_GetPlan_Request]
    Response: type[_GetPlan_Response]

GetPlan: _GetPlan

class _LoadMap_Request(Message):
    """``nav_msgs/srv/LoadMap_Request``."""

    map_url: str
    def __init__(
        self,
        *,
        map_url: str = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _LoadMap_Request: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _LoadMap_Request: ...

class _LoadMap_Response(Message):
    """``nav_msgs/srv/LoadMap_Response``."""

    RESULT_SUCCESS: ClassVar[int]
    RESULT_MAP_DOES_NOT_EXIST: ClassVar[int]
    RESULT_INVALID_MAP_DATA: ClassVar[int]
    RESULT_INVALID_MAP_METADATA: ClassVar[int]
    RESULT_UNDEFINED_FAILURE: ClassVar[int]
    map: OccupancyGrid
    result: int
    def __init__(
        self,
        *,
        map: OccupancyGrid | dict[str, Any] = ...,
        result: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _LoadMap_Response: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _LoadMap_Response: ...

class _LoadMap:
    """The parts of ``nav_msgs/srv/LoadMap``."""

    Request: type[_LoadMap_Request]
    Response: type[_LoadMap_Response]

LoadMap: _LoadMap

class _SetMap_Request(Message):
    """``nav_msgs/srv/SetMap_Request``."""

    map: OccupancyGrid
    initial_pose: geometry_msgs.PoseWithCovarianceStamped
    def __init__(
        self,
        *,
        map: OccupancyGrid | dict[str, Any] = ...,
        initial_pose: geometry_msgs.PoseWithCovarianceStamped | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _SetMap_Request: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _SetMap_Request: ...

class _SetMap_Response(Message):
    """``nav_msgs/srv/SetMap_Response``."""

    success: bool
    def __init__(
        self,
        *,
        success: bool = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _SetMap_Response: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _SetMap_Response: ...

class _SetMap:
    """The parts of ``nav_msgs/srv/SetMap``."""

    Request: type[_SetMap_Request]
    Response: type[_SetMap_Response]

SetMap: _SetMap

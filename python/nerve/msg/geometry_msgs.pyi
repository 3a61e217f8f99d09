"""Message types of `geometry_msgs`: written by `python -m nerve.msg stubs`, for editors."""

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from nerve.msg import Message, std_msgs

class Accel(Message):
    """``geometry_msgs/msg/Accel``."""

    linear: Vector3
    angular: Vector3
    def __init__(
        self,
        *,
        linear: Vector3 | dict[str, Any] = ...,
        angular: Vector3 | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Accel: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Accel: ...

class AccelStamped(Message):
    """``geometry_msgs/msg/AccelStamped``."""

    header: std_msgs.Header
    accel: Accel
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        accel: Accel | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> AccelStamped: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> AccelStamped: ...

class AccelWithCovariance(Message):
    """``geometry_msgs/msg/AccelWithCovariance``."""

    accel: Accel
    covariance: np.ndarray | list[float]
    def __init__(
        self,
        *,
        accel: Accel | dict[str, Any] = ...,
        covariance: Sequence[float] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> AccelWithCovariance: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> AccelWithCovariance: ...

class AccelWithCovarianceStamped(Message):
    """``geometry_msgs/msg/AccelWithCovarianceStamped``."""

    header: std_msgs.Header
    accel: AccelWithCovariance
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        accel: AccelWithCovariance | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> AccelWithCovarianceStamped: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> AccelWithCovarianceStamped: ...

class Inertia(Message):
    """``geometry_msgs/msg/Inertia``."""

    m: float
    com: Vector3
    ixx: float
    ixy: float
    ixz: float
    iyy: float
    iyz: float
    izz: float
    def __init__(
        self,
        *,
        m: float = ...,
        com: Vector3 | dict[str, Any] = ...,
        ixx: float = ...,
        ixy: float = ...,
        ixz: float = ...,
        iyy: float = ...,
        iyz: float = ...,
        izz: float = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Inertia: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Inertia: ...

class InertiaStamped(Message):
    """``geometry_msgs/msg/InertiaStamped``."""

    header: std_msgs.Header
    inertia: Inertia
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        inertia: Inertia | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> InertiaStamped: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> InertiaStamped: ...

class Point(Message):
    """``geometry_msgs/msg/Point``."""

    x: float
    y: float
    z: float
    def __init__(
        self,
        *,
        x: float = ...,
        y: float = ...,
        z: float = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Point: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Point: ...

class Point32(Message):
    """``geometry_msgs/msg/Point32``."""

    x: float
    y: float
    z: float
    def __init__(
        self,
        *,
        x: float = ...,
        y: float = ...,
        z: float = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Point32: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Point32: ...

class PointStamped(Message):
    """``geometry_msgs/msg/PointStamped``."""

    header: std_msgs.Header
    point: Point
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        point: Point | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> PointStamped: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> PointStamped: ...

class Polygon(Message):
    """``geometry_msgs/msg/Polygon``."""

    points: list[Point32]
    def __init__(
        self,
        *,
        points: Sequence[Point32 | dict[str, Any]] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Polygon: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Polygon: ...

class PolygonInstance(Message):
    """``geometry_msgs/msg/PolygonInstance``."""

    polygon: Polygon
    id: int
    def __init__(
        self,
        *,
        polygon: Polygon | dict[str, Any] = ...,
        id: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> PolygonInstance: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> PolygonInstance: ...

class PolygonInstanceStamped(Message):
    """``geometry_msgs/msg/PolygonInstanceStamped``."""

    header: std_msgs.Header
    polygon: PolygonInstance
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        polygon: PolygonInstance | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> PolygonInstanceStamped: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> PolygonInstanceStamped: ...

class PolygonStamped(Message):
    """``geometry_msgs/msg/PolygonStamped``."""

    header: std_msgs.Header
    polygon: Polygon
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        polygon: Polygon | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> PolygonStamped: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> PolygonStamped: ...

class Pose(Message):
    """``geometry_msgs/msg/Pose``."""

    position: Point
    orientation: Quaternion
    def __init__(
        self,
        *,
        position: Point | dict[str, Any] = ...,
        orientation: Quaternion | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Pose: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Pose: ...

class Pose2D(Message):
    """``geometry_msgs/msg/Pose2D``."""

    x: float
    y: float
    theta: float
    def __init__(
        self,
        *,
        x: float = ...,
        y: float = ...,
        theta: float = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Pose2D: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Pose2D: ...

class PoseArray(Message):
    """``geometry_msgs/msg/PoseArray``."""

    header: std_msgs.Header
    poses: list[Pose]
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        poses: Sequence[Pose | dict[str, Any]] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> PoseArray: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> PoseArray: ...

class PoseStamped(Message):
    """``geometry_msgs/msg/PoseStamped``."""

    header: std_msgs.Header
    pose: Pose
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        pose: Pose | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> PoseStamped: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> PoseStamped: ...

class PoseWithCovariance(Message):
    """``geometry_msgs/msg/PoseWithCovariance``."""

    pose: Pose
    covariance: np.ndarray | list[float]
    def __init__(
        self,
        *,
        pose: Pose | dict[str, Any] = ...,
        covariance: Sequence[float] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> PoseWithCovariance: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> PoseWithCovariance: ...

class PoseWithCovarianceStamped(Message):
    """``geometry_msgs/msg/PoseWithCovarianceStamped``."""

    header: std_msgs.Header
    pose: PoseWithCovariance
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        pose: PoseWithCovariance | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> PoseWithCovarianceStamped: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> PoseWithCovarianceStamped: ...

class Quaternion(Message):
    """``geometry_msgs/msg/Quaternion``."""

    x: float
    y: float
    z: float
    w: float
    def __init__(
        self,
        *,
        x: float = ...,
        y: float = ...,
        z: float = ...,
        w: float = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Quaternion: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Quaternion: ...

class QuaternionStamped(Message):
    """``geometry_msgs/msg/QuaternionStamped``."""

    header: std_msgs.Header
    quaternion: Quaternion
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        quaternion: Quaternion | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> QuaternionStamped: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> QuaternionStamped: ...

class Transform(Message):
    """``geometry_msgs/msg/Transform``."""

    translation: Vector3
    rotation: Quaternion
    def __init__(
        self,
        *,
        translation: Vector3 | dict[str, Any] = ...,
        rotation: Quaternion | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Transform: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Transform: ...

class TransformStamped(Message):
    """``geometry_msgs/msg/TransformStamped``."""

    header: std_msgs.Header
    child_frame_id: str
    transform: Transform
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        child_frame_id: str = ...,
        transform: Transform | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> TransformStamped: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> TransformStamped: ...

class Twist(Message):
    """``geometry_msgs/msg/Twist``."""

    linear: Vector3
    angular: Vector3
    def __init__(
        self,
        *,
        linear: Vector3 | dict[str, Any] = ...,
        angular: Vector3 | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Twist: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Twist: ...

class TwistStamped(Message):
    """``geometry_msgs/msg/TwistStamped``."""

    header: std_msgs.Header
    twist: Twist
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        twist: Twist | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> TwistStamped: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> TwistStamped: ...

class TwistWithCovariance(Message):
    """``geometry_msgs/msg/TwistWithCovariance``."""

    twist: Twist
    covariance: np.ndarray | list[float]
    def __init__(
        self,
        *,
        twist: Twist | dict[str, Any] = ...,
        covariance: Sequence[float] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> TwistWithCovariance: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> TwistWithCovariance: ...

class TwistWithCovarianceStamped(Message):
    """``geometry_msgs/msg/TwistWithCovarianceStamped``."""

    header: std_msgs.Header
    twist: TwistWithCovariance
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        twist: TwistWithCovariance | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> TwistWithCovarianceStamped: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> TwistWithCovarianceStamped: ...

class Vector3(Message):
    """``geometry_msgs/msg/Vector3``."""

    x: float
    y: float
    z: float
    def __init__(
        self,
        *,
        x: float = ...,
        y: float = ...,
        z: float = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Vector3: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Vector3: ...

class Vector3Stamped(Message):
    """``geometry_msgs/msg/Vector3Stamped``."""

    header: std_msgs.Header
    vector: Vector3
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        vector: Vector3 | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Vector3Stamped: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Vector3Stamped: ...

class VelocityStamped(Message):
    """``geometry_msgs/msg/VelocityStamped``."""

    header: std_msgs.Header
    body_frame_id: str
    reference_frame_id: str
    velocity: Twist
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        body_frame_id: str = ...,
        reference_frame_id: str = ...,
        velocity: Twist | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> VelocityStamped: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> VelocityStamped: ...

class Wrench(Message):
    """``geometry_msgs/msg/Wrench``."""

    force: Vector3
    torque: Vector3
    def __init__(
        self,
        *,
        force: Vector3 | dict[str, Any] = ...,
        torque: Vector3 | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Wrench: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Wrench: ...

class WrenchStamped(Message):
    """``geometry_msgs/msg/WrenchStamped``."""

    header: std_msgs.Header
    wrench: Wrench
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        wrench: Wrench | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> WrenchStamped: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> WrenchStamped: ...

"""Message types of `sensor_msgs`: written by `python -m nerve.msg stubs`, for editors."""

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from nerve.msg import Message, builtin_interfaces, geometry_msgs, std_msgs

class BatteryState(Message):
    """``sensor_msgs/msg/BatteryState``."""

    POWER_SUPPLY_STATUS_UNKNOWN: ClassVar[int]
    POWER_SUPPLY_STATUS_CHARGING: ClassVar[int]
    POWER_SUPPLY_STATUS_DISCHARGING: ClassVar[int]
    POWER_SUPPLY_STATUS_NOT_CHARGING: ClassVar[int]
    POWER_SUPPLY_STATUS_FULL: ClassVar[int]
    POWER_SUPPLY_HEALTH_UNKNOWN: ClassVar[int]
    POWER_SUPPLY_HEALTH_GOOD: ClassVar[int]
    POWER_SUPPLY_HEALTH_OVERHEAT: ClassVar[int]
    POWER_SUPPLY_HEALTH_DEAD: ClassVar[int]
    POWER_SUPPLY_HEALTH_OVERVOLTAGE: ClassVar[int]
    POWER_SUPPLY_HEALTH_UNSPEC_FAILURE: ClassVar[int]
    POWER_SUPPLY_HEALTH_COLD: ClassVar[int]
    POWER_SUPPLY_HEALTH_WATCHDOG_TIMER_EXPIRE: ClassVar[int]
    POWER_SUPPLY_HEALTH_SAFETY_TIMER_EXPIRE: ClassVar[int]
    POWER_SUPPLY_TECHNOLOGY_UNKNOWN: ClassVar[int]
    POWER_SUPPLY_TECHNOLOGY_NIMH: ClassVar[int]
    POWER_SUPPLY_TECHNOLOGY_LION: ClassVar[int]
    POWER_SUPPLY_TECHNOLOGY_LIPO: ClassVar[int]
    POWER_SUPPLY_TECHNOLOGY_LIFE: ClassVar[int]
    POWER_SUPPLY_TECHNOLOGY_NICD: ClassVar[int]
    POWER_SUPPLY_TECHNOLOGY_LIMN: ClassVar[int]
    POWER_SUPPLY_TECHNOLOGY_TERNARY: ClassVar[int]
    POWER_SUPPLY_TECHNOLOGY_VRLA: ClassVar[int]
    header: std_msgs.Header
    voltage: float
    temperature: float
    current: float
    charge: float
    capacity: float
    design_capacity: float
    percentage: float
    power_supply_status: int
    power_supply_health: int
    power_supply_technology: int
    present: bool
    cell_voltage: np.ndarray | list[float]
    cell_temperature: np.ndarray | list[float]
    location: str
    serial_number: str
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        voltage: float = ...,
        temperature: float = ...,
        current: float = ...,
        charge: float = ...,
        capacity: float = ...,
        design_capacity: float = ...,
        percentage: float = ...,
        power_supply_status: int = ...,
        power_supply_health: int = ...,
        power_supply_technology: int = ...,
        present: bool = ...,
        cell_voltage: Sequence[float] | np.ndarray = ...,
        cell_temperature: Sequence[float] | np.ndarray = ...,
        location: str = ...,
        serial_number: str = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> BatteryState: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> BatteryState: ...

class CameraInfo(Message):
    """``sensor_msgs/msg/CameraInfo``."""

    header: std_msgs.Header
    height: int
    width: int
    distortion_model: str
    d: np.ndarray | list[float]
    k: np.ndarray | list[float]
    r: np.ndarray | list[float]
    p: np.ndarray | list[float]
    binning_x: int
    binning_y: int
    roi: RegionOfInterest
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        height: int = ...,
        width: int = ...,
        distortion_model: str = ...,
        d: Sequence[float] | np.ndarray = ...,
        k: Sequence[float] | np.ndarray = ...,
        r: Sequence[float] | np.ndarray = ...,
        p: Sequence[float] | np.ndarray = ...,
        binning_x: int = ...,
        binning_y: int = ...,
        roi: RegionOfInterest | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> CameraInfo: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> CameraInfo: ...

class ChannelFloat32(Message):
    """``sensor_msgs/msg/ChannelFloat32``."""

    name: str
    values: np.ndarray | list[float]
    def __init__(
        self,
        *,
        name: str = ...,
        values: Sequence[float] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> ChannelFloat32: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> ChannelFloat32: ...

class CompressedImage(Message):
    """``sensor_msgs/msg/CompressedImage``."""

    header: std_msgs.Header
    format: str
    data: np.ndarray | list[int]
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        format: str = ...,
        data: Sequence[int] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> CompressedImage: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> CompressedImage: ...

class FluidPressure(Message):
    """``sensor_msgs/msg/FluidPressure``."""

    header: std_msgs.Header
    fluid_pressure: float
    variance: float
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        fluid_pressure: float = ...,
        variance: float = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> FluidPressure: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> FluidPressure: ...

class Illuminance(Message):
    """``sensor_msgs/msg/Illuminance``."""

    header: std_msgs.Header
    illuminance: float
    variance: float
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        illuminance: float = ...,
        variance: float = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Illuminance: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Illuminance: ...

class Image(Message):
    """``sensor_msgs/msg/Image``."""

    header: std_msgs.Header
    height: int
    width: int
    encoding: str
    is_bigendian: int
    step: int
    data: np.ndarray | list[int]
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        height: int = ...,
        width: int = ...,
        encoding: str = ...,
        is_bigendian: int = ...,
        step: int = ...,
        data: Sequence[int] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Image: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Image: ...

class Imu(Message):
    """``sensor_msgs/msg/Imu``."""

    header: std_msgs.Header
    orientation: geometry_msgs.Quaternion
    orientation_covariance: np.ndarray | list[float]
    angular_velocity: geometry_msgs.Vector3
    angular_velocity_covariance: np.ndarray | list[float]
    linear_acceleration: geometry_msgs.Vector3
    linear_acceleration_covariance: np.ndarray | list[float]
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        orientation: geometry_msgs.Quaternion | dict[str, Any] = ...,
        orientation_covariance: Sequence[float] | np.ndarray = ...,
        angular_velocity: geometry_msgs.Vector3 | dict[str, Any] = ...,
        angular_velocity_covariance: Sequence[float] | np.ndarray = ...,
        linear_acceleration: geometry_msgs.Vector3 | dict[str, Any] = ...,
        linear_acceleration_covariance: Sequence[float] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Imu: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Imu: ...

class JointState(Message):
    """``sensor_msgs/msg/JointState``."""

    header: std_msgs.Header
    name: list[str]
    position: np.ndarray | list[float]
    velocity: np.ndarray | list[float]
    effort: np.ndarray | list[float]
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        name: Sequence[str] = ...,
        position: Sequence[float] | np.ndarray = ...,
        velocity: Sequence[float] | np.ndarray = ...,
        effort: Sequence[float] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> JointState: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> JointState: ...

class Joy(Message):
    """``sensor_msgs/msg/Joy``."""

    header: std_msgs.Header
    axes: np.ndarray | list[float]
    buttons: np.ndarray | list[int]
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        axes: Sequence[float] | np.ndarray = ...,
        buttons: Sequence[int] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Joy: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Joy: ...

class JoyFeedback(Message):
    """``sensor_msgs/msg/JoyFeedback``."""

    TYPE_LED: ClassVar[int]
    TYPE_RUMBLE: ClassVar[int]
    TYPE_BUZZER: ClassVar[int]
    type: int
    id: int
    intensity: float
    def __init__(
        self,
        *,
        type: int = ...,
        id: int = ...,
        intensity: float = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> JoyFeedback: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> JoyFeedback: ...

class JoyFeedbackArray(Message):
    """``sensor_msgs/msg/JoyFeedbackArray``."""

    array: list[JoyFeedback]
    def __init__(
        self,
        *,
        array: Sequence[JoyFeedback | dict[str, Any]] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> JoyFeedbackArray: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> JoyFeedbackArray: ...

class LaserEcho(Message):
    """``sensor_msgs/msg/LaserEcho``."""

    echoes: np.ndarray | list[float]
    def __init__(
        self,
        *,
        echoes: Sequence[float] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> LaserEcho: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> LaserEcho: ...

class LaserScan(Message):
    """``sensor_msgs/msg/LaserScan``."""

    header: std_msgs.Header
    angle_min: float
    angle_max: float
    angle_increment: float
    time_increment: float
    scan_time: float
    range_min: float
    range_max: float
    ranges: np.ndarray | list[float]
    intensities: np.ndarray | list[float]
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        angle_min: float = ...,
        angle_max: float = ...,
        angle_increment: float = ...,
        time_increment: float = ...,
        scan_time: float = ...,
        range_min: float = ...,
        range_max: float = ...,
        ranges: Sequence[float] | np.ndarray = ...,
        intensities: Sequence[float] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> LaserScan: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> LaserScan: ...

class MagneticField(Message):
    """``sensor_msgs/msg/MagneticField``."""

    header: std_msgs.Header
    magnetic_field: geometry_msgs.Vector3
    magnetic_field_covariance: np.ndarray | list[float]
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        magnetic_field: geometry_msgs.Vector3 | dict[str, Any] = ...,
        magnetic_field_covariance: Sequence[float] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> MagneticField: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> MagneticField: ...

class MultiDOFJointState(Message):
    """``sensor_msgs/msg/MultiDOFJointState``."""

    header: std_msgs.Header
    joint_names: list[str]
    transforms: list[geometry_msgs.Transform]
    twist: list[geometry_msgs.Twist]
    wrench: list[geometry_msgs.Wrench]
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        joint_names: Sequence[str] = ...,
        transforms: Sequence[geometry_msgs.Transform | dict[str, Any]] = ...,
        twist: Sequence[geometry_msgs.Twist | dict[str, Any]] = ...,
        wrench: Sequence[geometry_msgs.Wrench | dict[str, Any]] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> MultiDOFJointState: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> MultiDOFJointState: ...

class MultiEchoLaserScan(Message):
    """``sensor_msgs/msg/MultiEchoLaserScan``."""

    header: std_msgs.Header
    angle_min: float
    angle_max: float
    angle_increment: float
    time_increment: float
    scan_time: float
    range_min: float
    range_max: float
    ranges: list[LaserEcho]
    intensities: list[LaserEcho]
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        angle_min: float = ...,
        angle_max: float = ...,
        angle_increment: float = ...,
        time_increment: float = ...,
        scan_time: float = ...,
        range_min: float = ...,
        range_max: float = ...,
        ranges: Sequence[LaserEcho | dict[str, Any]] = ...,
        intensities: Sequence[LaserEcho | dict[str, Any]] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> MultiEchoLaserScan: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> MultiEchoLaserScan: ...

class NavSatFix(Message):
    """``sensor_msgs/msg/NavSatFix``."""

    COVARIANCE_TYPE_UNKNOWN: ClassVar[int]
    COVARIANCE_TYPE_APPROXIMATED: ClassVar[int]
    COVARIANCE_TYPE_DIAGONAL_KNOWN: ClassVar[int]
    COVARIANCE_TYPE_KNOWN: ClassVar[int]
    header: std_msgs.Header
    status: NavSatStatus
    latitude: float
    longitude: float
    altitude: float
    position_covariance: np.ndarray | list[float]
    position_covariance_type: int
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        status: NavSatStatus | dict[str, Any] = ...,
        latitude: float = ...,
        longitude: float = ...,
        altitude: float = ...,
        position_covariance: Sequence[float] | np.ndarray = ...,
        position_covariance_type: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> NavSatFix: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> NavSatFix: ...

class NavSatStatus(Message):
    """``sensor_msgs/msg/NavSatStatus``."""

    STATUS_UNKNOWN: ClassVar[int]
    STATUS_NO_FIX: ClassVar[int]
    STATUS_FIX: ClassVar[int]
    STATUS_SBAS_FIX: ClassVar[int]
    STATUS_GBAS_FIX: ClassVar[int]
    SERVICE_UNKNOWN: ClassVar[int]
    SERVICE_GPS: ClassVar[int]
    SERVICE_GLONASS: ClassVar[int]
    SERVICE_COMPASS: ClassVar[int]
    SERVICE_GALILEO: ClassVar[int]
    status: int
    service: int
    def __init__(
        self,
        *,
        status: int = ...,
        service: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> NavSatStatus: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> NavSatStatus: ...

class PointCloud(Message):
    """``sensor_msgs/msg/PointCloud``."""

    header: std_msgs.Header
    points: list[geometry_msgs.Point32]
    channels: list[ChannelFloat32]
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        points: Sequence[geometry_msgs.Point32 | dict[str, Any]] = ...,
        channels: Sequence[ChannelFloat32 | dict[str, Any]] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> PointCloud: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> PointCloud: ...

class PointCloud2(Message):
    """``sensor_msgs/msg/PointCloud2``."""

    header: std_msgs.Header
    height: int
    width: int
    fields: list[PointField]
    is_bigendian: bool
    point_step: int
    row_step: int
    data: np.ndarray | list[int]
    is_dense: bool
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        height: int = ...,
        width: int = ...,
        fields: Sequence[PointField | dict[str, Any]] = ...,
        is_bigendian: bool = ...,
        point_step: int = ...,
        row_step: int = ...,
        data: Sequence[int] | np.ndarray = ...,
        is_dense: bool = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> PointCloud2: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> PointCloud2: ...

class PointField(Message):
    """``sensor_msgs/msg/PointField``."""

    INT8: ClassVar[int]
    UINT8: ClassVar[int]
    INT16: ClassVar[int]
    UINT16: ClassVar[int]
    INT32: ClassVar[int]
    UINT32: ClassVar[int]
    FLOAT32: ClassVar[int]
    FLOAT64: ClassVar[int]
    name: str
    offset: int
    datatype: int
    count: int
    def __init__(
        self,
        *,
        name: str = ...,
        offset: int = ...,
        datatype: int = ...,
        count: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> PointField: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> PointField: ...

class Range(Message):
    """``sensor_msgs/msg/Range``."""

    ULTRASOUND: ClassVar[int]
    INFRARED: ClassVar[int]
    header: std_msgs.Header
    radiation_type: int
    field_of_view: float
    min_range: float
    max_range: float
    range: float
    variance: float
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        radiation_type: int = ...,
        field_of_view: float = ...,
        min_range: float = ...,
        max_range: float = ...,
        range: float = ...,
        variance: float = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Range: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Range: ...

class RegionOfInterest(Message):
    """``sensor_msgs/msg/RegionOfInterest``."""

    x_offset: int
    y_offset: int
    height: int
    width: int
    do_rectify: bool
    def __init__(
        self,
        *,
        x_offset: int = ...,
        y_offset: int = ...,
        height: int = ...,
        width: int = ...,
        do_rectify: bool = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> RegionOfInterest: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> RegionOfInterest: ...

class RelativeHumidity(Message):
    """``sensor_msgs/msg/RelativeHumidity``."""

    header: std_msgs.Header
    relative_humidity: float
    variance: float
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        relative_humidity: float = ...,
        variance: float = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> RelativeHumidity: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> RelativeHumidity: ...

class Temperature(Message):
    """``sensor_msgs/msg/Temperature``."""

    header: std_msgs.Header
    temperature: float
    variance: float
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        temperature: float = ...,
        variance: float = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Temperature: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Temperature: ...

class TimeReference(Message):
    """``sensor_msgs/msg/TimeReference``."""

    header: std_msgs.Header
    time_ref: builtin_interfaces.Time
    source: str
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        time_ref: builtin_interfaces.Time | dict[str, Any] = ...,
        source: str = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> TimeReference: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> TimeReference: ...

class _SetCameraInfo_Request(Message):
    """``sensor_msgs/srv/SetCameraInfo_Request``."""

    camera_info: CameraInfo
    def __init__(
        self,
        *,
        camera_info: CameraInfo | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _SetCameraInfo_Request: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _SetCameraInfo_Request: ...

class _SetCameraInfo_Response(Message):
    """``sensor_msgs/srv/SetCameraInfo_Response``."""

    success: bool
    status_message: str
    def __init__(
        self,
        *,
        success: bool = ...,
        status_message: str = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _SetCameraInfo_Response: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _SetCameraInfo_Response: ...

class _SetCameraInfo:
    """The parts of ``sensor_msgs/srv/SetCameraInfo``."""

    Request: type[_SetCameraInfo_Request]
    Response: type[_SetCameraInfo_Response]

SetCameraInfo: _SetCameraInfo

"""Message types of `tf2_msgs`: written by `python -m nerve.msg stubs`, for editors."""

from collections.abc import Sequence
from typing import Any, ClassVar

import pyarrow as pa

from nerve.msg import Message, builtin_interfaces, geometry_msgs

class _LookupTransform_Goal(Message):
    """``tf2_msgs/action/LookupTransform_Goal``."""

    target_frame: str
    source_frame: str
    source_time: builtin_interfaces.Time
    timeout: builtin_interfaces.Duration
    target_time: builtin_interfaces.Time
    fixed_frame: str
    advanced: bool
    def __init__(
        self,
        *,
        target_frame: str = ...,
        source_frame: str = ...,
        source_time: builtin_interfaces.Time | dict[str, Any] = ...,
        timeout: builtin_interfaces.Duration | dict[str, Any] = ...,
        target_time: builtin_interfaces.Time | dict[str, Any] = ...,
        fixed_frame: str = ...,
        advanced: bool = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _LookupTransform_Goal: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _LookupTransform_Goal: ...

class _LookupTransform_Result(Message):
    """``tf2_msgs/action/LookupTransform_Result``."""

    transform: geometry_msgs.TransformStamped
    error: TF2Error
    def __init__(
        self,
        *,
        transform: geometry_msgs.TransformStamped | dict[str, Any] = ...,
        error: TF2Error | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _LookupTransform_Result: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _LookupTransform_Result: ...

class _LookupTransform_Feedback(Message):
    """``tf2_msgs/action/LookupTransform_Feedback``."""

    def __init__(self) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _LookupTransform_Feedback: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _LookupTransform_Feedback: ...

class _LookupTransform:
    """The parts of ``tf2_msgs/action/LookupTransform``."""

    Goal: type[_LookupTransform_Goal]
    Result: type[_LookupTransform_Result]
    Feedback: type[_LookupTransform_Feedback]

LookupTransform: _LookupTransform

class TF2Error(Message):
    """``tf2_msgs/msg/TF2Error``."""

    NO_ERROR: ClassVar[int]
    LOOKUP_ERROR: ClassVar[int]
    CONNECTIVITY_ERROR: ClassVar[int]
    EXTRAPOLATION_ERROR: ClassVar[int]
    INVALID_ARGUMENT_ERROR: ClassVar[int]
    TIMEOUT_ERROR: ClassVar[int]
    TRANSFORM_ERROR: ClassVar[int]
    error: int
    error_string: str
    def __init__(
        self,
        *,
        error: int = ...,
        error_string: str = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> TF2Error: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> TF2Error: ...

class TFMessage(Message):
    """``tf2_msgs/msg/TFMessage``."""

    transforms: list[geometry_msgs.TransformStamped]
    def __init__(
        self,
        *,
        transforms: Sequence[geometry_msgs.TransformStamped | dict[str, Any]] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> TFMessage: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> TFMessage: ...

class _FrameGraph_Request(Message):
    """``tf2_msgs/srv/FrameGraph_Request``."""

    def __init__(self) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _FrameGraph_Request: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _FrameGraph_Request: ...

class _FrameGraph_Response(Message):
    """``tf2_msgs/srv/FrameGraph_Response``."""

    frame_yaml: str
    def __init__(
        self,
        *,
        frame_yaml: str = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _FrameGraph_Response: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _FrameGraph_Response: ...

class _FrameGraph:
    """The parts of ``tf2_msgs/srv/FrameGraph``."""

    Request: type[_FrameGraph_Request]
    Response: type[_FrameGraph_Response]

FrameGraph: _FrameGraph

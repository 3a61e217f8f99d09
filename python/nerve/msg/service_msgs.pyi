"""Message types of `service_msgs`: written by `python -m nerve.msg stubs`, for editors."""

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from nerve.msg import Message, builtin_interfaces

class ServiceEventInfo(Message):
    """``service_msgs/msg/ServiceEventInfo``."""

    REQUEST_SENT: ClassVar[int]
    REQUEST_RECEIVED: ClassVar[int]
    RESPONSE_SENT: ClassVar[int]
    RESPONSE_RECEIVED: ClassVar[int]
    event_type: int
    stamp: builtin_interfaces.Time
    client_gid: np.ndarray | list[int]
    sequence_number: int
    def __init__(
        self,
        *,
        event_type: int = ...,
        stamp: builtin_interfaces.Time | dict[str, Any] = ...,
        client_gid: Sequence[int] | np.ndarray = ...,
        sequence_number: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> ServiceEventInfo: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> ServiceEventInfo: ...

"""Message types of `builtin_interfaces`: written by `python -m nerve.msg stubs`, for editors."""

import pyarrow as pa

from nerve.msg import Message

class Duration(Message):
    """``builtin_interfaces/msg/Duration``."""

    sec: int
    nanosec: int
    def __init__(
        self,
        *,
        sec: int = ...,
        nanosec: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Duration: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Duration: ...

class Time(Message):
    """``builtin_interfaces/msg/Time``."""

    sec: int
    nanosec: int
    def __init__(
        self,
        *,
        sec: int = ...,
        nanosec: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Time: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Time: ...

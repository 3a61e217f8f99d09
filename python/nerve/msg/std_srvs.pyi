"""Message types of `std_srvs`: written by `python -m nerve.msg stubs`, for editors."""

import pyarrow as pa

from nerve.msg import Message

class _Empty_Request(Message):
    """``std_srvs/srv/Empty_Request``."""

    def __init__(self) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _Empty_Request: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _Empty_Request: ...

class _Empty_Response(Message):
    """``std_srvs/srv/Empty_Response``."""

    def __init__(self) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _Empty_Response: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _Empty_Response: ...

class _Empty:
    """The parts of ``std_srvs/srv/Empty``."""

    Request: type[_Empty_Request]
    Response: type[_Empty_Response]

Empty: _Empty

class _SetBool_Request(Message):
    """``std_srvs/srv/SetBool_Request``."""

    data: bool
    def __init__(
        self,
        *,
        data: bool = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _SetBool_Request: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _SetBool_Request: ...

class _SetBool_Response(Message):
    """``std_srvs/srv/SetBool_Response``."""

    success: bool
    message: str
    def __init__(
        self,
        *,
        success: bool = ...,
        message: str = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _SetBool_Response: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _SetBool_Response: ...

class _SetBool:
    """The parts of ``std_srvs/srv/SetBool``."""

    Request: type[_SetBool_Request]
    Response: type[_SetBool_Response]

SetBool: _SetBool

class _Trigger_Request(Message):
    """``std_srvs/srv/Trigger_Request``."""

    def __init__(self) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _Trigger_Request: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _Trigger_Request: ...

class _Trigger_Response(Message):
    """``std_srvs/srv/Trigger_Response``."""

    success: bool
    message: str
    def __init__(
        self,
        *,
        success: bool = ...,
        message: str = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _Trigger_Response: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _Trigger_Response: ...

class _Trigger:
    """The parts of ``std_srvs/srv/Trigger``."""

    Request: type[_Trigger_Request]
    Response: type[_Trigger_Response]

Trigger: _Trigger

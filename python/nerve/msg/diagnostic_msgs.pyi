"""Message types of `diagnostic_msgs`: written by `python -m nerve.msg stubs`, for editors."""

from collections.abc import Sequence
from typing import Any, ClassVar

import pyarrow as pa

from nerve.msg import Message, std_msgs

class DiagnosticArray(Message):
    """``diagnostic_msgs/msg/DiagnosticArray``."""

    header: std_msgs.Header
    status: list[DiagnosticStatus]
    def __init__(
        self,
        *,
        header: std_msgs.Header | dict[str, Any] = ...,
        status: Sequence[DiagnosticStatus | dict[str, Any]] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> DiagnosticArray: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> DiagnosticArray: ...

class DiagnosticStatus(Message):
    """``diagnostic_msgs/msg/DiagnosticStatus``."""

    OK: ClassVar[int]
    WARN: ClassVar[int]
    ERROR: ClassVar[int]
    STALE: ClassVar[int]
    level: int
    name: str
    message: str
    hardware_id: str
    values: list[KeyValue]
    def __init__(
        self,
        *,
        level: int = ...,
        name: str = ...,
        message: str = ...,
        hardware_id: str = ...,
        values: Sequence[KeyValue | dict[str, Any]] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> DiagnosticStatus: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> DiagnosticStatus: ...

class KeyValue(Message):
    """``diagnostic_msgs/msg/KeyValue``."""

    key: str
    value: str
    def __init__(
        self,
        *,
        key: str = ...,
        value: str = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> KeyValue: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> KeyValue: ...

class _AddDiagnostics_Request(Message):
    """``diagnostic_msgs/srv/AddDiagnostics_Request``."""

    load_namespace: str
    def __init__(
        self,
        *,
        load_namespace: str = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _AddDiagnostics_Request: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _AddDiagnostics_Request: ...

class _AddDiagnostics_Response(Message):
    """``diagnostic_msgs/srv/AddDiagnostics_Response``."""

    success: bool
    message: str
    def __init__(
        self,
        *,
        success: bool = ...,
        message: str = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _AddDiagnostics_Response: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _AddDiagnostics_Response: ...

class _AddDiagnostics:
    """The parts of ``diagnostic_msgs/srv/AddDiagnostics``."""

    Request: type[_AddDiagnostics_Request]
    Response: type[_AddDiagnostics_Response]

AddDiagnostics: _AddDiagnostics

class _SelfTest_Request(Message):
    """``diagnostic_msgs/srv/SelfTest_Request``."""

    def __init__(self) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _SelfTest_Request: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _SelfTest_Request: ...

class _SelfTest_Response(Message):
    """``diagnostic_msgs/srv/SelfTest_Response``."""

    id: str
    passed: int
    status: list[DiagnosticStatus]
    def __init__(
        self,
        *,
        id: str = ...,
        passed: int = ...,
        status: Sequence[DiagnosticStatus | dict[str, Any]] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _SelfTest_Response: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _SelfTest_Response: ...

class _SelfTest:
    """The parts of ``diagnostic_msgs/srv/SelfTest``."""

    Request: type[_SelfTest_Request]
    Response: type[_SelfTest_Response]

SelfTest: _SelfTest

"""Message types of `std_msgs`: written by `python -m nerve.msg stubs`, for editors."""

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from nerve.msg import Message, builtin_interfaces

class Bool(Message):
    """``std_msgs/msg/Bool``."""

    data: bool
    def __init__(
        self,
        *,
        data: bool = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Bool: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Bool: ...

class Byte(Message):
    """``std_msgs/msg/Byte``."""

    data: int
    def __init__(
        self,
        *,
        data: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Byte: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Byte: ...

class ByteMultiArray(Message):
    """``std_msgs/msg/ByteMultiArray``."""

    layout: MultiArrayLayout
    data: np.ndarray | list[int]
    def __init__(
        self,
        *,
        layout: MultiArrayLayout | dict[str, Any] = ...,
        data: Sequence[int] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> ByteMultiArray: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> ByteMultiArray: ...

class Char(Message):
    """``std_msgs/msg/Char``."""

    data: int
    def __init__(
        self,
        *,
        data: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Char: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Char: ...

class ColorRGBA(Message):
    """``std_msgs/msg/ColorRGBA``."""

    r: float
    g: float
    b: float
    a: float
    def __init__(
        self,
        *,
        r: float = ...,
        g: float = ...,
        b: float = ...,
        a: float = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> ColorRGBA: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> ColorRGBA: ...

class Empty(Message):
    """``std_msgs/msg/Empty``."""

    def __init__(self) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Empty: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Empty: ...

class Float32(Message):
    """``std_msgs/msg/Float32``."""

    data: float
    def __init__(
        self,
        *,
        data: float = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Float32: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Float32: ...

class Float32MultiArray(Message):
    """``std_msgs/msg/Float32MultiArray``."""

    layout: MultiArrayLayout
    data: np.ndarray | list[float]
    def __init__(
        self,
        *,
        layout: MultiArrayLayout | dict[str, Any] = ...,
        data: Sequence[float] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Float32MultiArray: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Float32MultiArray: ...

class Float64(Message):
    """``std_msgs/msg/Float64``."""

    data: float
    def __init__(
        self,
        *,
        data: float = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Float64: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Float64: ...

class Float64MultiArray(Message):
    """``std_msgs/msg/Float64MultiArray``."""

    layout: MultiArrayLayout
    data: np.ndarray | list[float]
    def __init__(
        self,
        *,
        layout: MultiArrayLayout | dict[str, Any] = ...,
        data: Sequence[float] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Float64MultiArray: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Float64MultiArray: ...

class Header(Message):
    """``std_msgs/msg/Header``."""

    stamp: builtin_interfaces.Time
    frame_id: str
    def __init__(
        self,
        *,
        stamp: builtin_interfaces.Time | dict[str, Any] = ...,
        frame_id: str = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Header: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Header: ...

class Int16(Message):
    """``std_msgs/msg/Int16``."""

    data: int
    def __init__(
        self,
        *,
        data: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Int16: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Int16: ...

class Int16MultiArray(Message):
    """``std_msgs/msg/Int16MultiArray``."""

    layout: MultiArrayLayout
    data: np.ndarray | list[int]
    def __init__(
        self,
        *,
        layout: MultiArrayLayout | dict[str, Any] = ...,
        data: Sequence[int] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Int16MultiArray: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Int16MultiArray: ...

class Int32(Message):
    """``std_msgs/msg/Int32``."""

    data: int
    def __init__(
        self,
        *,
        data: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Int32: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Int32: ...

class Int32MultiArray(Message):
    """``std_msgs/msg/Int32MultiArray``."""

    layout: MultiArrayLayout
    data: np.ndarray | list[int]
    def __init__(
        self,
        *,
        layout: MultiArrayLayout | dict[str, Any] = ...,
        data: Sequence[int] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Int32MultiArray: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Int32MultiArray: ...

class Int64(Message):
    """``std_msgs/msg/Int64``."""

    data: int
    def __init__(
        self,
        *,
        data: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Int64: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Int64: ...

class Int64MultiArray(Message):
    """``std_msgs/msg/Int64MultiArray``."""

    layout: MultiArrayLayout
    data: np.ndarray | list[int]
    def __init__(
        self,
        *,
        layout: MultiArrayLayout | dict[str, Any] = ...,
        data: Sequence[int] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Int64MultiArray: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Int64MultiArray: ...

class Int8(Message):
    """``std_msgs/msg/Int8``."""

    data: int
    def __init__(
        self,
        *,
        data: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Int8: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Int8: ...

class Int8MultiArray(Message):
    """``std_msgs/msg/Int8MultiArray``."""

    layout: MultiArrayLayout
    data: np.ndarray | list[int]
    def __init__(
        self,
        *,
        layout: MultiArrayLayout | dict[str, Any] = ...,
        data: Sequence[int] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Int8MultiArray: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> Int8MultiArray: ...

class MultiArrayDimension(Message):
    """``std_msgs/msg/MultiArrayDimension``."""

    label: str
    size: int
    stride: int
    def __init__(
        self,
        *,
        label: str = ...,
        size: int = ...,
        stride: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> MultiArrayDimension: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> MultiArrayDimension: ...

class MultiArrayLayout(Message):
    """``std_msgs/msg/MultiArrayLayout``."""

    dim: list[MultiArrayDimension]
    data_offset: int
    def __init__(
        self,
        *,
        dim: Sequence[MultiArrayDimension | dict[str, Any]] = ...,
        data_offset: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> MultiArrayLayout: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> MultiArrayLayout: ...

class String(Message):
    """``std_msgs/msg/String``."""

    data: str
    def __init__(
        self,
        *,
        data: str = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> String: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> String: ...

class UInt16(Message):
    """``std_msgs/msg/UInt16``."""

    data: int
    def __init__(
        self,
        *,
        data: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> UInt16: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> UInt16: ...

class UInt16MultiArray(Message):
    """``std_msgs/msg/UInt16MultiArray``."""

    layout: MultiArrayLayout
    data: np.ndarray | list[int]
    def __init__(
        self,
        *,
        layout: MultiArrayLayout | dict[str, Any] = ...,
        data: Sequence[int] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> UInt16MultiArray: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> UInt16MultiArray: ...

class UInt32(Message):
    """``std_msgs/msg/UInt32``."""

    data: int
    def __init__(
        self,
        *,
        data: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> UInt32: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> UInt32: ...

class UInt32MultiArray(Message):
    """``std_msgs/msg/UInt32MultiArray``."""

    layout: MultiArrayLayout
    data: np.ndarray | list[int]
    def __init__(
        self,
        *,
        layout: MultiArrayLayout | dict[str, Any] = ...,
        data: Sequence[int] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> UInt32MultiArray: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> UInt32MultiArray: ...

class UInt64(Message):
    """``std_msgs/msg/UInt64``."""

    data: int
    def __init__(
        self,
        *,
        data: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> UInt64: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> UInt64: ...

class UInt64MultiArray(Message):
    """``std_msgs/msg/UInt64MultiArray``."""

    layout: MultiArrayLayout
    data: np.ndarray | list[int]
    def __init__(
        self,
        *,
        layout: MultiArrayLayout | dict[str, Any] = ...,
        data: Sequence[int] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> UInt64MultiArray: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> UInt64MultiArray: ...

class UInt8(Message):
    """``std_msgs/msg/UInt8``."""

    data: int
    def __init__(
        self,
        *,
        data: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> UInt8: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> UInt8: ...

class UInt8MultiArray(Message):
    """``std_msgs/msg/UInt8MultiArray``."""

    layout: MultiArrayLayout
    data: np.ndarray | list[int]
    def __init__(
        self,
        *,
        layout: MultiArrayLayout | dict[str, Any] = ...,
        data: Sequence[int] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> UInt8MultiArray: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> UInt8MultiArray: ...

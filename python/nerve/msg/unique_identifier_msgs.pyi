"""Message types of `unique_identifier_msgs`: written by `python -m nerve.msg stubs`, for editors."""

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from nerve.msg import Message

class UUID(Message):
    """``unique_identifier_msgs/msg/UUID``."""

    uuid: np.ndarray | list[int]
    def __init__(
        self,
        *,
        uuid: Sequence[int] | np.ndarray = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> UUID: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> UUID: ...

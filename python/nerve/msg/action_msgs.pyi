"""Message types of `action_msgs`: written by `python -m nerve.msg stubs`, for editors."""

from collections.abc import Sequence
from typing import Any, ClassVar

import pyarrow as pa

from nerve.msg import Message, builtin_interfaces, unique_identifier_msgs

class GoalInfo(Message):
    """``action_msgs/msg/GoalInfo``."""

    goal_id: unique_identifier_msgs.UUID
    stamp: builtin_interfaces.Time
    def __init__(
        self,
        *,
        goal_id: unique_identifier_msgs.UUID | dict[str, Any] = ...,
        stamp: builtin_interfaces.Time | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> GoalInfo: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> GoalInfo: ...

class GoalStatus(Message):
    """``action_msgs/msg/GoalStatus``."""

    STATUS_UNKNOWN: ClassVar[int]
    STATUS_ACCEPTED: ClassVar[int]
    STATUS_EXECUTING: ClassVar[int]
    STATUS_CANCELING: ClassVar[int]
    STATUS_SUCCEEDED: ClassVar[int]
    STATUS_CANCELED: ClassVar[int]
    STATUS_ABORTED: ClassVar[int]
    goal_info: GoalInfo
    status: int
    def __init__(
        self,
        *,
        goal_info: GoalInfo | dict[str, Any] = ...,
        status: int = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> GoalStatus: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> GoalStatus: ...

class GoalStatusArray(Message):
    """``action_msgs/msg/GoalStatusArray``."""

    status_list: list[GoalStatus]
    def __init__(
        self,
        *,
        status_list: Sequence[GoalStatus | dict[str, Any]] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> GoalStatusArray: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> GoalStatusArray: ...

class _CancelGoal_Request(Message):
    """``action_msgs/srv/CancelGoal_Request``."""

    goal_info: GoalInfo
    def __init__(
        self,
        *,
        goal_info: GoalInfo | dict[str, Any] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _CancelGoal_Request: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _CancelGoal_Request: ...

class _CancelGoal_Response(Message):
    """``action_msgs/srv/CancelGoal_Response``."""

    ERROR_NONE: ClassVar[int]
    ERROR_REJECTED: ClassVar[int]
    ERROR_UNKNOWN_GOAL_ID: ClassVar[int]
    ERROR_GOAL_TERMINATED: ClassVar[int]
    return_code: int
    goals_canceling: list[GoalInfo]
    def __init__(
        self,
        *,
        return_code: int = ...,
        goals_canceling: Sequence[GoalInfo | dict[str, Any]] = ...,
    ) -> None: ...
    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> _CancelGoal_Response: ...
    @classmethod
    def from_cdr(cls, data: bytes) -> _CancelGoal_Response: ...

class _CancelGoal:
    """The parts of ``action_msgs/srv/CancelGoal``."""

    Request: type[_CancelGoal_Request]
    Response: type[_CancelGoal_Response]

CancelGoal: _CancelGoal

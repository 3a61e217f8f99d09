"""What an operator's ``on_event`` returns."""

from enum import Enum


class DoraStatus(Enum):
    """What ``on_event`` returns: go on, stop this operator, or stop every operator of the node."""

    CONTINUE = 0
    STOP = 1
    STOP_ALL = 2

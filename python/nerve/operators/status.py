"""What an operator's ``on_event`` returns."""

from enum import Enum


class DoraStatus(Enum):
    """What ``on_event`` returns: go on, stop this operator, or stop every operator of the node."""

    CONTINUE = 0
    STOP = 1
    STOP_ALL = 2


def status_of(returned: object, what: str) -> DoraStatus:
    """What an operator's ``on_event`` returned (a :class:`DoraStatus`, dora's own enum, or its
    number, as C returns it) as a :class:`DoraStatus`; ``what`` names the call in the error."""
    value = getattr(returned, "value", returned)
    try:
        return DoraStatus(value)
    except ValueError:
        raise TypeError(f"{what} returned {returned!r}, not a DoraStatus (CONTINUE 0, STOP 1 or STOP_ALL 2)") from None

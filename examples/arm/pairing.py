"""Matches the messages of one simulated tick that arrive on several inputs of a node."""

KEEP = 4  # ticks waiting for a partner at most; older ones lost theirs to a dropping queue


class Pairing:
    """Collects messages by stamp until every input has given one for that stamp.

    Inputs are separate queues, so the messages of one tick need not arrive together nor in
    the order they were sent; and a `drop_oldest` queue may drop one of them, whose partners
    then never complete and are let go of once newer ticks wait (they hold shared memory).
    """

    def __init__(self, *inputs: str):
        self.inputs = frozenset(inputs)
        self.waiting: dict[int, dict[str, object]] = {}

    def add(self, input_id: str, stamp_ns: int, value: object) -> dict[str, object] | None:
        """Takes one message; returns the tick's messages by input once they are all there."""
        tick = self.waiting.setdefault(stamp_ns, {})
        tick[input_id] = value
        if tick.keys() != self.inputs:
            while len(self.waiting) > KEEP:
                del self.waiting[min(self.waiting)]
            return None
        for older in [s for s in self.waiting if s <= stamp_ns]:
            del self.waiting[older]
        return tick

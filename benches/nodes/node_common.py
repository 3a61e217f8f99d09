"""What nerve's benchmark node scripts share: the stamp every message carries and the pacing.

The producer writes a `CLOCK_MONOTONIC` stamp into the first 8 bytes of a payload just before
sending; the consumer reads it back in place with ``struct``, as every peer's nodes do
(benches/peers/nodes/common.py).
"""

import struct
import time

STAMP = struct.Struct("<q")


def stamp_of(value) -> int:
    """The producer's stamp, read in place from what the consumer holds: a received array's data
    buffer (shared memory, for nerve), or the numpy array itself where one process publishes to
    itself. A numpy view of a pyarrow array (``value.to_numpy()``) would add pyarrow's own cost,
    a few µs cold and tens in the tail (benches/profile/stamp_read.py), to nerve's and dora-rs's
    figures and to no peer's."""
    if hasattr(value, "buffers"):
        if value.offset:
            raise SystemExit("a message arrived as a slice of an array; its stamp is not at byte 0")
        value = value.buffers()[1]
    return STAMP.unpack_from(value)[0]


def paced(count: int, rate_hz: float, slot: tuple[int, int] = (0, 1)):
    """Yields `count` times on an absolute schedule (no drift), or back to back at rate 0.

    The schedule lies on a grid of `CLOCK_MONOTONIC` periods, producer `i` of `n` (`slot`)
    shifted by i/n of a period. The producers of a fan-in then send at the same moments of
    their period whichever middleware started them and however long each took to start. With
    a start of their own, their phases were whatever the launch gave: messages collided in
    one implementation's run and not in another's, and the two measured different things."""
    period = round(1e9 / rate_hz) if rate_hz > 0 else 0
    start = time.monotonic_ns() + 50_000_000
    if period:
        start = on_grid(start, period, slot)
    for i in range(count):
        if period:
            delay = start + i * period - time.monotonic_ns()
            if delay > 0:
                time.sleep(delay / 1e9)
        yield i


def on_grid(t: int, period: int, slot: tuple[int, int]) -> int:
    """The first time after `t` at which producer `slot[0]` of `slot[1]` sends: the next
    multiple of `period`, plus its share of one."""
    index, count = slot
    return (t // period + 1) * period + period * index // count

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


def paced(count: int, rate_hz: float):
    """Yields `count` times on an absolute schedule (no drift), or back to back at rate 0."""
    period = 1e9 / rate_hz if rate_hz > 0 else 0
    start = time.monotonic_ns() + 50_000_000
    for i in range(count):
        if period:
            delay = start + i * period - time.monotonic_ns()
            if delay > 0:
                time.sleep(delay / 1e9)
        yield i

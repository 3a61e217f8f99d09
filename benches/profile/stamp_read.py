"""What reading a received array's first 8 bytes costs in Python after a sleep (cold caches),
by the way the consumer reads them: a numpy view through pyarrow (``to_numpy``), ``struct``
on the array's data buffer (as the benchmark nodes and every peer's consumer read their
stamp), or a numpy array over that buffer. The array is a 4 KiB pyarrow array in this process:
what is timed is pyarrow and numpy, not nerve.

    python benches/profile/stamp_read.py [COUNT]
"""

import struct
import sys
import time

import numpy as np
import pyarrow as pa

STAMP = struct.Struct("<q")
SKIP = 5


#: The ways of reading the stamp, by the code a consumer would write.
WAYS = {
    "value.to_numpy(zero_copy_only=True)[:8].view('<i8')[0]": lambda a: int(
        a.to_numpy(zero_copy_only=True)[:8].view("<i8")[0]
    ),
    "struct.unpack_from('<q', value.buffers()[1])": lambda a: STAMP.unpack_from(a.buffers()[1])[0],
    "np.frombuffer(value.buffers()[1], '<i8', 1)[0]": lambda a: int(
        np.frombuffer(a.buffers()[1], dtype="<i8", count=1)[0]
    ),
}


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    value = pa.array(np.arange(4096, dtype=np.uint8))
    taken = {name: [] for name in WAYS}
    # The ways take turns, each after its own 20 ms sleep, so the host's mood hits all alike.
    for _ in range(count):
        for name, read in WAYS.items():
            time.sleep(0.02)
            t0 = time.perf_counter_ns()
            read(value)
            taken[name].append((time.perf_counter_ns() - t0) / 1e3)
    for name, us in taken.items():
        p50, p90, p99 = np.percentile(us[SKIP:], [50, 90, 99])
        print(f"{name:58s} p50 {p50:6.1f}  p90 {p90:6.1f}  p99 {p99:6.1f} µs  (n={len(us) - SKIP})")


if __name__ == "__main__":
    main()

"""How many 8-byte messages a second one Python process can hand another on this machine, with
no middleware, beside nerve's Python→Python stream, in turns: the floor under the unpaced
Python throughput target.

    python benches/profile/python_rate_floor.py [--rounds 6] [--messages 300000]

Each round runs, in an order that alternates:

- `bare ring`: a writer process puts stamps into a ring of 1024 slots in shared memory and
  publishes its head index; the reader polls the head, reads each stamp with `struct` and
  notes it beside `time.monotonic_ns()` in two lists (what the suite's consumer does with
  every message), then publishes its tail. Both poll instead of sleeping (no system call per
  message) and the ring is a hundred times deeper than nerve's default queue: no two Python
  processes exchange messages faster here.
- `bare ring + arrays`: the same reader also hands every message over the way the dora node
  API does, which nerve keeps: a new zero-copy pyarrow array over the slot (a slice of one
  array over the whole ring, the cheapest way pyarrow makes an array), in an event dict with a
  metadata dict, the stamp read back through the array's buffer. This is the least a reader
  with this API pays per message, before taking anything from a queue.
- `nerve`: the suite's Python nodes unpaced (`benches/nodes/dataflow_node.py`, loaned blocks,
  the default queue of 10), with the installed build of nerve.

Rates are messages over the time from the first received to the last, as the suite counts
them; then each one's median.
"""

import argparse
import mmap
import os
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from throughput_ab import python_spec, run_spec  # noqa: E402

SLOTS = 1024
HEAD, TAIL, RING = 0, 64, 128  # the two indices on cache lines of their own
STAMP = struct.Struct("<q")


def _write(shm: mmap.mmap, count: int) -> None:
    """Stamps `count` slots in order, waiting (polling) while the ring is full."""
    tail = 0
    for i in range(count):
        while i - tail >= SLOTS:
            tail = STAMP.unpack_from(shm, TAIL)[0]
        STAMP.pack_into(shm, RING + (i % SLOTS) * 8, time.monotonic_ns())
        STAMP.pack_into(shm, HEAD, i + 1)


def _read(shm: mmap.mmap, count: int, arrays: bool, writer: int) -> float:
    """Takes `count` stamps from the process `writer`; returns messages per second from the
    first to the last."""
    sent: list[int] = []
    received: list[int] = []
    ring = pa.Array.from_buffers(pa.uint8(), SLOTS * 8, [None, pa.py_buffer(shm)[RING : RING + SLOTS * 8]])
    tail = idle = 0
    while tail < count:
        head = STAMP.unpack_from(shm, HEAD)[0]
        if head == tail:
            idle += 1
            # A writer that died leaves the ring empty for good: look now and then, not per poll.
            if idle % 1_000_000 == 0 and os.waitpid(writer, os.WNOHANG)[0] == writer:
                raise SystemExit(f"the bare writer exited after {tail} of {count} messages")
            continue
        while tail < head:
            offset = (tail % SLOTS) * 8
            if arrays:
                event = {"type": "INPUT", "id": "data", "value": ring.slice(offset, 8), "metadata": {"timestamp": tail}}
                if event["type"] == "INPUT":
                    array = event["value"]
                    s = STAMP.unpack_from(array.buffers()[1], array.offset)[0]
                del event, array
            else:
                s = STAMP.unpack_from(shm, RING + offset)[0]
            sent.append(s)
            received.append(time.monotonic_ns())
            tail += 1
        STAMP.pack_into(shm, TAIL, tail)
    return count / ((received[-1] - received[0]) / 1e9)


def bare(count: int, arrays: bool) -> float:
    """One bare run: a forked writer, this process reading. M msg/s."""
    shm = mmap.mmap(-1, RING + SLOTS * 8)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            _write(shm, count)
        except BaseException:  # a child must never return into the caller
            code = 1
        os._exit(code)
    rate = _read(shm, count, arrays, pid)
    if os.waitpid(pid, 0)[1] != 0:
        raise SystemExit("the bare writer failed")
    return rate / 1e6


def nerve(count: int) -> float:
    """The suite's Python producer and consumer, unpaced, through nerve. M msg/s."""
    with tempfile.TemporaryDirectory() as tmp:
        return run_spec(python_spec(8, 1, count), Path(tmp), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--messages", type=int, default=300_000)
    args = parser.parse_args()
    runs = {
        "bare ring": lambda: bare(args.messages, arrays=False),
        "bare ring + arrays": lambda: bare(args.messages, arrays=True),
        "nerve": lambda: nerve(args.messages),
    }
    rates: dict[str, list[float]] = {name: [] for name in runs}
    for r in range(args.rounds):
        for name in list(runs) if r % 2 == 0 else list(reversed(runs)):
            rates[name].append(runs[name]())
            print(f"round {r + 1}: {name} {rates[name][-1]:.3f} M msg/s", flush=True)
    for name, got in rates.items():
        print(f"{name}: median {statistics.median(got):.3f} M msg/s, runs {min(got):.3f} to {max(got):.3f}")


if __name__ == "__main__":
    main()

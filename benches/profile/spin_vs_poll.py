"""A busy-polling Python reader two ways, in turns: `next()` with `NERVE_SPIN_US` (nerve polls in
Rust, the GIL released) and a Python loop around `try_recv()` (as iceoryx2's reader polls, the
receive path run on every turn). 1→1 at 50 Hz, the suite's producer.

    python benches/profile/spin_vs_poll.py [ROUNDS] [--size BYTES]

Each line is one run: p50 / p90 / p99 µs. Run the script itself as a node with `poll OUT`.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from benches.impl_nerve import PY_NODE as NODE
from benches.impl_nerve import paced_one_to_one
from benches.model import WARMUP

COUNT = 600
# Longer than the period between messages: the reader never sleeps.
SPIN_US = 200_000


def poll(out: str) -> None:
    sys.path.insert(0, str(NODE.parent))
    from nerve import Node
    from node_common import stamp_of

    node = Node()
    rows = []
    while True:
        event = node.try_recv()
        if event is None:
            continue
        if event["type"] == "INPUT":
            rows.append((stamp_of(event["value"]), time.monotonic_ns()))
            del event
        elif event["type"] in ("STOP", "INPUT_CLOSED"):
            break
    np.savetxt(out, np.array(rows, dtype=np.int64), fmt="%d")


def run(folder: Path, size: int, how: str) -> str:
    def reader(out: Path) -> str:
        if how == "spin":
            return f"    path: {NODE}\n    args: consumer {out} {WARMUP}\n    env: {{NERVE_SPIN_US: '{SPIN_US}'}}\n"
        return f"    path: {Path(__file__).resolve()}\n    args: poll {out}\n"

    p50, p90, p99 = np.percentile(paced_one_to_one(folder, size, COUNT, reader), [50, 90, 99])
    return f"{how:5s} {p50:7.1f} {p90:7.1f} {p99:7.1f}"


def main() -> None:
    if sys.argv[1:2] == ["poll"]:
        poll(sys.argv[2])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rounds", nargs="?", type=int, default=2)
    parser.add_argument("--size", type=int, default=8)
    args = parser.parse_args()
    print("reader    p50     p90     p99")
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for how in ("spin", "poll"):
                print(run(Path(tmp) / f"{r}-{how}", args.size, how), flush=True)


if __name__ == "__main__":
    main()

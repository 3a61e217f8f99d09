"""When a Python reader lets go of an event: at the end of the loop body (`del event`), before it
waits for the next, or when `for event in node:` binds the next one, after the wait and before
the reader's code runs. Readers of both kinds in turns, 1→1 at 50 Hz, the suite's producer.

    python benches/profile/free_before_wait.py [ROUNDS] [--size BYTES]

Each line is one run: p50 / p90 / p99 µs from the producer's stamp to the reader holding the
next message. Run the script itself as a node with `read OUT del|keep`.
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

COUNT = 600


def read(out: str, free: bool) -> None:
    """The reader: the same loop both ways, but for where the event is let go of."""
    sys.path.insert(0, str(NODE.parent))
    from nerve import Node
    from node_common import stamp_of

    rows = []
    for event in Node():
        if event["type"] == "INPUT":
            rows.append((stamp_of(event["value"]), time.monotonic_ns()))
            if free:
                del event
        elif event["type"] == "STOP":
            break
    np.savetxt(out, np.array(rows, dtype=np.int64), fmt="%d")


def run(folder: Path, size: int, how: str) -> str:
    def reader(out: Path) -> str:
        return f"    path: {Path(__file__).resolve()}\n    args: read {out} {how}\n"

    p50, p90, p99 = np.percentile(paced_one_to_one(folder, size, COUNT, reader), [50, 90, 99])
    return f"{how:5s} {p50:7.1f} {p90:7.1f} {p99:7.1f}"


def main() -> None:
    if sys.argv[1:2] == ["read"]:
        read(sys.argv[2], sys.argv[3] == "del")
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rounds", nargs="?", type=int, default=3)
    parser.add_argument("--size", type=int, default=8)
    args = parser.parse_args()
    print("reader    p50     p90     p99")
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for how in ("del", "keep") if r % 2 == 0 else ("keep", "del"):
                print(run(Path(tmp) / f"{r}-{how}", args.size, how), flush=True)


if __name__ == "__main__":
    main()

"""What sending on a received array costs a relay: nerve's round trip at 50 Hz (the suite's ping,
an echo that times its own `send_output`), the echo sending the received pyarrow array as it is
or a numpy view of its buffer, in turns.

    python benches/profile/relay_send.py [ROUNDS] [--size BYTES]

Each line is one run: the echo's send_output p50 / p90 µs, how many arrays it sent on with
their message's data (`Node.arrays_sent_on`), and the one-way latency (RTT/2) p50 / p99 µs.
Run the script itself as a node with `echo OUT MODE`.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from benches.impl_nerve import PY_NODE as PING
from benches.impl_nerve import run_dataflow
from benches.model import WARMUP

COUNT = 600


def echo(out: str, mode: str) -> None:
    from nerve import Node

    node = Node()
    took = []
    for event in node:
        if event["type"] != "INPUT":
            continue
        value = event["value"]
        if mode == "numpy":
            value = np.frombuffer(value.buffers()[1], dtype=np.uint8)
        t0 = time.perf_counter_ns()
        node.send_output("data", value)
        took.append(time.perf_counter_ns() - t0)
        del event, value
    np.savetxt(out, np.array(took, dtype=np.int64), fmt="%d")
    # Builds before the count existed (an A/B against an older build) show "-".
    Path(out + ".sent_on").write_text(str(getattr(node, "arrays_sent_on", "-")))


def run(folder: Path, size: int, mode: str) -> str:
    spec = f"""nodes:
  - id: ping
    path: {PING}
    args: ping {size} {COUNT} 50 {folder / "rtt.txt"}
    inputs: {{reply: echo/data}}
    outputs: [data]
  - id: echo
    path: {Path(__file__).resolve()}
    args: echo {folder / "send.txt"} {mode}
    inputs: {{data: ping/data}}
    outputs: [data]
"""
    if run_dataflow(folder, spec).returncode != 0:
        raise SystemExit(f"nerve run failed; logs in {folder}")
    send = np.loadtxt(folder / "send.txt")[WARMUP:] / 1e3
    one_way = np.loadtxt(folder / "rtt.txt")[WARMUP:] / 2e3
    sent_on = (folder / "send.txt.sent_on").read_text()
    s50, s90 = np.percentile(send, [50, 90])
    o50, o99 = np.percentile(one_way, [50, 99])
    return f"{mode:6s}  {s50:7.1f} {s90:7.1f}  {sent_on:>7s}  {o50:7.1f} {o99:7.1f}"


def main() -> None:
    if sys.argv[1:2] == ["echo"]:
        echo(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rounds", nargs="?", type=int, default=2)
    parser.add_argument("--size", type=int, default=1024)
    args = parser.parse_args()
    print("sends   send p50     p90  sent on  one-way p50   p99")
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for mode in ("array", "numpy"):
                print(run(Path(tmp) / f"{r}-{mode}", args.size, mode), flush=True)


if __name__ == "__main__":
    main()

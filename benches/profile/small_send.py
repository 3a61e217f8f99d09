"""Latency of an 8-byte stamp by the way a Python node sends it: a Python list, the
``pyarrow.array`` of that list (as dora nodes send), or a numpy array. 50 Hz, one run each.

    python benches/profile/small_send.py [COUNT]
"""

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

NODE = Path(__file__).resolve().parent.parent / "nodes" / "dataflow_node.py"
WARMUP = 20


def run(how: str, count: int, folder: Path) -> np.ndarray:
    spec = folder / f"{how}.yml"
    samples = folder / f"{how}.txt"
    spec.write_text(
        f"""nodes:
  - id: producer
    path: {NODE}
    args: producer 8 {count} 50 {how} {folder / f"{how}-producer.json"} {WARMUP}
    outputs: [data]
  - id: consumer
    path: {NODE}
    args: consumer {samples} {WARMUP}
    inputs: {{data: producer/data}}
"""
    )
    subprocess.run(["nerve", "run", str(spec)], cwd=folder, check=True, capture_output=True)
    pairs = np.loadtxt(samples, dtype=np.int64, ndmin=2)[WARMUP:]
    return (pairs[:, 1] - pairs[:, 0]) / 1e3


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    with tempfile.TemporaryDirectory() as tmp:
        for how, label in (("list", "[stamp]"), ("pyarrow", "pyarrow.array([stamp])"), ("0", "numpy array")):
            us = run(how, count, Path(tmp))
            p50, p90, p99 = np.percentile(us, [50, 90, 99])
            print(f"{label:24s} p50 {p50:7.1f}  p90 {p90:7.1f}  p99 {p99:7.1f} µs  (n={len(us)})")


if __name__ == "__main__":
    main()

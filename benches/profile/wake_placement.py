"""The bare floor (an eventfd wake-up and a stamp in shared memory between two Python
processes, 50 Hz; benches/impl_floor.py) with the reader on the writer's vCPU, on the other
one, or where the kernel puts it: how much of a wake-up is the host waking a halted vCPU.

    python benches/profile/wake_placement.py [MESSAGES] [--cpu-latency]

With --cpu-latency, idle CPUs poll instead of halting meanwhile (a CPU latency request of 0 µs,
as a node's `realtime: {cpu_latency_us: 0}` asks for; needs root).
"""

import contextlib
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from benches import cpu_latency, impl_floor
from benches.model import WARMUP, Case


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--cpu-latency"]
    count = int(args[0]) if args else 300
    if len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("needs two CPUs")
    placements = {"same vCPU": (0, 0), "other vCPU": (0, 1), "kernel's choice": None}
    polling = cpu_latency.held() if "--cpu-latency" in sys.argv else contextlib.nullcontext()
    with polling, tempfile.TemporaryDirectory() as tmp:
        for name, cpus in placements.items():
            samples = impl_floor.run(Case("latency-size", 8, count), Path(tmp) / name, cpus)
            if samples.error:
                raise SystemExit(samples.error)
            us = samples.latencies_us()[WARMUP:]
            p50, p90, p99 = np.percentile(us, [50, 90, 99])
            print(f"{name:16s} p50 {p50:6.1f}  p90 {p90:6.1f}  p99 {p99:6.1f} µs  (n={len(us)})")


if __name__ == "__main__":
    main()

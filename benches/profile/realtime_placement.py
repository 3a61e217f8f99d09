"""Where the kernel wakes a reader, and what that costs: nerve N→1 (default 8→1 at 4 MiB, 50 Hz)
with the nodes at normal priority, at a real-time priority, at a real-time priority with idle
CPUs polling, and at normal priority with idle CPUs polling, taking turns.

    python benches/profile/realtime_placement.py [ROUNDS] [--producers N] [--size BYTES] [--untraced]

Per run: p50 / p90 / p99 / max µs, and how many of the reader's wake-ups by a producer put it on that
producer's CPU (from the scheduler's `sched_waking` tracepoint and the reader's futex wait
returning). With --untraced, latency only: no tracer at work beside the nodes. Needs root
(priorities, `/dev/cpu_dma_latency`, tracepoints) and `perf`.
"""

import argparse
import contextlib
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
from sched_trace import WAKING, lines, recorded

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from benches import impl_nerve
from benches.model import WARMUP, Case

FUTEX_RETURN = re.compile(r"^\s*\S+\s+(\d+)\s+\[(\d+)\]\s+[\d.]+:\s+syscalls:sys_exit_futex:")
# The reader's side of a wake-up: its futex wait returning, on the CPU it was woken on. (The
# scheduler's own sched_wakeup and sched_switch of a vCPU woken from a halt were missing from
# some traces here; the waiting process's system call return never was.)
EVENTS = ["sched:sched_waking", "syscalls:sys_exit_futex"]

# (label, realtime priority, idle CPUs polling)
SETTINGS = [
    ("normal", False, False),
    ("priority 80", True, False),
    ("priority 80 + cpu_latency_us 0", True, True),
    ("normal + cpu_latency_us 0", False, True),
]


def placements(trace: Path) -> tuple[int, int]:
    """(wake-ups on the waker's CPU, on another) of the reader: the task other Python processes
    (the producers) woke most often; the producers themselves are woken by their timers. A
    wake-up's CPU is where the reader's futex wait returned next."""
    waker_cpu: dict[str, int] = {}
    woken_by_python: Counter = Counter()
    wakeups: list[tuple[str, int, int]] = []
    for line in lines(trace):
        m = WAKING.search(line)
        if m:
            waker, cpu, wakee, pid = m["comm"], m["cpu"], m["woken_comm"], m["woken_pid"]
            if waker.startswith("python") and wakee.startswith("python"):
                waker_cpu[pid] = int(cpu)
                woken_by_python[pid] += 1
            else:
                waker_cpu.pop(pid, None)
            continue
        m = FUTEX_RETURN.search(line)
        if m and m[1] in waker_cpu:
            wakeups.append((m[1], waker_cpu.pop(m[1]), int(m[2])))
    if not woken_by_python:
        return 0, 0
    reader = woken_by_python.most_common(1)[0][0]
    same = sum(1 for pid, waker, cpu in wakeups if pid == reader and waker == cpu)
    other = sum(1 for pid, waker, cpu in wakeups if pid == reader and waker != cpu)
    return same, other


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rounds", nargs="?", type=int, default=2)
    parser.add_argument("--producers", type=int, default=8)
    parser.add_argument("--size", type=int, default=4 << 20)
    parser.add_argument("--untraced", action="store_true", help="latency only, no tracepoints")
    args = parser.parse_args()
    print(f"{'nodes':32s}    p50    p90    p99      max  | reader woken on its producer's CPU")
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for label, realtime, polling in SETTINGS:
                folder = Path(tmp) / f"round{r}-{realtime}-{polling}"
                folder.mkdir()
                case = Case("fan-in", args.size, 300, producers=args.producers, realtime=realtime, cpu_latency=polling)
                trace = folder / "wake.data"
                with contextlib.nullcontext() if args.untraced else recorded(trace, EVENTS):
                    samples = impl_nerve.run(case, folder)
                if samples.error:
                    raise SystemExit(samples.error)
                us = np.asarray(samples.latencies_us()[WARMUP:])
                p50, p90, p99 = np.percentile(us, [50, 90, 99])
                placed = "-"
                if not args.untraced:
                    same, other = placements(trace)
                    placed = f"{same} of {same + other}"
                print(f"{label:32s} {p50:6.1f} {p90:6.1f} {p99:6.1f} {us.max():8.0f}  | {placed}", flush=True)


if __name__ == "__main__":
    main()

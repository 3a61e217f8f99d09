"""nerve 1→1 at 50 Hz, sizes taking turns, each run followed by the bare floor: whether a slow
run is slow because of its size or because of the minute it ran in.

    python benches/profile/size_modes.py [ROUNDS] [--cpu-latency] [--sizes BYTES,BYTES,...]

Each line is one run: p50 / p99 µs, the consumer's CPU time per message, and what says whether
the consumer did the same work as in other runs (page faults, sleeps and preemptions per
message, messages whose arrays were made before they came), then the floor's p50 right after.
With --cpu-latency, nerve's nodes ask for idle CPUs that poll (`realtime: {cpu_latency_us: 0}`)
and the floor runs under the same request (needs root).
"""

import argparse
import contextlib
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from benches import cpu_latency, impl_floor, impl_nerve
from benches.model import WARMUP, Case
from benches.scenarios import MIB

SIZES = (1 * MIB, 4 * MIB, 8 * MIB, 32 * MIB)
COUNT = 300


def label(size: int) -> str:
    return f"{size // MIB} MiB" if size % MIB == 0 else f"{size} B"


def p50_p99(samples) -> tuple[float, float]:
    if samples.error:
        raise SystemExit(f"{samples.implementation}: {samples.error}")
    us = samples.latencies_us()[WARMUP:]
    return tuple(np.percentile(us, [50, 99]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rounds", nargs="?", type=int, default=3)
    parser.add_argument("--cpu-latency", action="store_true", help="idle CPUs poll (needs root)")
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES), help="bytes, comma-separated")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    polling = args.cpu_latency
    scenario = "cpu-latency" if polling else "latency-size"
    per_size: dict[int, list[float]] = {}
    print("round      size     p50    p99  cpu/msg  faults  sleeps  preempt  ahead  | floor p50")
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for size in sizes:
                case = Case(scenario, size, COUNT, cpu_latency=polling)
                folder = Path(tmp) / f"round{r}"
                p50, p99 = p50_p99(impl_nerve.run(case, folder))
                stats = impl_nerve.consumer_stats(case, folder)
                n = stats["cpu_messages"]
                with cpu_latency.held() if polling else contextlib.nullcontext():
                    floor, _ = p50_p99(impl_floor.run(case, folder))
                per_size.setdefault(size, []).append(p50)
                print(
                    f"{r:5d} {label(size):>9s} {p50:6.1f} {p99:6.1f} {stats['cpu_ns'] / n / 1e3:8.1f}"
                    f" {stats['minor_faults'] / n:7.2f} {stats['voluntary_switches'] / n:7.2f}"
                    f" {stats['involuntary_switches'] / n:8.2f} {stats['imported_ahead']:4d}/{stats['messages']}"
                    f"  | {floor:6.1f}",
                    flush=True,
                )
    for size, p50s in per_size.items():
        print(f"{label(size):>9s} p50 of each run: {', '.join(f'{x:.1f}' for x in p50s)}")


if __name__ == "__main__":
    main()

"""How a fan-out's producer wakes its readers: a run under `perf record` of the scheduler's
wake-ups and switches, then, per message, the time from the producer's first wake-up of a reader
to its last, whether the producer was switched out in between (a reader it woke took its core
before it had woken the others), and how the wake-ups split over the CPUs; and each reader's
p50, in the order the producer rings them.

    python benches/profile/fanout_wakes.py [ROUNDS] [--readers N] [--size BYTES] [--toggle VAR]

`--toggle VAR` runs every round twice, the second time with VAR=0 in the nodes' environment:
for a patch that reads VAR to turn itself off (output-doorbell.patch reads
NERVE_WAKE_BY_OUTPUT), so that both ways are measured in the same minutes. Needs root and
`perf`.
"""

import argparse
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
from sched_trace import SWITCH, WAKING, lines, ns, recorded

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from benches import impl_nerve
from benches.model import WARMUP, Case
from benches.report import slowest_reader_p50_us, spread_us


def events(trace: Path) -> tuple[list[tuple[int, int, int, int]], list[tuple[int, int]]]:
    """(time ns, waker pid, woken pid, target CPU) of every wake-up, and (time ns, pid) of every
    switch away from a task."""
    wakes, switches = [], []
    for line in lines(trace):
        if m := WAKING.search(line):
            wakes.append((ns(m["time"]), int(m["pid"]), int(m["woken_pid"]), int(m["target_cpu"])))
        elif m := SWITCH.search(line):
            switches.append((ns(m["time"]), int(m["prev_pid"])))
    return wakes, switches


def one_run(case: Case, folder: Path) -> str:
    trace = folder / "sched.data"
    with recorded(trace, ["sched:sched_waking", "sched:sched_switch"]):
        samples = impl_nerve.run(case, folder)
    if samples.error:
        raise SystemExit(samples.error)
    wakes, switches = events(trace)
    sent = sorted(set(samples.sent_ns))[WARMUP:]
    readers = case.consumers
    # The producer is the task that wakes the readers right after a send.
    near = Counter(w[1] for w in wakes if any(0 <= w[0] - t < 1_000_000 for t in sent[:20]))
    producer = near.most_common(1)[0][0]
    mine = [w for w in wakes if w[1] == producer]
    out = [t for t, pid in switches if pid == producer]
    spans, split, preempted = [], Counter(), 0
    for t in sent:
        woken = [w for w in mine if t <= w[0] < t + 2_000_000][:readers]
        if len(woken) < 2:
            continue
        first, last = woken[0][0], woken[-1][0]
        spans.append((last - first) / 1e3)
        preempted += any(first <= s < last for s in out)
        split[tuple(sorted(Counter(w[3] for w in woken).values(), reverse=True))] += 1
    latency = samples.latencies_us()
    by_reader = np.asarray(samples.consumer)
    per_reader = " ".join(f"{np.median(latency[by_reader == k]):.0f}" for k in range(readers))
    spans_p = np.percentile(spans, [50, 90, 99]) if spans else [float("nan")] * 3
    splits = ", ".join(f"{'/'.join(map(str, k))}: {n}" for k, n in split.most_common(4))
    return (
        f"p50 {np.median(latency):6.1f}  p99 {np.percentile(latency, 99):7.1f}  "
        f"slowest reader p50 {slowest_reader_p50_us(samples):6.1f}  "
        f"spread p50 {np.median(spread_us(samples)):6.1f} µs\n"
        f"    p50 by reader, in the order they are rung (the dataflow's order): {per_reader} µs\n"
        f"    first to last wake-up p50 / p90 / p99 {spans_p[0]:.1f} / {spans_p[1]:.1f} / {spans_p[2]:.1f} µs; "
        f"producer switched out in between: {preempted} of {len(spans)}; readers per CPU: {splits}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rounds", nargs="?", type=int, default=2)
    parser.add_argument("--readers", type=int, default=8)
    parser.add_argument("--size", type=int, default=4 << 20)
    parser.add_argument("--toggle", help="environment variable set to 0 in every round's second run")
    args = parser.parse_args()
    case = Case("fan-out", args.size, 300, consumers=args.readers)
    ways = [None, args.toggle] if args.toggle else [None]
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for off in ways:
                folder = Path(tmp) / f"run{r}-{off or 'on'}"
                folder.mkdir()
                if off:
                    os.environ[off] = "0"
                try:
                    report = one_run(case, folder)
                finally:
                    if off:
                        del os.environ[off]
                print(f"round {r}{f' {off}=0' if off else ''}: {report}", flush=True)


if __name__ == "__main__":
    main()

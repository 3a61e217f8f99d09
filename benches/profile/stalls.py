"""Who had the CPUs while a slow message waited: a fan-in run under `perf record` of the
scheduler's switches, then, for every message slower than a threshold, what ran on each CPU
between its send and its receipt, longest first (nerve's nodes by role: producer p0, consumer c0;
`--producers 1` for 1→1).

    python benches/profile/stalls.py [RUNS] [--impl nerve|iceoryx2] [--producers N]
                                     [--size BYTES] [--slow US] [--realtime]

Needs root (system-wide tracepoints) and `perf`. The summary counts the slow
messages by the task that held a CPU for at least half of their wait, if one did: a kernel
thread there is the machine's, not the middleware's; a wait with no such task is one where the
CPUs were mostly idle, the guest's vCPU not run or not woken by its host.
"""

import argparse
import json
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
from sched_trace import SWITCH, lines, ns, recorded

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from benches import impl_nerve
from benches.model import WARMUP, Case


def implementation(name: str):
    if name == "nerve":
        return impl_nerve
    from benches.peers import available

    impls = available([name])
    if not impls:
        raise SystemExit(f"{name} is not installed in the peers' environment (python -m benches --peers {name})")
    return impls[0]


def node_names(folder: Path) -> dict[str, str]:
    """The pid of each of a nerve case's nodes (from what they wrote beside their samples) and
    its role: "producer p0", "consumer c0"… The peers' nodes keep their command names."""
    names = {}
    for stats in folder.glob("*/*.json"):
        pid = json.loads(stats.read_text()).get("pid")
        role = "producer" if stats.name.startswith("p") else "consumer"
        if pid is not None:
            names[str(pid)] = f"{role} {stats.name.split('.')[0]}"
    return names


def occupancy(trace: Path, names: dict[str, str]) -> dict[int, list[tuple[int, int, str]]]:
    """Per CPU, the (start ns, end ns, "comm/pid") of everything that ran on it but the idle task;
    a node named in `names` has its role for comm."""
    runs: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
    since: dict[int, tuple[int, str]] = {}
    for line in lines(trace):
        m = SWITCH.search(line)
        if not m:
            continue
        cpu, t = int(m["cpu"]), ns(m["time"])
        if cpu in since:
            start, who = since[cpu]
            runs[cpu].append((start, t, who))
        if m["next_pid"] == "0":
            since.pop(cpu, None)
        else:
            pid = m["next_pid"]
            since[cpu] = (t, f"{names.get(pid, m['next_comm'])}/{pid}")
    return runs


def holders(runs: dict[int, list[tuple[int, int, str]]], t0: int, t1: int) -> list[tuple[str, int, int]]:
    """(task, CPU, µs it ran) for every task that ran on a CPU between t0 and t1, longest first."""
    held = []
    for cpu, spans in runs.items():
        for start, end, who in spans:
            overlap = min(end, t1) - max(start, t0)
            if overlap > 0:
                held.append((who, cpu, overlap // 1000))
    return sorted(held, key=lambda h: -h[2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="?", type=int, default=3)
    parser.add_argument("--impl", default="nerve")
    parser.add_argument("--producers", type=int, default=8)
    parser.add_argument("--size", type=int, default=4 << 20)
    parser.add_argument("--slow", type=float, default=400.0, help="µs; slower messages are listed")
    parser.add_argument("--realtime", action="store_true", help="nerve's nodes at a SCHED_FIFO priority")
    args = parser.parse_args()
    impl = implementation(args.impl)
    blamed: Counter = Counter()
    slow_total = total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.runs):
            folder = Path(tmp) / f"run{r}"
            folder.mkdir()
            trace = folder / "sched.data"
            case = Case("fan-in", args.size, 300, producers=args.producers, realtime=args.realtime)
            if not impl.supports(case):
                raise SystemExit(f"{args.impl} does not run {case.key}")
            with recorded(trace, ["sched:sched_switch"]):
                samples = impl.run(case, folder)
            if samples.error:
                raise SystemExit(samples.error)
            sent = np.asarray(samples.sent_ns, dtype=np.int64)
            received = np.asarray(samples.received_ns, dtype=np.int64)
            order = np.argsort(sent)
            sent, received = sent[order][WARMUP:], received[order][WARMUP:]
            latency = (received - sent) / 1e3
            runs = occupancy(trace, node_names(folder))
            slow = np.flatnonzero(latency > args.slow)
            total += len(latency)
            slow_total += len(slow)
            print(f"run {r}: p50 {np.median(latency):.1f} µs, {len(slow)} of {len(latency)} over {args.slow:g} µs")
            for k in slow:
                held = holders(runs, int(sent[k]), int(received[k]))
                if held and held[0][2] >= latency[k] / 2:
                    blamed[held[0][0].rsplit("/", 1)[0]] += 1
                else:
                    blamed["no task held a CPU for half the wait"] += 1
                listed = ", ".join(f"{who} on {cpu} {us} µs" for who, cpu, us in held[:4])
                before_end = (sent[-1] - sent[k]) / 1e6
                print(f"  {latency[k]:7.0f} µs, {before_end:6.1f} ms before the last send: {listed}")
    print(f"{slow_total} of {total} messages over {args.slow:g} µs, by what held a CPU in their wait:")
    for who, n in blamed.most_common():
        print(f"  {n:4d}  {who}")


if __name__ == "__main__":
    main()

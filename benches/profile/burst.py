"""nerve fan-in at 4 MiB, 50 Hz: producers spread over the period (as the suite runs them) and
all sending at the same moment, in turns: what a message costs a reader that is still busy with
the ones that came with it.

    python benches/profile/burst.py [ROUNDS] [--producers N]

Each line is one run: p50 / p99 µs over all messages, then the p50 of the first, second, ...
message of a burst to reach the consumer (a burst: the messages sent in one period), and how
many messages found their array imported ahead.
"""

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from benches import impl_nerve
from benches.model import WARMUP, Case
from benches.scenarios import MIB

COUNT = 300
RATE_HZ = 50.0


def by_arrival(sent: np.ndarray, received: np.ndarray, producers: int) -> list[float]:
    """p50 latency (µs) of the k-th message of a period to arrive, for each k."""
    period = 1e9 / RATE_HZ
    burst = np.floor((sent - sent.min()) / period + 0.5).astype(np.int64)
    rank = np.zeros(len(sent), dtype=np.int64)
    for b in np.unique(burst):
        members = np.flatnonzero(burst == b)
        rank[members[np.argsort(received[members])]] = np.arange(len(members))
    latency = (received - sent) / 1e3
    return [float(np.median(latency[rank == k])) for k in range(producers)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rounds", nargs="?", type=int, default=3)
    parser.add_argument("--producers", type=int, default=4)
    args = parser.parse_args()
    print(f"round  sending     p50    p99  | p50 by arrival in a burst (1st .. {args.producers}th)  | ahead")
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for together in (False, True):
                case = Case("fan-in", 4 * MIB, COUNT, producers=args.producers)
                folder = Path(tmp) / f"round{r}-{together}"
                samples = impl_nerve.run(case, folder, together)
                if samples.error:
                    raise SystemExit(samples.error)
                sent = np.asarray(samples.sent_ns, dtype=np.float64)[WARMUP:]
                received = np.asarray(samples.received_ns, dtype=np.float64)[WARMUP:]
                p50, p99 = np.percentile((received - sent) / 1e3, [50, 99])
                ranks = " ".join(f"{x:6.1f}" for x in by_arrival(sent, received, args.producers))
                stats = impl_nerve.consumer_stats(case, folder)
                mode = "together" if together else "spread"
                ahead = f"{stats['imported_ahead']}/{stats['messages']}"
                print(f"{r:5d}  {mode:9s} {p50:6.1f} {p99:6.1f}  | {ranks} | {ahead}", flush=True)


if __name__ == "__main__":
    main()

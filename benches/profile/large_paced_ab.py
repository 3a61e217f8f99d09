"""Two builds of the Python extension taking turns on `large-paced.yml` (150 messages of 64 MiB
at 50 Hz): how many blocks the stream's pool grew to, and its latencies, first messages included.

    cp "$(python -c 'import nerve; print(nerve._nerve.__file__)')" /tmp/a.so
    # ... apply the change, pip install . , copy the same way to /tmp/b.so ...
    python benches/profile/large_paced_ab.py /tmp/a.so /tmp/b.so [--rounds 4]

Builds are swapped as `throughput_ab.py --python` swaps them; the last run's build stays
installed.
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from throughput_ab import install

HERE = Path(__file__).resolve().parent


def run_once(extension: Path) -> str:
    """One run of large-paced.yml on `extension`: a line of what it did."""
    install(extension)
    received = HERE / "consumer.txt"
    received.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "nerve", "run", "large-paced.yml"]
    run = subprocess.Popen(cmd, cwd=HERE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    blocks = 0
    while run.poll() is None:
        blocks = max(blocks, sum(".b0." in name for name in os.listdir("/dev/shm")))
        time.sleep(0.05)
    if run.returncode != 0:
        raise SystemExit(f"nerve run large-paced.yml failed with {extension} (exit {run.returncode})")
    us = np.array([(r - s) / 1e3 for s, r in np.loadtxt(received)])
    p50, p99 = np.percentile(us, [50, 99])
    first = " ".join(str(round(x)) for x in us[:10])
    return f"blocks {blocks}, p50 {p50:.0f} µs, p99 {p99:.0f}, max {us.max():.0f}; first ten: {first}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", type=Path, help="one build of nerve/_nerve*.so")
    parser.add_argument("b", type=Path, help="the other")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    for r in range(args.rounds):
        for build in (args.a, args.b) if r % 2 == 0 else (args.b, args.a):
            print(f"round {r + 1}: {build}: {run_once(build.resolve())}", flush=True)


if __name__ == "__main__":
    main()

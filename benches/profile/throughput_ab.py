"""Unpaced 8-byte throughput between two Rust nodes, for two builds of `nerve-bench-node` taking
turns: whether a change to the data plane moves messages per second on this machine, which
moves by more than most changes do from one minute to the next.

    cargo build --release -p nerve-bench-node && cp target/release/nerve-bench-node /tmp/bench-a
    # ... apply the change, build again ...
    cp target/release/nerve-bench-node /tmp/bench-b
    python benches/profile/throughput_ab.py /tmp/bench-a /tmp/bench-b [--rounds 6] [--size 8]

Each round runs both builds, in turns, on `benches/profile/throughput.yml` (3 M messages, the
default queue of 10, back-pressure); the lines are M msg/s per run, then each build's median.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def substitute(spec: str, old: str, new: str) -> str:
    """`spec` with `old` replaced; refuses a spec without it, which would run the wrong build."""
    if old not in spec:
        raise SystemExit(f"throughput.yml no longer contains {old!r}: update throughput_ab.py")
    return spec.replace(old, new)


def run_once(binary: Path, size: int, folder: Path) -> float:
    """Runs the throughput dataflow with `binary` as both nodes; M msg/s seen by the consumer."""
    spec = (HERE / "throughput.yml").read_text()
    spec = substitute(spec, "../../target/release/nerve-bench-node", str(binary))
    spec = substitute(spec, "producer 8 ", f"producer {size} ")
    (folder / "dataflow.yml").write_text(spec)
    cmd = [sys.executable, "-m", "nerve", "run", "dataflow.yml"]
    subprocess.run(cmd, cwd=folder, check=True, capture_output=True)
    stats = json.loads((folder / "consumer.txt.json").read_text())
    return stats["messages"] / stats["seconds"] / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", type=Path, help="one nerve-bench-node build")
    parser.add_argument("b", type=Path, help="the other")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--size", type=int, default=8, help="message size in bytes")
    args = parser.parse_args()
    rates: dict[Path, list[float]] = {args.a: [], args.b: []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for binary in (args.a, args.b) if r % 2 == 0 else (args.b, args.a):
                rate = run_once(binary.resolve(), args.size, Path(tmp))
                rates[binary].append(rate)
                print(f"round {r + 1}: {binary} {rate:.3f} M msg/s", flush=True)
    for binary, runs in rates.items():
        print(f"{binary}: median {statistics.median(runs):.3f} M msg/s, runs {min(runs):.3f} to {max(runs):.3f}")


if __name__ == "__main__":
    main()

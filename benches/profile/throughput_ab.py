"""Unpaced 8-byte throughput between two Rust nodes, for two builds of `nerve-bench-node` taking
turns: whether a change to the data plane moves messages per second on this machine, which
moves by more than most changes do from one minute to the next.

    cargo build --release -p nerve-bench-node && cp target/release/nerve-bench-node /tmp/bench-a
    # ... apply the change, build again ...
    cp target/release/nerve-bench-node /tmp/bench-b
    python benches/profile/throughput_ab.py /tmp/bench-a /tmp/bench-b [--rounds 6] [--size 8]

Each round runs both builds, in turns, on `benches/profile/throughput.yml` (3 M messages, the
default queue of 10, back-pressure); the lines are M msg/s per run, then each build's median.

With `--python`, A and B are two builds of the Python extension (`nerve/_nerve*.so`, copied
from the installed package after each `pip install .`), and the nodes are the suite's Python
ones (`benches/nodes/dataflow_node.py`, 300 000 messages, loaned blocks): each run copies its
build over the installed extension, and the last run's build stays installed. `--readers K`
gives the producer K Python readers (a fan-out whose readers share the machine's cores); the
rate is then the slowest reader's.
"""

import argparse
import importlib.util
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY_MESSAGES = 300_000


def substitute(spec: str, old: str, new: str) -> str:
    """`spec` with `old` replaced; refuses a spec without it, which would run the wrong build."""
    if old not in spec:
        raise SystemExit(f"throughput.yml no longer contains {old!r}: update throughput_ab.py")
    return spec.replace(old, new)


def rust_spec(binary: Path, size: int) -> str:
    """throughput.yml with `binary` as both nodes."""
    spec = (HERE / "throughput.yml").read_text()
    spec = substitute(spec, "../../target/release/nerve-bench-node", str(binary))
    return substitute(spec, "producer 8 ", f"producer {size} ")


def install(extension: Path) -> None:
    """Puts `extension` (a build of `nerve/_nerve*.so`) in the installed package."""
    package = Path(importlib.util.find_spec("nerve").origin).parent
    [installed] = package.glob("_nerve*.so")
    # A new file renamed over the old: a process still running the old build keeps its mapping.
    shutil.copyfile(extension, installed.with_suffix(".new"))
    installed.with_suffix(".new").replace(installed)


def python_spec(size: int, readers: int, messages: int = PY_MESSAGES) -> str:
    """The suite's Python nodes, unpaced: one producer of loaned blocks, `readers` consumers."""
    node = HERE.parent / "nodes" / "dataflow_node.py"
    consumers = "".join(
        f"  - id: consumer{i}\n    path: {node}\n    args: consumer consumer{i}.txt 10\n"
        "    inputs: {data: producer/data}\n"
        for i in range(readers)
    )
    return (
        "nodes:\n"
        f"  - id: producer\n    path: {node}\n    args: producer {size} {messages} 0 1 producer.json 10\n"
        "    outputs: [data]\n" + consumers
    )


def run_once(build: Path, size: int, folder: Path, readers: int | None) -> float:
    """Runs the throughput dataflow on `build` (with `readers`: the Python one, `build` put in
    the installed package first); M msg/s seen by the slowest consumer."""
    if readers:
        install(build)
    return run_spec(python_spec(size, readers) if readers else rust_spec(build, size), folder, readers or 1)


def run_spec(spec: str, folder: Path, readers: int) -> float:
    """Runs `spec` in `folder`; M msg/s seen by the slowest of its `readers` consumers."""
    (folder / "dataflow.yml").write_text(spec)
    cmd = [sys.executable, "-m", "nerve", "run", "dataflow.yml"]
    subprocess.run(cmd, cwd=folder, check=True, capture_output=True)
    stats = [json.loads(f.read_text()) for f in sorted(folder.glob("consumer*.txt.json"))]
    if len(stats) != readers:
        raise SystemExit(f"{len(stats)} consumers reported in {folder}, not {readers}")
    return min(s["messages"] / s["seconds"] for s in stats) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", type=Path, help="one nerve-bench-node build (with --python: one _nerve*.so)")
    parser.add_argument("b", type=Path, help="the other")
    parser.add_argument("--python", action="store_true", help="A and B are builds of the Python extension")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--size", type=int, default=8, help="message size in bytes")
    parser.add_argument("--readers", type=int, default=1, help="Python readers of the stream (with --python)")
    args = parser.parse_args()
    if args.readers != 1 and not args.python:
        parser.error("--readers needs --python")
    rates: dict[Path, list[float]] = {args.a: [], args.b: []}
    for r in range(args.rounds):
        for binary in (args.a, args.b) if r % 2 == 0 else (args.b, args.a):
            with tempfile.TemporaryDirectory() as tmp:
                rate = run_once(binary.resolve(), args.size, Path(tmp), args.readers if args.python else None)
                rates[binary].append(rate)
                print(f"round {r + 1}: {binary} {rate:.3f} M msg/s", flush=True)
    for binary, runs in rates.items():
        print(f"{binary}: median {statistics.median(runs):.3f} M msg/s, runs {min(runs):.3f} to {max(runs):.3f}")


if __name__ == "__main__":
    main()

"""Runs benchmark cases on nerve: one dataflow per case, real node processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benches import native_nodes
from benches.model import WARMUP, Case, Samples, read_stamp_lines

NAME = "nerve"
PY_NODE = Path(__file__).resolve().parent / "nodes" / "dataflow_node.py"
#: The node program of each language (`Case.lang`); the Rust and the C++ node take the same
#: arguments and write the same files.
NODES = {"python": PY_NODE, "rust": native_nodes.RUST_NODE, "cpp": native_nodes.CPP_NODE}
#: How the report names each language's nodes: `nerve (rust)`, `nerve (c++ → python)`.
LABELS = {"python": "python", "rust": "rust", "cpp": "c++"}
# Spinning longer than the period between messages means the consumer never sleeps.
SPIN_US = 200_000
# What a realtime case gives every node: above stress-ng's normal-priority load.
REALTIME = "priority: 80, policy: fifo, lock_memory: true"
# What a cpu-latency case asks for: idle CPUs poll instead of halting while the dataflow runs.
CPU_LATENCY = "cpu_latency_us: 0"


def supports(case: Case) -> bool:
    # The cpp scenario runs nerve in several languages, as implementations of its own (impl_cpp).
    own = ("topics", "lan", "types", "cpp", "view", "foxglove", "walker", "control-loop", "viewer-soak")
    return case.scenario not in own


def ends(case: Case) -> tuple[str, str]:
    """The languages of a case's producers and of its consumers: `lang` names both, or is
    `producer-consumer` (`cpp-python`: C++ sends, Python reads)."""
    producer, _, consumer = case.lang.partition("-")
    unknown = {producer, consumer or producer} - NODES.keys()
    if unknown:
        raise ValueError(f"case {case.key}: no bench node in {', '.join(sorted(unknown))} (known: {', '.join(NODES)})")
    return producer, consumer or producer


def implementation(case: Case, name: str = NAME) -> str:
    """What the report calls nerve with `case`'s languages: just `name` with Python at both ends."""
    producer, consumer = (LABELS[lang] for lang in ends(case))
    if producer != consumer:
        return f"{name} ({producer} → {consumer})"
    return name if producer == "python" else f"{name} ({producer})"


def _node(case: Case, lang: str, role: str, *args: object) -> str:
    node = f"    path: {NODES[lang]}\n    args: {' '.join(str(a) for a in (role, *args))}\n"
    realtime = [s for s, wanted in ((REALTIME, case.realtime), (CPU_LATENCY, case.cpu_latency)) if wanted]
    return node + (f"    realtime: {{{', '.join(realtime)}}}\n" if realtime else "")


def dataflow(case: Case, folder: Path) -> str:
    """The YAML of a case: producers p*, consumers c* (or ping + echo). The producers of a
    fan-in send spread over the period."""
    lines = ["nodes:\n"]
    producer, consumer = ends(case)
    if case.scenario == "round-trip":
        ping = _node(case, producer, "ping", case.size, case.count, case.rate_hz, folder / "rtt.txt")
        lines.append("  - id: ping\n" + ping + "    inputs: {reply: echo/data}\n    outputs: [data]\n")
        echo = _node(case, consumer, "echo")
        lines.append("  - id: echo\n" + echo + "    inputs: {data: ping/data}\n    outputs: [data]\n")
        return "".join(lines)
    for p in range(case.producers):
        out = folder / f"p{p}.json"
        if producer == "python":
            loan = 1 if case.loan else 0
            args = (case.size, case.count, case.rate_hz, loan, out, WARMUP, f"{p}/{case.producers}")
        else:
            args = (case.size, case.count, case.rate_hz, out)
        lines.append(f"  - id: p{p}\n" + _node(case, producer, "producer", *args) + "    outputs: [data]\n")
    for c in range(case.consumers):
        lines.append(f"  - id: c{c}\n" + _node(case, consumer, "consumer", folder / f"c{c}.txt", WARMUP))
        if case.spin:
            lines.append(f"    env: {{NERVE_SPIN_US: '{SPIN_US}'}}\n")
        inputs = ", ".join(f"in{p}: p{p}/data" for p in range(case.producers))
        lines.append(f"    inputs: {{{inputs}}}\n")
    return "".join(lines)


def nerve_run(folder: Path, spec: str, python: str = sys.executable) -> list[str]:
    """Writes `spec` to `folder`/dataflow.yml; the command that runs it with the nerve of
    `python`'s environment (whose Python nodes run with that interpreter), logs in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dataflow.yml").write_text(spec)
    return [python, "-m", "nerve", "run", str(folder / "dataflow.yml"), "--quiet", "--log-dir", str(folder)]


def run_dataflow(folder: Path, spec: str, python: str = sys.executable) -> subprocess.CompletedProcess[str]:
    """Runs `spec` to the end (see `nerve_run`)."""
    return subprocess.run(nerve_run(folder, spec, python), capture_output=True, text=True, timeout=1800)


def failure(result: subprocess.CompletedProcess[str]) -> str | None:
    """Why a run of `run_dataflow` failed, in nerve run's last words; None if it did not."""
    if result.returncode == 0:
        return None
    return f"nerve run failed: {result.stderr.strip().splitlines()[-1:]}"


def run(case: Case, workdir: Path, python: str = sys.executable, name: str = NAME) -> Samples:
    """Runs `case` with the nerve of `python`'s environment, reported as `name`."""
    folder = workdir / f"{name.replace(' ', '-')}--{case.key}"
    samples = Samples(implementation(case, name), case)
    samples.error = failure(run_dataflow(folder, dataflow(case, folder), python))
    if samples.error:
        return samples
    if case.scenario == "round-trip":
        rtt = folder / "rtt.txt"
        samples.rtt_ns = [int(x) for x in rtt.read_text().split()] if rtt.exists() else []
        return samples
    for c in range(case.consumers):
        read_stamp_lines(folder / f"c{c}.txt", c, samples)
    samples.take_node_stats(json.loads((folder / "p0.json").read_text()), consumer_stats(case, workdir, name))
    return samples


def consumer_stats(case: Case, workdir: Path, name: str = NAME) -> dict:
    """What the first consumer of a case run in `workdir` wrote beside its samples: CPU time,
    the kernel's counts and the arrays imported ahead (benches/nodes/dataflow_node.py)."""
    return json.loads((workdir / f"{name.replace(' ', '-')}--{case.key}" / "c0.txt.json").read_text())

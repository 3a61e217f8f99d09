"""nerve's topic API on its three transports: within one process, between two processes of the
host (shared memory), and between two hosts (Zenoh, over a veth/bridge between network
namespaces; needs root). Beside them, in the same run, a dataflow node reading the topic as an
input (`inputs: {x: topic/...}`) and the same node reading a dataflow edge: both are woken by
the node's one doorbell, so the two should cost the same."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from benches.impl_nerve import PY_NODE, nerve_run, run_dataflow
from benches.model import WARMUP, Case, Samples, read_stamp_lines
from testbed.netns import Hosts

NAME = "nerve topics"
NODE = Path(__file__).resolve().parent / "nodes" / "topic_node.py"


def supports(case: Case) -> bool:
    return case.scenario == "topics"


def run(case: Case, workdir: Path, python: str = sys.executable, name: str = NAME) -> Samples:
    """Runs `case` with the nerve of `python`'s environment, reported as `name`."""
    folder = workdir / f"{name.replace(' ', '-')}--{case.key}"
    folder.mkdir(parents=True, exist_ok=True)
    samples = Samples(f"{name} ({case.transport})", case)
    topic = f"bench/{os.getpid()}/{time.monotonic_ns()}"
    out = folder / "c0.txt"
    node = [python, str(NODE)]
    produce = ["producer", topic, str(case.size), str(case.count), str(case.rate_hz)]
    try:
        if case.transport == "process":
            args = ["inprocess", topic, str(case.size), str(case.count), str(case.rate_hz), str(out)]
            subprocess.run([*node, *args], check=True, capture_output=True, text=True, timeout=600)
        elif case.transport == "node-topic":
            # The topic's publisher is a process of its own, outside the run: the run shares the
            # topic's name with it. The node stops after `count`.
            spec = (
                f"share: [{topic}]\n"
                f"nodes:\n  - id: c0\n    path: {PY_NODE}\n    args: consumer {out} {WARMUP} {case.count}\n"
                f"    inputs: {{in0: {{source: topic/{topic}, queue_size: {case.count}}}}}\n"
            )
            command = nerve_run(folder, spec, python)
            run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            subprocess.run([*node, *produce, "host"], check=True, capture_output=True, text=True, timeout=600)
            _, err = run.communicate(timeout=60)
            if run.returncode != 0:
                raise RuntimeError(err.strip().splitlines()[-1:] if err else "nerve run failed")
        elif case.transport == "node-edge":
            # The same reader node on a dataflow edge, its producer loaning blocks in place too.
            spec = (
                f"nodes:\n  - id: p0\n    path: {PY_NODE}\n"
                f"    args: producer {case.size} {case.count} {case.rate_hz} 1 {folder / 'p0.json'} 0\n"
                "    outputs: [data]\n"
                f"  - id: c0\n    path: {PY_NODE}\n    args: consumer {out} {WARMUP}\n    inputs: {{in0: p0/data}}\n"
            )
            result = run_dataflow(folder, spec, python)
            if result.returncode != 0:
                raise RuntimeError(result.stderr.strip().splitlines()[-1:] or "nerve run failed")
        elif case.transport == "host":
            consumer = subprocess.Popen([*node, "consumer", topic, str(case.count), "host", str(out)])
            subprocess.run([*node, *produce, "host"], check=True, capture_output=True, text=True, timeout=600)
            consumer.wait(timeout=60)
        else:
            if os.geteuid() != 0:
                samples.error = "needs root (network namespaces)"
                return samples
            hosts = Hosts(f"nb{os.getpid() % 10000}", 2)
            try:
                consumer = hosts.popen(0, [*node, "consumer", topic, str(case.count), "network", str(out)])
                producer = hosts.popen(1, [*node, *produce, "network"], stderr=subprocess.PIPE)
                _, err = producer.communicate(timeout=600)
                if producer.returncode != 0:
                    raise RuntimeError(err.strip().splitlines()[-1:] if err else "producer failed")
                consumer.wait(timeout=60)
            finally:
                hosts.remove()
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, RuntimeError) as e:
        detail = getattr(e, "stderr", None) or str(e)
        samples.error = f"failed: {str(detail).strip().splitlines()[-1:]}"
        return samples
    read_stamp_lines(out, 0, samples)
    return samples

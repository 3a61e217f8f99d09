"""nerve's topic API (no dataflow) on its three transports: within one process, between two
processes of the host (shared memory), and between two hosts (Zenoh, over a veth/bridge
between network namespaces; needs root)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from benches.model import Case, Samples, read_stamp_lines
from testbed.netns import Hosts

NAME = "nerve topics"
NODE = Path(__file__).resolve().parent / "nodes" / "topic_node.py"


def supports(case: Case) -> bool:
    return case.scenario == "topics"


def run(case: Case, workdir: Path) -> Samples:
    folder = workdir / f"{NAME.replace(' ', '-')}--{case.key}"
    folder.mkdir(parents=True, exist_ok=True)
    samples = Samples(f"{NAME} ({case.transport})", case)
    topic = f"bench/{os.getpid()}/{time.monotonic_ns()}"
    out = folder / "c0.txt"
    node = [sys.executable, str(NODE)]
    produce = ["producer", topic, str(case.size), str(case.count), str(case.rate_hz)]
    try:
        if case.transport == "process":
            args = ["inprocess", topic, str(case.size), str(case.count), str(case.rate_hz), str(out)]
            subprocess.run([*node, *args], check=True, capture_output=True, text=True, timeout=600)
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

"""ZeroMQ (pyzmq): PUB/SUB over ipc:// sockets in the case folder, zero-copy send and receive."""

from __future__ import annotations

from pathlib import Path

from benches.model import Case, Samples
from benches.peers import _harness

NAME = "zeromq (ipc)"


def supports(case: Case) -> bool:
    return case.lang == "python" and not case.realtime


def run(case: Case, workdir: Path) -> Samples:
    return _harness.run_nodes(NAME, case, workdir, "zmq_node.py")

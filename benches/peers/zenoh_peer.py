"""Eclipse Zenoh (zenoh-python) in peer mode over Unix sockets, no scouting.

Two implementations: this module (``zenoh``: shared memory disabled, payloads go through the
socket) and ``SHARED_MEMORY`` (``zenoh (shm)``: producers write into buffers of zenoh's
shared-memory provider, ``zenoh.shm``, and only references cross the socket).
"""

from __future__ import annotations

import types
from pathlib import Path

from benches.model import Case, Samples
from benches.peers import _harness

NAME = "zenoh"


def supports(case: Case) -> bool:
    # Without shared memory there is no loan: a producer always hands zenoh a buffer to copy, so
    # the copy variant of a case would measure the same thing twice.
    return case.lang == "python" and case.loan and not case.realtime


def run(case: Case, workdir: Path) -> Samples:
    return _harness.run_nodes(NAME, case, workdir, "zenoh_node.py", {"shm": False})


def _run_shm(case: Case, workdir: Path) -> Samples:
    return _harness.run_nodes(SHARED_MEMORY.NAME, case, workdir, "zenoh_node.py", {"shm": True})


# The shared-memory variant: an implementation of its own (NAME, supports, run), like a module.
SHARED_MEMORY = types.SimpleNamespace(
    NAME="zenoh (shm)",
    supports=lambda case: case.lang == "python" and not case.realtime,
    run=_run_shm,
    __name__="benches.peers.zenoh_peer.SHARED_MEMORY",
)

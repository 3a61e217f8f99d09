"""iceoryx2: zero-copy shared-memory publish-subscribe (slices of u8) with event-based wake-ups."""

from __future__ import annotations

import os
import time
from pathlib import Path

from benches.model import Case, Samples
from benches.peers import _harness

NAME = "iceoryx2"


def supports(case: Case) -> bool:
    return case.lang == "python" and not case.realtime


def run(case: Case, workdir: Path) -> Samples:
    # A service name of its own per run: nothing left over from an earlier (killed) run is reused.
    service = f"nerve-bench/{os.getpid()}-{time.monotonic_ns()}"
    return _harness.run_nodes(NAME, case, workdir, "iceoryx2_node.py", {"service": service})

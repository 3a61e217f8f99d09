"""The peers' own virtual environment, benches/.venv-peers, with pinned versions.

The peers are not dependencies of nerve: they live in a separate venv that is created on first
use. ``python -m benches.peers.venv`` creates it by hand.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

VENV = Path(__file__).resolve().parent.parent / ".venv-peers"
PINS = [
    "dora-rs==1.1.0",
    "dora-rs-cli==1.1.0",
    "iceoryx2==0.10.0",
    "eclipse-zenoh==1.10.2",
    "pyzmq==27.3.0",
    "cyclonedds==11.0.1",
    "numpy==2.4.6",
    "pyarrow==26.0.1",
]
# Written last: a venv without it is incomplete and is installed again.
STAMP = VENV / "pins.txt"


def python() -> Path:
    return VENV / "bin" / "python"


def ensure() -> Path:
    """Creates the venv and installs the pinned peers if that was not done; returns its python."""
    wanted = "\n".join(PINS) + "\n"
    if STAMP.exists() and STAMP.read_text() == wanted and python().exists():
        return python()
    if not python().exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    pip = [str(python()), "-m", "pip", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, "install", *PINS], check=True)
    STAMP.write_text(wanted)
    return python()


if __name__ == "__main__":
    print(ensure())

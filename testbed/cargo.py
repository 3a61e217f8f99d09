"""The workspace's Rust programs, built the one way the tests and the benchmark suite share."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build_workspace_binaries() -> None:
    """Builds every program of the workspace (examples, the bench node), release profile, in one
    selection: the wheel's (everything but the Python module). Cargo turns a dependency's
    features on per selection, so `cargo build -p one-example` would build tokio, Zenoh and the
    rest again, in a variant of their own; this reuses what installing the wheel built."""
    command = ["cargo", "build", "--release", "--workspace", "--exclude", "nerve-python", "--bins"]
    subprocess.run(command, cwd=ROOT, check=True)

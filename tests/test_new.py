"""A Rust project made by ``nerve new`` builds and runs on a fresh machine from what ``pip
install .`` installed: the package carries the source of ``nerve-node`` (no registry has it) and
the ``Cargo.lock`` nerve was tested with, and ``nerve new`` points the project at them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import nerve
import pytest
from conftest import nerve_cmd


@pytest.mark.timeout(1800)  # a first build of nerve-node and its dependencies in the new project
def test_a_new_rust_dataflow_builds_from_the_installed_crates_and_runs(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("NERVE_NODE_PATH", "CARGO_TARGET_DIR")}
    made = subprocess.run(
        nerve_cmd("new", "robot", "--lang", "rust", "--path", str(tmp_path)),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    rust = subprocess.run(nerve_cmd("--rust-dir"), env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert Path(rust) == Path(nerve.__file__).parent / "rust"
    project = tmp_path / "robot"
    assert f'nerve-node = {{ path = "{rust}/crates/nerve-node" }}' in (project / "Cargo.toml").read_text()
    assert (project / "Cargo.lock").read_text() == (Path(rust) / "Cargo.lock").read_text()

    ran = subprocess.run(
        nerve_cmd("run", "--build", "dataflow.yml"),
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=1700,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr[-4000:]
    assert "listener received 10 messages" in ran.stdout, ran.stdout[-2000:]
    # Both nodes were built in the one workspace, into its one target folder.
    assert sorted(p.name for p in (project / "target" / "release").iterdir() if p.name in ("talker", "listener")) == [
        "listener",
        "talker",
    ]

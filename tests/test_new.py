"""A Rust project made by ``nerve new`` builds and runs on a fresh machine from what ``pip
install .`` installed: the package carries the source of ``nerve-node`` (no registry has it) and
the ``Cargo.lock`` nerve was tested with, and ``nerve new`` points the project at them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import nerve
import pytest
from conftest import REPO, nerve_cmd, target_dir


@pytest.mark.timeout(1800)  # when run alone: a first build of nerve-node's dependencies
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

    # The project's target folder is this checkout's: the project's release profile is nerve's,
    # so what the checkout built of Zenoh, Arrow and tokio serves it too (a fresh machine builds
    # them once, not once more for this test).
    (project / "target").symlink_to(target_dir(), target_is_directory=True)
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


def test_a_new_rust_project_builds_with_nerves_own_release_profile() -> None:
    """What lets a shared target folder serve both: the templates' profile is the workspace's."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11
    ours = tomllib.loads((REPO / "Cargo.toml").read_text())["profile"]
    for template in ("Cargo.toml", "workspace-Cargo.toml"):
        text = (REPO / "crates" / "nerve-cli" / "templates" / "rust" / template).read_text()
        assert tomllib.loads(text.replace("{{nerve_node}}", '"0"'))["profile"] == ours, template


@pytest.mark.parametrize("lang", ["c", "cpp"])
def test_a_new_c_or_cpp_dataflow_builds_with_cmake_and_runs(tmp_path: Path, lang: str) -> None:
    made = subprocess.run(
        nerve_cmd("new", "greeter", "--lang", lang, "--path", str(tmp_path)), capture_output=True, text=True, timeout=60
    )
    assert made.returncode == 0, made.stderr
    project = tmp_path / "greeter"
    ran = subprocess.run(
        nerve_cmd("run", "--build", "dataflow.yml"), cwd=project, capture_output=True, text=True, timeout=600
    )
    assert ran.returncode == 0, ran.stderr[-4000:]
    greetings = [line for line in ran.stdout.splitlines() if "listener got" in line]
    assert [g.split('"')[1] for g in greetings] == [f"hello #{n}" for n in range(10)], ran.stdout[-2000:]
    assert "listener received 10 messages" in ran.stdout and "talker sent 10 messages" in ran.stdout, ran.stdout


@pytest.mark.parametrize("lang", ["c", "cpp"])
def test_a_new_c_or_cpp_node_runs_in_the_dataflow_its_readme_shows(tmp_path: Path, lang: str) -> None:
    made = subprocess.run(
        nerve_cmd("new", "counter", "--kind", "node", "--lang", lang, "--path", str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    readme = (tmp_path / "counter" / "README.md").read_text()
    node_yaml = readme.split("```yaml\n")[1].split("```")[0]
    # The README's node, fed three messages of known sizes by a Python node, and a checker.
    (tmp_path / "feed.py").write_text(
        "from nerve import Node\n"
        "import pyarrow as pa\n"
        "node = Node()\n"
        "for size in (3, 5, 8):\n"
        "    node.send_output('data', pa.array([1] * size, type=pa.uint8()))\n"
    )
    (tmp_path / "check.py").write_text(
        "from nerve import Node\n"
        "counts = [int.from_bytes(bytes(e['value'].to_numpy()), 'little') for e in Node() if e['type'] == 'INPUT']\n"
        "assert counts == [3, 5, 8], counts\n"
        "print('counts', counts)\n"
    )
    dataflow = node_yaml.replace("tick: dora/timer/millis/100", "tick: feed/data") + (
        "  - id: feed\n    path: feed.py\n    outputs:\n      - data\n"
        "  - id: check\n    path: check.py\n    inputs:\n      counts: counter/out\n"
    )
    (tmp_path / "dataflow.yml").write_text(dataflow)
    ran = subprocess.run(
        nerve_cmd("run", "--build", "dataflow.yml"), cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert ran.returncode == 0, ran.stderr[-4000:]
    assert "counts [3, 5, 8]" in ran.stdout, ran.stdout[-2000:]

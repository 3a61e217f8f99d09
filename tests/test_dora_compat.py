"""dora-rs's Python names on nerve: the ``dora`` module (``python/dora-compat``, installed as a
user would) runs a dora node unchanged, and refuses to hide a real dora-rs; ``nerve.builder``
writes dataflows nerve runs."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, nerve_cmd
from nerve.builder import DataflowBuilder, Operator


@pytest.fixture(scope="module")
def dora_site(tmp_path_factory) -> Path:
    """``pip install ./python/dora-compat`` into a folder of its own."""
    site = tmp_path_factory.mktemp("dora-site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), "python/dora-compat"],
        cwd=REPO,
        check=True,
    )
    return site


def with_path(*folders: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(str(f) for f in folders)}


SENDER = """
import pyarrow as pa
from dora import Node, DoraStatus

node = Node()
for i in range(3):
    node.send_output("count", pa.array([i]))
assert DoraStatus.STOP_ALL.value == 2
"""

RECEIVER = """
from dora import Node

node = Node()
seen = [event["value"][0].as_py() for event in node if event["type"] == "INPUT"]
node.log_info(f"seen {seen}")
"""


def test_a_dora_node_runs_unchanged_through_the_dora_module(dataflows, dora_site):
    flow = DataflowBuilder("counting")
    counter = flow.add_node("sender").path("sender.py")
    flow.add_node("receiver", min_log_level="info").path("receiver.py").add_input("count", counter.add_output("count"))
    path = dataflows.write("", {"sender.py": SENDER, "receiver.py": RECEIVER})
    flow.to_yaml(path)
    run = subprocess.run(nerve_cmd("run", str(path)), capture_output=True, text=True, env=with_path(dora_site))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "[receiver] INFO seen [0, 1, 2]" in run.stdout.splitlines(), run.stdout


def test_the_dora_module_refuses_to_hide_a_real_dora_rs(dora_site, tmp_path):
    # What pip leaves of an installed distribution: its metadata folder.
    real = tmp_path / "dora_rs-0.3.12.dist-info"
    real.mkdir()
    (real / "METADATA").write_text("Metadata-Version: 2.1\nName: dora-rs\nVersion: 0.3.12\n")
    imported = subprocess.run(
        [sys.executable, "-c", "import dora"], capture_output=True, text=True, env=with_path(tmp_path, dora_site)
    )
    assert imported.returncode != 0
    assert "ImportError: dora-rs 0.3.12 is installed beside nerve-dora" in imported.stderr, imported.stderr
    alone = subprocess.run([sys.executable, "-c", "import dora.builder"], env=with_path(dora_site))
    assert alone.returncode == 0


def test_a_built_dataflow_is_the_yaml_a_user_would_write(tmp_path):
    with DataflowBuilder("demo") as flow:
        camera = flow.add_node("camera", description="a camera").path("camera.py").env({"FPS": 30})
        camera.add_input("tick", "dora/timer/millis/33")
        image = camera.add_output("image")
        detector = flow.add_node("detector").path("detector.py").args(["--fast"])
        detector.add_input("image", image, queue_size=2, queue_policy="drop_oldest")
        detector.add_input("logs", "dora/logs/warn")
    assert json.loads(flow.to_yaml() or "") == {
        "nodes": [
            {
                "id": "camera",
                "description": "a camera",
                "path": "camera.py",
                "env": {"FPS": 30},
                "inputs": {"tick": "dora/timer/millis/33"},
                "outputs": ["image"],
            },
            {
                "id": "detector",
                "path": "detector.py",
                "args": ["--fast"],
                "inputs": {
                    "image": {"source": "camera/image", "queue_size": 2, "queue_policy": "drop_oldest"},
                    "logs": "dora/logs/warn",
                },
            },
        ]
    }
    for node in ("camera.py", "detector.py"):
        (tmp_path / node).write_text("")
    flow.to_yaml(tmp_path / "dataflow.yml")
    checked = subprocess.run(nerve_cmd("validate", str(tmp_path / "dataflow.yml")), capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    runtime = flow.add_node("runtime").add_operator(Operator("op", python="op.py"))
    (tmp_path / "op.py").write_text("")
    flow.to_yaml(tmp_path / "dataflow.yml")
    checked = subprocess.run(nerve_cmd("validate", str(tmp_path / "dataflow.yml")), capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    # What nerve cannot run is refused by nerve, with its reason, not by the builder.
    runtime.add_operator(Operator("lib", shared_library="build/missing"))
    flow.to_yaml(tmp_path / "dataflow.yml")
    checked = subprocess.run(nerve_cmd("validate", str(tmp_path / "dataflow.yml")), capture_output=True, text=True)
    assert "shared library not found: " in checked.stderr and "build/libmissing.so" in checked.stderr, checked.stderr

    with pytest.raises(ValueError, match="queue_policy must be one of drop_oldest, backpressure, not 'newest'"):
        detector.add_input("x", image, queue_policy="newest")
    with pytest.raises(ValueError, match="queue_size must be a positive integer, not 0"):
        detector.add_input("x", image, queue_size=0)


def test_a_built_dataflow_runs_from_python(tmp_path):
    (tmp_path / "hello.py").write_text("from nerve import Node\nNode().log_info('hello from a built dataflow')\n")
    flow = DataflowBuilder("built")
    flow.add_node("hello").path("hello.py")
    script = (
        "import sys\nfrom nerve.builder import DataflowBuilder\n"
        "flow = DataflowBuilder('built')\nflow.add_node('hello').path('hello.py')\nsys.exit(flow.run('--quiet'))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    log = next((tmp_path / "out").glob("*/hello.log")).read_text()
    assert "INFO hello from a built dataflow" in log
    assert json.loads((tmp_path / "built.yml").read_text()) == flow.to_dict()

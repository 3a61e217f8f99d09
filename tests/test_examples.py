"""Every example runs to completion, as the README says."""

import subprocess
import sys

import pytest
from conftest import REPO, nerve_cmd

EXAMPLES = sorted(p.parent.name for p in (REPO / "examples").glob("*/dataflow.yml"))


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_runs(example, tmp_path):
    dataflow = REPO / "examples" / example / "dataflow.yml"
    result = subprocess.run(
        nerve_cmd("run", str(dataflow), "--build", "--log-dir", str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "dataflow finished" in result.stderr


def test_topic_example_talker_and_listener():
    folder = REPO / "examples" / "topics"
    listener = subprocess.Popen(
        [sys.executable, str(folder / "listener.py")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    talker = subprocess.run([sys.executable, str(folder / "talker.py")], capture_output=True, text=True, timeout=120)
    assert talker.returncode == 0, talker.stderr
    out, err = listener.communicate(timeout=60)
    assert listener.returncode == 0, err
    lines = out.splitlines()
    assert len(lines) == 50 and lines[-1].startswith("pose x=4.9"), out

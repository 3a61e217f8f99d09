"""Every example runs to completion, as the README says."""

import subprocess

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

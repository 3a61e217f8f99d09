"""Broken dataflows fail fast, name the problem and its line, and start nothing."""

import subprocess

import pytest
from conftest import nerve_cmd

CASES = {
    "unknown source node": (
        """
        nodes:
          - id: camera
            path: node.py
            outputs: [image]
          - id: sink
            path: node.py
            inputs:
              image: camra/image
        """,
        ":8:",
        "unknown source node `camra`",
    ),
    "undeclared output": (
        """
        nodes:
          - id: camera
            path: node.py
            outputs: [image]
          - id: sink
            path: node.py
            inputs:
              image: camera/img
        """,
        ":8:",
        "has no output `img`",
    ),
    "duplicate id": (
        """
        nodes:
          - id: a
            path: node.py
          - id: a
            path: node.py
        """,
        ":4:",
        "duplicate node id `a`",
    ),
    "bad timer": (
        """
        nodes:
          - id: a
            path: node.py
            inputs:
              tick: timer/millis/0
        """,
        ":5:",
        "bad timer",
    ),
    "missing file": (
        """
        nodes:
          - id: a
            path: missing.py
        """,
        ":3:",
        "file not found",
    ),
    "wrong type": (
        """
        nodes:
          - id: a
            path: node.py
            outputs: image
        """,
        ":4:",
        "expected a list",
    ),
    "queue of size 0": (
        """
        nodes:
          - id: a
            path: node.py
            outputs: [x]
          - id: b
            path: node.py
            inputs:
              x: {source: a/x, queue_size: 0}
        """,
        ":8:",
        "queue_size",
    ),
    "broken yaml": (
        """
        nodes:
          - id: a
            path: node.py
            inputs: {x: [
        """,
        "dataflow.yml:",
        "",
    ),
    "unknown key": (
        """
        nodes:
          - id: a
            path: node.py
            inptus: {}
        """,
        ":4:",
        "unknown key `inptus` (did you mean `inputs`? expected one of: id, ",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_broken_dataflow_fails_before_starting_anything(dataflows, case):
    yaml, where, what = CASES[case]
    marker = dataflows.tmp_path / "df" / "started"
    path = dataflows.write(
        yaml, {"node.py": f"open({str(marker)!r}, 'w').write('x')\nfrom nerve import Node\nNode()\n"}
    )
    result = subprocess.run(nerve_cmd("run", str(path)), capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "dataflow.yml" in result.stderr and where in result.stderr and what in result.stderr, result.stderr
    assert not marker.exists(), "a node was started"
    assert not (path.parent / "out").exists(), "a run folder was created"


def test_validate_command_accepts_the_examples():
    from conftest import REPO

    for example in sorted((REPO / "examples").glob("*/dataflow.yml")):
        result = subprocess.run(nerve_cmd("validate", str(example)), capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, f"{example}: {result.stderr}"

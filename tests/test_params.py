"""Node parameters across real processes: declared in the dataflow and in a file, read and set with
`nerve param` while the run goes on, refused by a node's callback, in a Python and a Rust node."""

import json
import shutil
import subprocess
import time

import pytest
from conftest import NODES, REPO, nerve_cmd, wait_for

EXAMPLE = REPO / "examples" / "parameters"

DATAFLOW = f"""
nodes:
  - id: controller
    path: controller.py
    inputs:
      tick: timer/millis/50
    outputs: [command]
    params: controller.yml
  - id: limiter
    build: cargo build --release --manifest-path {REPO}/Cargo.toml -p parameters-limiter
    path: {REPO}/target/release/parameters-limiter
    inputs:
      command: controller/command
    params:
      max_speed: 0.8
"""

# A second run with a node of the same id, and one that is gone before anyone asks it.
OTHER = """
nodes:
  - id: controller
    path: sleeper.py
  - id: done
    path: done.py
"""


def nerve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(nerve_cmd(*args), capture_output=True, text=True, timeout=60, check=False)


def param(*args: str) -> subprocess.CompletedProcess[str]:
    return nerve("param", *args)


def run_named(name: str) -> dict | None:
    listed = nerve("list", "--json")
    assert listed.returncode == 0, listed.stderr  # say why, rather than fail to parse nothing
    return next((r for r in json.loads(listed.stdout) if r["name"] == name), None)


def wait_in_log(name: str, node: str, text: str) -> None:
    wait_for(lambda: text in nerve("logs", name, node).stdout, what=f"`{text}` in {node}'s log")


def refused(result: subprocess.CompletedProcess[str], reason: str) -> None:
    assert result.returncode != 0, result.stdout
    assert reason in result.stderr, result.stderr


@pytest.mark.timeout(900)  # builds the example's Rust node (and waits 600 s for the run)
def test_params_are_read_set_and_refused_across_processes(dataflows):
    path = dataflows.write(DATAFLOW, {"controller.yml": "speed: 0.5\nboost: false\nticks: 100000\n"})
    shutil.copy(EXAMPLE / "controller.py", path.parent)
    name = f"params-{time.monotonic_ns()}"
    proc = dataflows.start(path, "--build", "--name", name)
    other = None
    try:
        wait_for(lambda: (r := run_named(name)) is not None and r["state"] == "running", 600, "the run")

        # Python node: declared in a file; the file's `ticks` wins over the code's default.
        listed = param("list", "controller", "--json")
        assert listed.returncode == 0, listed.stderr
        assert json.loads(listed.stdout) == {
            "boost": {"type": "bool", "value": False},
            "speed": {"type": "float", "value": 0.5},
            "ticks": {"type": "int", "value": 100000},
        }
        table = param("list", "controller").stdout.splitlines()
        assert [line.split() for line in table] == [
            ["boost", "bool", "false"],
            ["speed", "float", "0.5"],
            ["ticks", "int", "100000"],
        ]
        # The node's own attempt at a negative speed was refused by its callback.
        wait_in_log(
            name,
            "controller",
            "refused as expected: node `controller` rejected speed = -1.0: speed must be >= 0, got -1.0",
        )

        set_speed = param("set", "controller", "speed", "0.7")
        assert set_speed.returncode == 0 and set_speed.stdout == "controller speed = 0.7\n", set_speed.stderr
        wait_in_log(name, "controller", "commanding speed 0.7")
        refused(
            param("set", "controller", "speed", "-1"),
            "node `controller` rejected speed = -1.0: speed must be >= 0, got -1.0",
        )
        refused(
            param("set", "controller", "ticks", "0"),
            "node `controller` rejected ticks = 0: ValueError: ticks must be at least 1",
        )
        assert param("get", "controller", "speed").stdout == "0.7\n"
        assert param("set", "controller", "boost", "true").returncode == 0
        wait_in_log(name, "controller", "commanding speed 1.4")

        refused(
            param("set", "controller", "boost", "fast"), "node `controller`: parameter `boost` is a bool, not a string"
        )
        refused(param("set", "controller", "speed", "[1, 2]"), "parameter `speed` is a float, not a list of int")
        refused(param("set", "controller", "speed", "[1"), "cannot read the value `[1`")
        refused(
            param("get", "controller", "sped"),
            "node `controller` has no parameter `sped` (its parameters: boost, speed, ticks)",
        )
        refused(
            param("get", "nobody", "speed", "--dataflow", name),
            "has no node `nobody` (its nodes: controller, limiter)",
        )
        refused(param("get", "nobody", "speed"), "no running dataflow has a node `nobody`")

        # `nerve node info` shows the live values beside what the run declared.
        info = subprocess.run(nerve_cmd("node", "info", "controller"), capture_output=True, text=True, timeout=60)
        assert info.returncode == 0 and "params:\n" in info.stdout and "  speed = " in info.stdout, info.stderr

        # Rust node: declared inline, refused by its callback, changes seen by its loop.
        got = param("get", "limiter", "max_speed", "--json")
        assert got.returncode == 0 and json.loads(got.stdout) == {"type": "float", "value": 0.8}, got.stderr
        wait_in_log(
            name,
            "limiter",
            "refused as expected: node `limiter` rejected max_speed = -1.0: max_speed must be > 0, got -1.0",
        )
        wait_in_log(name, "limiter", "max_speed is now 0.8")
        refused(
            param("set", "limiter", "max_speed", "0"),
            "node `limiter` rejected max_speed = 0.0: max_speed must be > 0, got 0.0",
        )
        refused(param("set", "limiter", "max_speed", "high"), "parameter `max_speed` is a float, not a string")
        assert param("set", "limiter", "max_speed", "2").stdout == "limiter max_speed = 2.0\n"
        wait_in_log(name, "limiter", "max_speed is now 2.0")

        # A second run with a `controller` makes the bare node id ambiguous; --dataflow picks.
        other_path = dataflows.write(OTHER, {"done.py": "print('bye')\n"}, name="other")
        shutil.copy(NODES / "sleeper.py", other_path.parent)
        other_name = f"{name}-other"
        other = dataflows.start(other_path, "--name", other_name)

        def other_ready() -> bool:
            run = run_named(other_name)
            return run is not None and {n["id"]: n["state"] for n in run["nodes"]} == {
                "controller": "running",
                "done": "finished",
            }

        wait_for(other_ready, what="the second run")
        refused(param("list", "controller"), f"several running dataflows have a node `controller`: {name} (")
        mine = param("list", "controller", "--dataflow", name, "--json")
        assert mine.returncode == 0 and "speed" in json.loads(mine.stdout), mine.stderr
        theirs = param("list", "controller", "--dataflow", other_name)
        assert theirs.returncode == 0 and theirs.stdout == "node `controller` has no parameters\n", theirs.stderr
        refused(param("list", "done", "--dataflow", other_name), "node `done` is not running (finished)")
    finally:
        for run, handle in ((name, proc), (f"{name}-other", other)):
            if handle is not None:
                nerve("stop", run)
                out, err = handle.communicate(timeout=60)
                assert handle.returncode == 0, out + err

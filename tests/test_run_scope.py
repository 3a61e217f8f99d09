"""A run's topics, services and actions are its own: two runs of one dataflow never talk to
each other, a `share:`d name connects runs, and a process outside reaches a run by naming it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import nerve
import pytest
from conftest import Dataflows, nerve_cmd, unique_topic, wait_for

# The detector answers `detect` and publishes `scene`, the planner calls one and reads the other:
# each writes its run's name (NERVE_RUN, the run id without --name), so a reply or a message
# that crossed from the other run would name the other run.
DETECTOR = """
import os
import nerve

run = os.environ["NERVE_RUN"]
server = nerve.Service("detect", lambda request: [run])
node = nerve.Node()
for event in node:
    if event["type"] == "INPUT":
        node.send_output("scene", [run])
    elif event["type"] == "STOP":
        break
"""

PLANNER = """
import os
import pathlib
import nerve

run = os.environ["NERVE_RUN"]
client = nerve.Client("detect")
node = nerve.Node()
with (pathlib.Path(os.environ["OUT"]) / f"{run}.log").open("a", buffering=1) as log:
    for event in node:
        if event["type"] == "INPUT" and event["id"] == "tick":
            try:
                log.write("reply " + client.call(b"?", timeout=10)["value"][0].as_py() + "\\n")
            except nerve.ServiceError:
                pass  # at the stop, the detector may end before it answers
        elif event["type"] == "INPUT" and event["id"] == "scene":
            log.write("scene " + event["value"][0].as_py() + "\\n")
        elif event["type"] == "STOP":
            break
"""

PERCEPTION = """
nodes:
  - id: detector
    path: detector.py
    inputs: {tick: timer/millis/20}
    outputs:
      - id: scene
        topic: scene
    services: {serve: [detect]}
  - id: planner
    path: planner.py
    inputs:
      tick: timer/millis/20
      scene: topic/scene
    services: {call: [detect]}
"""


def start(path: Path, out: Path, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "OUT": str(out), "NERVE_LOG": "info"}
    return subprocess.Popen(
        nerve_cmd("run", str(path), *extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def stop(runs: list[subprocess.Popen[str]]) -> list[str]:
    """Stops the runs; what each wrote on stderr."""
    for run in runs:
        run.send_signal(signal.SIGINT)
    errs = []
    for run in runs:
        out, err = run.communicate(timeout=60)
        assert run.returncode == 0, out + err
        errs.append(err)
    return errs


def logs(out: Path) -> dict[str, list[str]]:
    """Each run's log lines, by the run's name."""
    return {f.stem: f.read_text().splitlines() for f in out.glob("*.log")}


def has(lines: list[str], kind: str, n: int) -> bool:
    return sum(line.startswith(f"{kind} ") for line in lines) >= n


def test_two_runs_of_one_dataflow_without_names_stay_apart(dataflows: Dataflows, tmp_path: Path) -> None:
    path = dataflows.write(PERCEPTION, {"detector.py": DETECTOR, "planner.py": PLANNER})
    out = tmp_path / "out"
    out.mkdir()
    runs = [start(path, out)]
    try:
        wait_for(lambda: any(has(lines, "reply", 5) and has(lines, "scene", 5) for lines in logs(out).values()))
        runs.append(start(path, out))
        wait_for(
            lambda: (
                len(logs(out)) == 2
                and all(has(lines, "reply", 5) and has(lines, "scene", 5) for lines in logs(out).values())
            ),
            what="the second run's planner to get replies and scenes",
        )
        # Both runs now serve and publish the same names side by side: each planner goes on
        # getting replies and messages while the other run is up.
        now = {run: len(lines) for run, lines in logs(out).items()}
        wait_for(
            lambda: all(len(logs(out)[run]) >= n + 40 for run, n in now.items()),
            what="both planners to go on while both runs run",
        )
    finally:
        errs = stop(runs)
    # Without --name, a run's name is its run id.
    ids = {m.group(1) for err in errs if (m := re.search(r"run=([0-9a-f-]{36})", err))}
    seen = logs(out)
    assert set(seen) == ids and len(ids) == 2, (seen.keys(), ids)
    for run, lines in seen.items():
        assert set(lines) == {f"reply {run}", f"scene {run}"}, f"run {run} heard another run: {set(lines)}"


BEACON = """
import os
import pathlib
import nerve

run = os.environ["NERVE_RUN"]
node = nerve.Node()
with (pathlib.Path(os.environ["OUT"]) / f"{run}.log").open("a", buffering=1) as log:
    for event in node:
        if event["type"] == "INPUT" and event["id"] == "tick":
            node.send_output("out", [run])
        elif event["type"] == "INPUT" and event["id"] == "heard":
            log.write(event["value"][0].as_py() + "\\n")
        elif event["type"] == "STOP":
            break
"""


def test_a_shared_name_connects_runs_and_processes_outside(dataflows: Dataflows, tmp_path: Path) -> None:
    beacon = unique_topic("beacon")
    path = dataflows.write(
        f"""
        share: [{beacon}]
        nodes:
          - id: beacon
            path: beacon.py
            inputs:
              tick: timer/millis/20
              heard: topic/{beacon}
            outputs:
              - id: out
                topic: {beacon}
        """,
        {"beacon.py": BEACON},
    )
    out = tmp_path / "out"
    out.mkdir()
    outside = nerve.Subscriber(beacon, queue_size=1000)
    names = [f"beacon-a-{os.getpid()}", f"beacon-b-{os.getpid()}"]
    runs = [start(path, out, "--name", name) for name in names]
    try:
        wait_for(
            lambda: all(set(logs(out).get(name, [])) == set(names) for name in names),
            what="each run to hear both runs on the shared topic",
        )
        heard: set[str] = set()
        while heard != set(names):
            message = outside.recv(30)
            assert message is not None, f"a process outside any run heard only {heard}"
            heard.add(message["value"][0].as_py())
    finally:
        stop(runs)


CAMERA = """
import os
import nerve

run = os.environ["NERVE_RUN"]
info = nerve.Service("camera/info", lambda request: [run])
node = nerve.Node()
for event in node:
    if event["type"] == "INPUT":
        node.send_output("image", [run])
    elif event["type"] == "STOP":
        break
"""


def test_a_process_outside_reaches_a_run_by_naming_it(dataflows: Dataflows, tmp_path: Path) -> None:
    path = dataflows.write(
        """
        nodes:
          - id: camera
            path: camera.py
            inputs: {tick: timer/millis/20}
            outputs:
              - id: image
                topic: camera/image
              - id: unpublished
        """,
        {"camera.py": CAMERA},
    )
    name = f"scope-{os.getpid()}"
    everyone = nerve.Subscriber("camera/image")
    theirs = nerve.Subscriber("camera/image", run=name, queue_size=100)
    run = start(path, tmp_path, "--name", name)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(nerve_cmd(*args), capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        return done

    try:
        for _ in range(10):
            message = theirs.recv(30)
            assert message is not None and message["value"].to_pylist() == [name]
            assert message["id"] == "camera/image"
        assert everyone.recv(0) is None and everyone.publisher_count == 0, "the run's topic is not the global one"

        client = nerve.Client("camera/info", run=name)
        assert client.wait_for_server(30)
        assert client.call(b"?")["value"].to_pylist() == [name]
        assert nerve.Client("camera/info").server_count == 0

        rows = [line.split() for line in cli("topic", "list").stdout.splitlines()]
        assert rows[0] == ["TOPIC", "RUN"]
        assert ["camera/image", name] in rows and ["camera/unpublished", name] in rows, rows
        services = [line.split() for line in cli("service", "list").stdout.splitlines()]
        assert services[0] == ["SERVICE", "RUN", "HOST"] and ["camera/info", name] in [s[:2] for s in services]
        echoed = cli("topic", "echo", "camera/image", "--run", name, "--count", "1", "--timeout", "30")
        assert f'values: ["{name}"]' in echoed.stdout, echoed.stdout
        called = cli("service", "call", "camera/info", '"?"', "--run", name)
        assert f'values: ["{name}"]' in called.stdout, called.stdout
    finally:
        stop([run])


def test_shared_and_run_contradict_each_other() -> None:
    with pytest.raises(ValueError, match="a name is either global or one run's"):
        nerve.Subscriber("x", shared=True, run="r")
    with pytest.raises(ValueError, match="bad run name"):
        nerve.Publisher("x", run="a/b")


def test_a_bad_run_name_is_refused_before_anything_runs(dataflows: Dataflows) -> None:
    path = dataflows.write(PERCEPTION, {"detector.py": DETECTOR, "planner.py": PLANNER})
    done = subprocess.run(nerve_cmd("run", str(path), "--name", "x" * 51), capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "it is longer than 50 bytes" in done.stderr, done.stderr


def test_a_dynamic_node_started_by_hand_uses_its_runs_names(dataflows: Dataflows, tmp_path: Path) -> None:
    """A `path: dynamic` node has no run in its environment: once its `Node()` joined the run,
    what its code creates is the run's, as in a node nerve started."""
    path = dataflows.write(
        """
        nodes:
          - id: camera
            path: camera.py
            inputs: {tick: timer/millis/20}
            outputs:
              - id: image
                topic: camera/image
          - id: viewer
            path: dynamic
        """,
        {"camera.py": CAMERA},
    )
    name = f"dynamic-{os.getpid()}"
    run = start(path, tmp_path, "--name", name)
    viewer = (
        "import nerve\n"
        "node = nerve.Node('viewer')\n"
        "image = nerve.Subscriber('camera/image').recv(30)\n"
        "info = nerve.Client('camera/info')\n"
        "assert info.wait_for_server(30)\n"
        "print(image['value'].to_pylist(), info.call(b'?')['value'].to_pylist(), flush=True)\n"
    )
    try:
        shown = subprocess.run([sys.executable, "-c", viewer], capture_output=True, text=True, timeout=60)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout == f"{[name]} {[name]}\n", shown.stdout
    finally:
        stop([run])

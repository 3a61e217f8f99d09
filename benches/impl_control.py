"""ORC's 1 kHz force loop (the `control-loop` scenario): examples/force-control's C++ robot, which
owns the clock, and its Python PI controller, which answers every force reading with a command.

Three implementations take turns, as in every scenario:

* nerve: the example's own dataflow.yml, with the robot's path pointed at the suite's Release
  build of it and the run's length and record appended to its args;
* nerve (realtime): the same with `realtime:` on both nodes (impl_nerve.REALTIME: SCHED_FIFO
  80, locked memory; nerve refuses it without root, and the row says so);
* ZeroMQ: the same loop and physics in C++ over libzmq (benches/control-loop/robot_zmq.cpp,
  including the example's loop.hpp and plant.hpp), the same control law in Python over pyzmq
  (benches/nodes/controller_zmq.py, run by the peers' venv), PUB/SUB over ipc://, each
  subscriber keeping only the newest message as nerve's keep-latest inputs do.

Every robot writes its record (`--record`): one line per reading, when it was sent, its round
trip (sent → the answer in the robot's hands) and whether the answer missed the next deadline.
A run fails if the controller did not bring the force to its setpoint (the example's check).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import yaml

from benches import impl_nerve, native_nodes
from benches.model import Case, Samples
from benches.peers import _harness, venv

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "force-control"
CONTROLLER_ZMQ = Path(__file__).resolve().parent / "nodes" / "controller_zmq.py"
#: The robot's record in the run's folder.
RECORD = "loop.txt"
#: How long a run may take beyond its loop (starting, priming, writing the record), in seconds.
PATIENCE_S = 120.0


def supports(case: Case) -> bool:
    return case.scenario == "control-loop"


def robot_args(case: Case, folder: Path) -> list[str]:
    """What the harness appends to the robot's args: the run's length and where the record goes
    (a flag given twice counts as its last)."""
    return ["--seconds", f"{case.seconds:g}", "--record", str(folder / RECORD)]


def read_record(path: Path) -> dict[str, list[int]]:
    """The robot's record, as Samples.control holds it."""
    raw = np.loadtxt(path, dtype=np.int64, ndmin=2)
    return {"sent_ns": raw[:, 0].tolist(), "round_trip_ns": raw[:, 1].tolist(), "missed": raw[:, 2].tolist()}


def take_record(samples: Samples, folder: Path) -> Samples:
    """`samples` with the record of the run in `folder`, or with why there is none."""
    try:
        samples.control = read_record(folder / RECORD)
    except (OSError, ValueError) as e:
        samples.error = f"the robot's record: {e}"
    return samples


def dataflow(case: Case, folder: Path, realtime: bool) -> str:
    """The example's dataflow.yml for a run in `folder`: the bench's robot build, the run's
    args appended to the example's, the controller's path made absolute, and `realtime:` on
    every node if asked."""
    spec = yaml.safe_load((EXAMPLE / "dataflow.yml").read_text())
    nodes = {node["id"]: node for node in spec["nodes"]}
    robot, controller = nodes["robot"], nodes["controller"]
    del robot["build"]
    robot["path"] = str(native_nodes.FORCE_ROBOT)
    robot["args"] = " ".join([robot.get("args", ""), *robot_args(case, folder)]).strip()
    controller["path"] = str(EXAMPLE / controller["path"])
    if realtime:
        for node in nodes.values():
            node["realtime"] = yaml.safe_load(f"{{{impl_nerve.REALTIME}}}")
    return yaml.safe_dump(spec, sort_keys=False)


class NerveLoop:
    """The example over nerve, with `realtime:` on both nodes or without."""

    def __init__(self, realtime: bool) -> None:
        self.realtime = realtime
        self.NAME = "nerve (realtime)" if realtime else "nerve"

    def supports(self, case: Case) -> bool:
        return supports(case)

    def run(self, case: Case, workdir: Path) -> Samples:
        folder = _harness.folder_for(self.NAME, case, workdir)
        samples = Samples(self.NAME, case)
        if self.realtime:
            samples.note = f"both nodes `realtime: {{{impl_nerve.REALTIME}}}`"
        samples.error = impl_nerve.failure(impl_nerve.run_dataflow(folder, dataflow(case, folder, self.realtime)))
        return samples if samples.error else take_record(samples, folder)


class ZmqLoop:
    """The same loop over ZeroMQ: the C++ robot over libzmq, the Python controller over pyzmq."""

    NAME = "zeromq (ipc)"

    def supports(self, case: Case) -> bool:
        return supports(case)

    def run(self, case: Case, workdir: Path) -> Samples:
        samples = Samples(self.NAME, case)
        samples.note = "robot: C++ over libzmq, controller: Python over pyzmq; PUB/SUB, subscribers `CONFLATE`"
        if not native_nodes.ZMQ_ROBOT.exists():
            samples.error = "the ZeroMQ robot was not built: CMake found no libzmq (apt-get install -y libzmq3-dev)"
            return samples
        folder = _harness.folder_for(self.NAME, case, workdir)
        samples.error = self.loop(case, folder)
        return samples if samples.error else take_record(samples, folder)

    def loop(self, case: Case, folder: Path) -> str | None:
        """Runs robot and controller in `folder` (the robot binds its sockets there) until both
        end; why they failed, if they did."""
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}
        controller = [str(venv.ensure()), str(CONTROLLER_ZMQ)]  # installed before the robot's clock starts
        procs = [
            _harness.Proc("robot", 0, [str(native_nodes.ZMQ_ROBOT), *robot_args(case, folder)], folder, env),
            _harness.Proc("controller", 0, controller, folder, env),
        ]
        try:
            if not _harness.wait_all(procs, time.monotonic() + case.seconds + PATIENCE_S):
                stuck = ", ".join(p.name for p in procs if p.alive())
                return f"timed out after {case.seconds + PATIENCE_S:.0f} s ({stuck} still running)"
            return next((failed for p in procs if (failed := p.failure())), None)
        finally:
            for p in procs:
                p.kill()


IMPLEMENTATIONS = (NerveLoop(False), NerveLoop(True), ZmqLoop())

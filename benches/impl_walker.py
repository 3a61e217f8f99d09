"""The assistive walker's eight modules on two boards (the `walker` scenario): the DALi cWalker
study's Table I (../shared/papers/003_4e703e5605ad2e99.txt, end of section IV).

The boards are two hosts (network namespaces joined by a veth pair, testbed/netns.py; root). A
case is one of the paper's mappings of the modules to the boards (examples/walker/workload.py,
MAPPINGS), which two implementations run in turn:

* ``nerve``: examples/walker/dataflow.yml on a cluster, its coordinator on host 0, daemon
  ``board1`` there and ``board2`` on host 1, each labelled with the modules its board runs
  (every module asks for a label of its own); the run fails unless ``nerve list`` shows every
  module where its mapping puts it;
* ``zeromq (pyzmq)``: the same modules, sending the same bytes, over ZeroMQ
  (benches/nodes/walker_zmq.py, run by the peers' venv python), a process per module on its
  board's host; ipc between the modules of a board, TCP between the boards.

Every module runs with SCHED_FIFO at its priority and its memory locked, as the paper's did;
nerve's daemons, which carry the messages between boards, above them all
(``workload.DAEMON_PRIORITY``), as ZeroMQ's I/O threads inherit their module's priority.
AVI times every message it receives (after its first second of activations) and writes the
samples, and the count of messages it never got, to a file.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from benches.impl_lan import COORDINATOR, cluster_up, nerve, on_two_hosts
from benches.model import Case, Samples
from benches.peers import _harness, venv
from testbed.netns import Hosts

# examples/walker is no package: its modules import `workload` from their own folder, as this does.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "walker"))
import workload

WALKER = Path(workload.__file__).parent
ZMQ_NODE = Path(__file__).resolve().parent / "nodes" / "walker_zmq.py"

#: The boards' addresses: the hosts' (testbed/netns.py).
ADDRESSES = ("10.231.0.1", "10.231.0.2")
#: The nerve run's name, for `nerve list`.
RUN_NAME = "walker"
#: Seconds from launching the ZeroMQ modules to their common start: enough for eight Python
#: processes to start on two cores and for every subscription to reach its publisher.
ZMQ_START_AFTER_S = 4.0
#: Seconds a run may take beyond its activations (start-up, shut-down) before it counts as stuck.
PATIENCE_S = 120.0


class Walker:
    """One implementation: `measure(case, hosts, folder, samples)` runs the case on two fresh
    hosts and fills `samples` in."""

    def __init__(self, name: str, measure: Callable[[Case, Hosts, Path, Samples], None]) -> None:
        self.NAME, self.measure = name, measure

    def supports(self, case: Case) -> bool:
        return case.scenario == "walker"

    def run(self, case: Case, workdir: Path) -> Samples:
        folder = _harness.folder_for(f"walker-{self.NAME}", case, workdir)
        samples = Samples(self.NAME, case, note=placement(case.mapping))
        return on_two_hosts(samples, "nw", lambda hosts: self.measure(case, hosts, folder, samples))


def placement(mapping: int) -> str:
    """Which modules run on which board, and which host that is."""
    boards = [[m for m in workload.MODULES if workload.board_of(m, mapping) == board] for board in (1, 2)]
    return "; ".join(f"board {b + 1} (host {b}): {', '.join(modules) or 'none'}" for b, modules in enumerate(boards))


def cluster(case: Case, hosts: Hosts, folder: Path, samples: Samples) -> None:
    """examples/walker's dataflow on a cluster whose daemons' labels choose the mapping."""
    daemons = {f"board{b}": (b - 1, workload.daemon_options(case.mapping, b)) for b in (1, 2)}
    with cluster_up(hosts, folder / "cluster.log", daemons):
        start = nerve("start", str(dataflow(case, folder)), "--attach", "--name", RUN_NAME, *COORDINATOR)
        subprocess.run(
            hosts.on(0, start), check=True, capture_output=True, text=True, timeout=case.seconds + PATIENCE_S
        )
        check_placement(hosts, case.mapping)
    take_avi(samples, folder / "avi.json")


def dataflow(case: Case, folder: Path) -> Path:
    """examples/walker/dataflow.yml for one run, in `folder`: its module path made absolute, the
    run's length and AVI's results file in its environment; everything else as it is."""
    flow = yaml.safe_load((WALKER / "dataflow.yml").read_text())
    for node in flow["nodes"]:
        node["path"] = str(WALKER / node["path"])
    env = {"WALKER_SECONDS": f"{case.seconds:g}", "WALKER_RESULTS": str(folder / "avi.json")}
    flow["env"] = {**flow.get("env", {}), **env}
    path = folder / "dataflow.yml"
    path.write_text(yaml.safe_dump(flow, sort_keys=False))
    return path


def check_placement(hosts: Hosts, mapping: int) -> None:
    """Fails unless every module ran on the daemon of its board in `mapping`, as `nerve list` says."""
    listed = hosts.on(0, nerve("list", "--all", "--json", *COORDINATOR))
    runs = json.loads(subprocess.run(listed, check=True, capture_output=True, text=True, timeout=60).stdout)
    ran = {node["id"]: node["machine"] for run in runs if run["name"] == RUN_NAME for node in run["nodes"]}
    wanted = {m: f"board{workload.board_of(m, mapping)}" for m in workload.MODULES}
    if ran != wanted:
        wrong = ", ".join(f"{m} on {ran.get(m)}" for m in wanted if ran.get(m) != wanted[m])
        raise RuntimeError(f"mapping {mapping} placed wrongly: {wrong}")


def zeromq(case: Case, hosts: Hosts, folder: Path, samples: Samples) -> None:
    """A walker_zmq.py process per module on its board's host, all starting at one moment."""
    python = str(venv.ensure())
    start_ns = time.monotonic_ns() + int(ZMQ_START_AFTER_S * 1e9)
    procs: dict[str, subprocess.Popen[str]] = {}
    try:
        for module in workload.MODULES:
            argv = [python, str(ZMQ_NODE), module, "--mapping", str(case.mapping)]
            argv += ["--board-addresses", ",".join(ADDRESSES), "--ipc-dir", str(hosts.runtime)]
            argv += ["--start", str(start_ns), "--seconds", f"{case.seconds:g}", "--results", str(folder / "avi.json")]
            with open(folder / f"{module}.log", "w") as log:
                procs[module] = hosts.popen(workload.board_of(module, case.mapping) - 1, argv, stdout=log, stderr=log)
        wait_ended(procs, folder, ZMQ_START_AFTER_S + case.seconds + PATIENCE_S)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    take_avi(samples, folder / "avi.json")


def wait_ended(procs: dict[str, subprocess.Popen[str]], folder: Path, timeout_s: float) -> None:
    """Returns once every module has ended well; the first that failed, or the time running out,
    is an error."""
    end = time.monotonic() + timeout_s
    while True:
        for module, proc in procs.items():
            if proc.poll() not in (None, 0):
                why = _harness.reason(folder / f"{module}.log")
                raise RuntimeError(f"{module} exited with {proc.returncode}: {why}")
        if all(proc.poll() == 0 for proc in procs.values()):
            return
        if time.monotonic() > end:
            running = ", ".join(module for module, proc in procs.items() if proc.poll() is None)
            raise RuntimeError(f"still running after {timeout_s:.0f} s: {running}")
        time.sleep(0.1)


def take_avi(samples: Samples, results: Path) -> None:
    """AVI's latencies and the messages it lost, from the results file it writes at its end."""
    if not results.is_file():
        raise RuntimeError(f"AVI wrote no results to {results}")
    taken = json.loads(results.read_text())
    samples.by_topic_ns, samples.lost = taken["latency_ns"], taken["lost"]


IMPLEMENTATIONS = (Walker("nerve", cluster), Walker("zeromq (pyzmq)", zeromq))

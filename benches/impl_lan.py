"""Two hosts on a shaped 1 Gbit/s link (DORA's LAN experiment, RIMAOS2C's message bridge).

The hosts are network namespaces joined by veth links (needs root), each host's outgoing link
shaped by ``tc`` (see ``Hosts.shape``). Three ways across:

* ``cluster``: a nerve dataflow over the two hosts (``nerve start``): the producer on one host,
  the consumers on the other, through the daemons' bridge: one network stream for the output,
  fanned out by shared memory on the consumers' host;
* ``zenoh``: a plain Zenoh publisher and subscriber (Rust, no nerve at all) on the same link:
  the baseline nerve's bridge rides on;
* ``zenoh`` with several consumers: no bridge, every subscriber process a Zenoh session of its
  own, so the link carries one stream per subscriber (RIMAOS2C's case without the bridge).

``cluster-latest`` is the cluster with the consumer's input a keep-latest queue
(``queue_size: 1, queue_policy: drop_oldest``), and ``zenoh-drop`` the plain pair with a
publisher that drops when the link is full: what a robot does with a camera stream on a link
too slow for it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from benches.model import WARMUP, Case, Samples, read_stamp_lines
from benches.native_nodes import RUST_NODE, build_rust
from testbed.netns import Hosts

ROOT = Path(__file__).resolve().parent.parent
PY_NODE = ROOT / "benches" / "nodes" / "dataflow_node.py"
RATE, DELAY = "1gbit", "0.2ms"
#: How every host reaches the cluster's coordinator, which runs on host 0.
COORDINATOR = ("--coordinator", "10.231.0.1")
NAMES = {
    "cluster": "nerve cluster",
    "cluster-latest": "nerve cluster (keep latest)",
    "zenoh": "zenoh (plain, Rust)",
    "zenoh-drop": "zenoh (plain, Rust, drops)",
}


def supports(case: Case) -> bool:
    return case.scenario == "lan"


def nerve(*args: str) -> list[str]:
    return [sys.executable, "-m", "nerve", *args]


def run(case: Case, workdir: Path) -> Samples:
    folder = workdir / f"lan--{case.key}"
    folder.mkdir(parents=True, exist_ok=True)
    samples = Samples(NAMES[case.transport], case)

    def measure(hosts: Hosts) -> None:
        samples.note = hosts.shape(RATE, DELAY)
        way = cluster if case.transport.startswith("cluster") else plain_zenoh
        way(case, hosts, folder, samples)

    return on_two_hosts(samples, "nl", measure)


def on_two_hosts(samples: Samples, tag: str, measure: Callable[[Hosts], None]) -> Samples:
    """`samples` once `measure` has run on two fresh hosts, removed after it; what went wrong,
    in `samples.error` (root is needed, and the row says so without it)."""
    if os.geteuid() != 0:
        samples.error = "needs root (network namespaces)"
        return samples
    hosts = Hosts(f"{tag}{os.getpid() % 10000}", 2)
    try:
        measure(hosts)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, RuntimeError, OSError) as e:
        detail = getattr(e, "stderr", None) or str(e)
        samples.error = f"failed: {str(detail).strip().splitlines()[-1:]}"
    finally:
        hosts.remove()
    return samples


@contextlib.contextmanager
def cluster_up(hosts: Hosts, log: Path, daemons: dict[str, tuple[int, list[str]]]) -> Iterator[None]:
    """A nerve cluster on `hosts`: the coordinator on host 0 and a daemon per machine id of
    `daemons` (its host and further options), all joined before it is used; stopped as Ctrl-C
    stops them afterwards. Their output goes to `log`."""
    with open(log, "w") as out:
        procs = [hosts.popen(0, nerve("coordinator", "--interface", "10.231.0.1"), stdout=out, stderr=out)]
        try:
            for machine, (host, options) in daemons.items():
                argv = nerve("daemon", "--machine-id", machine, *COORDINATOR, *options)
                procs.append(hosts.popen(host, argv, stdout=out, stderr=out))
            deadline = time.monotonic() + 30
            while not joined(hosts, list(daemons)):
                if time.monotonic() > deadline:
                    raise RuntimeError("the daemons did not join")
                time.sleep(0.2)
            yield
        finally:
            for proc in reversed(procs):
                proc.send_signal(signal.SIGINT)
                proc.wait(timeout=60)


def joined(hosts: Hosts, machines: list[str]) -> bool:
    """Whether the daemon of every one of `machines` has joined the coordinator."""
    argv = hosts.on(0, [*nerve("check", *COORDINATOR)])
    check = subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout
    return all(f"daemon `{machine}`" in check for machine in machines)


def cluster(case: Case, hosts: Hosts, folder: Path, samples: Samples) -> None:
    """The producer on machine a (host 0, also the coordinator's), the consumers on machine b."""
    with cluster_up(hosts, folder / "cluster.log", {"a": (0, []), "b": (1, [])}):
        nodes = [
            "nodes:\n",
            f"  - id: p0\n    path: {PY_NODE}\n    deploy: {{machine: a}}\n    outputs: [data]\n"
            f"    args: producer {case.size} {case.count} {case.rate_hz} 1 {folder / 'p0.json'} {WARMUP}\n",
        ]
        latest = "{source: p0/data, queue_size: 1, queue_policy: drop_oldest}"
        source = latest if case.transport == "cluster-latest" else "p0/data"
        for c in range(case.consumers):
            nodes.append(
                f"  - id: c{c}\n    path: {PY_NODE}\n    deploy: {{machine: b}}\n    inputs: {{data: {source}}}\n"
                f"    args: consumer {folder / f'c{c}.txt'} {WARMUP}\n"
            )
        (folder / "dataflow.yml").write_text("".join(nodes))
        argv = hosts.on(0, [*nerve("start", str(folder / "dataflow.yml"), "--attach"), *COORDINATOR])
        subprocess.run(argv, check=True, capture_output=True, text=True, timeout=1800)
        for c in range(case.consumers):
            read_stamp_lines(folder / f"c{c}.txt", c, samples)
        samples.take_node_stats(json.loads((folder / "p0.json").read_text()), None)


def plain_zenoh(case: Case, hosts: Hosts, folder: Path, samples: Samples) -> None:
    """The subscribers on host 1, each listening on a port of its own; the publisher on host 0
    connects to every one of them."""
    if not RUST_NODE.exists():
        build_rust()
    endpoints = [f"tcp/10.231.0.2:{7447 + c}" for c in range(case.consumers)]
    subs = []
    try:
        for c, endpoint in enumerate(endpoints):
            argv = [str(RUST_NODE), "zenoh-sub", str(case.count), str(folder / f"c{c}.txt"), endpoint]
            subs.append(hosts.popen(1, argv, stdout=subprocess.PIPE))
            assert subs[-1].stdout
            if subs[-1].stdout.readline().strip() != "listening":
                raise RuntimeError("a Zenoh subscriber did not start")
        congestion = "drop" if case.transport == "zenoh-drop" else "block"
        rate = str(case.rate_hz)
        argv = [str(RUST_NODE), "zenoh-pub", str(case.size), str(case.count), rate, ",".join(endpoints), congestion]
        publisher = hosts.popen(0, argv, stderr=subprocess.PIPE)
        _, err = publisher.communicate(timeout=1800)
        if publisher.returncode != 0:
            raise RuntimeError(err.strip() if err else "the Zenoh publisher failed")
        for sub in subs:
            sub.wait(timeout=180)
    finally:
        for sub in subs:
            if sub.poll() is None:
                sub.kill()
                sub.wait()
    for c in range(case.consumers):
        read_stamp_lines(folder / f"c{c}.txt", c, samples)

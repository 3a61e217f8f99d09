"""Helpers for tests that run real dataflows: real processes, real shared memory."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NODES = Path(__file__).resolve().parent / "nodes"
sys.path.insert(0, str(REPO))  # testbed/, shared with the benchmark suite

from testbed.cargo import build_workspace_binaries  # noqa: E402
from testbed.netns import RANGE_ENV, ZENOH_ENV, Hosts  # noqa: E402

# No test traffic leaves the machine: discovery on this host only (nerve's default, made sure
# of here), no Zenoh file widening it; the `hosts` fixture gives its namespaces the subnet range
# on their private links.
os.environ[RANGE_ENV] = "host"
os.environ.pop(ZENOH_ENV, None)


def nerve_shm_objects() -> set[str]:
    """Names of every nerve shared-memory object on this machine."""
    return {n for n in os.listdir("/dev/shm") if n.startswith("nerve.")}


def nerve_cmd(*args: str) -> list[str]:
    """The installed ``nerve`` command, run with the interpreter of the tests."""
    return [sys.executable, "-m", "nerve", *args]


@dataclass
class Run:
    """A finished ``nerve run``."""

    returncode: int
    stdout: str
    stderr: str
    run_dir: Path

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def run_id(self) -> str:
        m = re.search(r"run=([0-9a-f-]{36})", self.stderr)
        assert m, f"no run id in:\n{self.stderr}"
        return m.group(1)

    def node_lines(self, node: str) -> list[str]:
        prefix = f"[{node}] "
        return [line[len(prefix) :] for line in self.stdout.splitlines() if line.startswith(prefix)]


class Dataflows:
    """Writes dataflow folders under a test's tmp_path and runs them."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path

    def write(self, yaml: str, nodes: dict[str, str] | None = None, name: str = "df") -> Path:
        folder = self.tmp_path / name
        folder.mkdir(exist_ok=True)
        for file, code in (nodes or {}).items():
            (folder / file).write_text(textwrap.dedent(code))
        path = folder / "dataflow.yml"
        path.write_text(textwrap.dedent(yaml).lstrip("\n"))
        return path

    def start(self, path: Path, *extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            nerve_cmd("run", str(path), *extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "NERVE_LOG": "info"},
        )

    def wait_accepting(self, path: Path, proc: subprocess.Popen[str]) -> str:
        """Waits until the run ``proc`` makes of ``path`` takes nodes started by hand (its socket
        is bound: the run folder alone comes before it); returns the run's id."""

        def socket_bound() -> bool:
            runs = list((path.parent / "out").glob("*"))
            return proc.poll() is not None or (len(runs) == 1 and (runtime_dir() / f"{runs[0].name}.sock").exists())

        wait_for(socket_bound, what="the run's socket")
        assert proc.poll() is None, proc.communicate()
        return next((path.parent / "out").iterdir()).name

    def interrupt(self, proc: subprocess.Popen[str]) -> tuple[str, str]:
        """Ctrl-C for the run ``proc``; returns its output once it ended. A run that does not end
        fails the test with every thread's stack, so a hang says where it hangs."""
        proc.send_signal(signal.SIGINT)
        try:
            return proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            gdb = shutil.which("gdb")
            stacks = (
                subprocess.run(
                    [gdb, "-p", str(proc.pid), "-batch", "-ex", "thread apply all bt"],
                    capture_output=True,
                    text=True,
                    check=False,
                ).stdout
                if gdb
                else "(no gdb on this machine to show the run's threads)"
            )
            proc.kill()
            out, err = proc.communicate()
            pytest.fail(f"the run did not end within 30 s of Ctrl-C\n{out}\n{err}\n{stacks}")

    def run(self, path: Path, *extra: str, timeout: float = 120) -> Run:
        proc = self.start(path, *extra)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
            pytest.fail(f"dataflow did not finish within {timeout}s\n{out}\n{err}")
        return Run(proc.returncode, out, err, path.parent)


@pytest.fixture
def dataflows(tmp_path: Path) -> Dataflows:
    return Dataflows(tmp_path)


@pytest.fixture(autouse=True)
def no_shm_leak():
    """Every test must leave /dev/shm as it found it."""
    before = nerve_shm_objects()
    yield

    def leaked() -> set[str]:
        # A run that is still going (its socket exists) is somebody else's, not a leak: a run
        # removes its socket only after its shared memory.
        def running(name: str) -> bool:
            return (runtime_dir() / f"{name.split('.')[1]}.sock").exists()

        return {n for n in nerve_shm_objects() - before if not running(n)}

    deadline = time.monotonic() + 5
    while leaked() and time.monotonic() < deadline:
        time.sleep(0.05)
    left = leaked()
    assert not left, f"shared memory left behind: {sorted(left)}"


def log_lines(path: Path) -> list[str]:
    """The lines of a node's log file as the terminal showed them: without the time each
    starts with."""
    return [line.split(" ", 1)[-1] for line in path.read_text().splitlines()]


def runtime_dir() -> Path:
    """Where nerve keeps the runtime's sockets and the topic registry."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    return Path(xdg) / "nerve" if xdg else Path(f"/tmp/nerve-{os.getuid()}")


def unique_topic(name: str) -> str:
    """A topic name no other test (or earlier run) uses."""
    return f"test/{name}/{os.getpid()}/{time.monotonic_ns()}"


def zenoh_config(folder: Path, role: str, port: int) -> Path:
    """Zenoh settings for processes of this host that meet without multicast: the ``server``
    listens on ``port``, any other role connects to it."""
    if role == "server":
        endpoints = f'listen: {{ endpoints: ["tcp/127.0.0.1:{port}"] }},'
    else:
        endpoints = f'listen: {{ endpoints: ["tcp/127.0.0.1:0"] }}, connect: {{ endpoints: ["tcp/127.0.0.1:{port}"] }},'
    path = folder / f"{role}.json5"
    path.write_text(f'{{ mode: "peer", {endpoints} scouting: {{ multicast: {{ enabled: false }} }} }}')
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def target_dir() -> Path:
    """Where this workspace's Rust code is built: what `cargo build` here would use."""
    return Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target").resolve()


def cargo_binary(package: str) -> Path:
    """The binary of workspace package ``package``, built as CI built the rest (see
    ``testbed.cargo``)."""
    build_workspace_binaries()
    return REPO / "target" / "release" / package


@pytest.fixture(scope="session")
def action_counter() -> Path:
    """The Rust server and client of examples/actions, built."""
    return cargo_binary("action-counter")


@pytest.fixture(scope="session")
def service_adder() -> Path:
    """The Rust server and client of examples/services, built."""
    return cargo_binary("service-adder")


def publish_topic(topic: str, first: int, count: int, *extra: str) -> subprocess.Popen[str]:
    """Starts nodes/topic_publisher.py: message ``i`` is ``1 + i % 1000`` uint32 values equal to
    ``i``, with ``i`` and their CRC in the metadata."""
    args = [sys.executable, str(NODES / "topic_publisher.py"), topic, str(first), str(count), *extra]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(predicate, timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def made_hosts(tag: str, count: int):
    """``count`` hosts for the length of a test (see ``Hosts``); needs root, as in CI."""
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    made = Hosts(f"{tag}{os.getpid() % 10000}", count)
    try:
        yield made
    finally:
        made.remove()


@pytest.fixture
def hosts():
    """Three hosts (network namespaces on one bridge)."""
    yield from made_hosts("nt", 3)


#: ROS 2's discovery kept to this host; a domain of the tests' own.
ROS_ENV = {
    "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
    "ROS_DOMAIN_ID": "17",
    "RMW_IMPLEMENTATION": "rmw_fastrtps_cpp",
    "NERVE_LOG": "info",
}


@pytest.fixture
def ros_host():
    """One host (network namespace) for a dataflow and its ROS 2 peers: no DDS packet leaves
    the machine, and no other run on it shares the DDS domain."""
    yield from made_hosts("r2", 1)


def ros_start(host: Hosts, argv: list[str], **kwargs) -> subprocess.Popen[str]:
    """Starts ``argv`` on ``host`` with ROS 2's environment."""
    return subprocess.Popen(host.on(0, argv), text=True, env={**os.environ, **ROS_ENV}, **kwargs)

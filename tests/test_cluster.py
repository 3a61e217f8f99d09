"""One dataflow over several machines: a coordinator and a daemon per host, the hosts network
namespaces on one bridge (root, as in CI). Every node is a real process in its host's namespace;
data crosses real veth links over Zenoh."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest
from conftest import NODES, REPO, free_port, log_lines, nerve_cmd, wait_for
from test_graph_edit import FILTER, RECEIVER, SENDER
from test_restart import FAILING, WATCHER

COORDINATOR = "10.231.0.1"

# Reports where it runs (its network namespace), then counts what it receives; prints each
# event worth a check, flushed, so the tests can follow its log.
READER = """
import os
from nerve import Node

node = Node()
print("netns", os.stat("/proc/self/ns/net").st_ino, flush=True)
n = 0
for event in node:
    if event["type"] == "INPUT":
        n += 1
        if n % 10 == 0:
            print("received", n, flush=True)
    elif event["type"] == "INPUT_CLOSED":
        print("closed", event["id"], "after", n, flush=True)
    elif event["type"] == "STOP":
        print("stopped after", n, flush=True)
        break
"""


class Cluster:
    """A coordinator on host 0 (listening on its veth address) and a daemon ``m<i>`` per host."""

    def __init__(self, hosts, folder: Path, *, net_args: tuple[str, ...] = ()) -> None:
        self.hosts = hosts
        self.folder = folder
        self.net_args = net_args
        self.coordinator: subprocess.Popen[str] | None = None
        self.daemons: dict[int, subprocess.Popen[str]] = {}

    def _log(self, name: str):
        return open(self.folder / f"{name}.log", "a")

    def start_coordinator(self, *extra: str) -> None:
        argv = nerve_cmd("coordinator", "--interface", COORDINATOR, *self.net_args, *extra)
        log = self._log("coordinator")
        self.coordinator = self.hosts.popen(0, argv, stdout=log, stderr=log)

    def start_daemon(self, host: int, *extra: str, scout: bool = False) -> subprocess.Popen[str]:
        """Starts machine ``m<host>``'s daemon, told where the coordinator is, or (``scout``) left
        to find it by multicast scouting."""
        where = () if scout else ("--coordinator", COORDINATOR)
        argv = nerve_cmd("daemon", "--machine-id", f"m{host}", *where, *self.net_args, *extra)
        log = self._log(f"daemon-m{host}")
        self.daemons[host] = self.hosts.popen(host, argv, stdout=log, stderr=log)
        return self.daemons[host]

    def nerve(self, *args: str, host: int = 0, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        argv = self.hosts.on(host, [*nerve_cmd(*args, "--coordinator", COORDINATOR), *self.net_args])
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)

    def machines(self) -> set[str]:
        check = self.nerve("check")
        return {line.split("`")[1] for line in check.stdout.splitlines() if line.startswith("daemon `")}

    def up(self, count: int = 3) -> None:
        self.start_coordinator()
        for host in range(count):
            self.start_daemon(host)
        wait_for(lambda: self.machines() == {f"m{i}" for i in range(count)}, timeout=30, what="every daemon")

    def dataflows(self) -> list[dict]:
        listed = self.nerve("list", "--all", "--json")
        assert listed.returncode == 0, listed.stderr
        return [d for d in json.loads(listed.stdout) if d.get("coordinator")]

    def dataflow(self, name: str) -> dict:
        (found,) = [d for d in self.dataflows() if d["name"] == name]
        return found

    def stop(self) -> None:
        for proc in [*self.daemons.values(), self.coordinator]:
            if proc and proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in [*self.daemons.values(), self.coordinator]:
            if proc:
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


@pytest.fixture
def cluster(hosts, tmp_path):
    made = Cluster(hosts, tmp_path)
    try:
        yield made
    finally:
        made.stop()


def write(folder: Path, yaml: str, **nodes: str) -> Path:
    for name, code in nodes.items():
        (folder / name).write_text(textwrap.dedent(code))
    path = folder / "dataflow.yml"
    path.write_text(textwrap.dedent(yaml).lstrip("\n"))
    return path


def netns_inode(hosts, host: int) -> int:
    out = subprocess.run(
        ["ip", "netns", "exec", hosts.names[host], "stat", "-L", "-c", "%i", "/proc/self/ns/net"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout)


def node_processes(folder: Path) -> list[str]:
    """Command lines of the processes running a node file of ``folder``."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if any(word.startswith(str(folder)) and word.endswith(".py") for word in cmdline.split()):
                found.append(cmdline)
    return found


def log_of(folder: Path, dataflow: dict, node: str) -> str:
    path = folder / "out" / dataflow["run_id"] / f"{node}.log"
    return "".join(f"{line}\n" for line in log_lines(path)) if path.exists() else ""


def test_a_dataflow_split_over_three_hosts(cluster, hosts, tmp_path):
    """Arrays of 8 B to 64 MiB from host 0 reach readers on all three hosts byte-exact, read in
    place in each host's shared memory; every node runs on its machine."""
    for name in ("checksum_producer.py", "checksum_consumer.py"):
        (tmp_path / name).write_text((NODES / name).read_text())
    path = write(
        tmp_path,
        """
        nodes:
          - {id: producer, path: checksum_producer.py, env: {ROUNDS: 1}, deploy: {machine: m0}, outputs: [data]}
          - {id: here, path: checksum_consumer.py, env: {EXPECTED: 7}, deploy: {machine: m0}, inputs: {data: $DATA}}
          - {id: one, path: checksum_consumer.py, env: {EXPECTED: 7}, deploy: {machine: m1}, inputs: {data: $DATA}}
          - {id: two, path: checksum_consumer.py, env: {EXPECTED: 7}, deploy: {machine: m1}, inputs: {data: $DATA}}
          - {id: far, path: checksum_consumer.py, env: {EXPECTED: 7}, deploy: {machine: m2}, inputs: {data: $DATA}}
          - {id: where, path: reader.py, deploy: {machine: m2}, inputs: {data: $DATA}}
        """.replace("$DATA", "producer/data"),
        **{"reader.py": READER},
    )
    cluster.up()
    started = cluster.nerve("start", str(path), "--name", "split", "--attach")
    assert started.returncode == 0, started.stdout + started.stderr
    for node in ("here", "one", "two", "far"):
        assert f"[{node}] verified 7 arrays" in started.stdout, started.stdout
    assert "dataflow finished: every node finished" in started.stderr, started.stderr

    done = cluster.dataflow("split")
    assert done["state"] == "finished", done
    machines = {n["id"]: n["machine"] for n in done["nodes"]}
    assert machines == {"producer": "m0", "here": "m0", "one": "m1", "two": "m1", "far": "m2", "where": "m2"}
    # The reader really ran in host 2's network namespace.
    assert f"netns {netns_inode(hosts, 2)}" in log_of(tmp_path, done, "where")
    logs = cluster.nerve("logs", "split", "far", host=1)
    assert logs.returncode == 0 and "verified 7 arrays" in logs.stdout, logs.stderr
    assert not node_processes(tmp_path)


def test_hosts_share_no_runtime_folder(hosts):
    """A host's sockets are out of another host's reach, as on real machines: else a Zenoh
    peer would reach another host's advertised Unix socket and bypass the network links the
    tests below measure."""
    made = subprocess.run(hosts.on(0, ["sh", "-c", 'touch "$XDG_RUNTIME_DIR/h0"']), capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    seen = [subprocess.run(hosts.on(h, ["ls", str(hosts.runtime)]), capture_output=True, text=True) for h in (0, 1)]
    assert [s.stdout.split() for s in seen] == [["h0"], []], seen
    assert not list(hosts.runtime.iterdir()), "the test process sees no host's runtime folder"


def rx_bytes(hosts, host: int) -> int:
    out = subprocess.run(
        ["ip", "netns", "exec", hosts.names[host], "cat", "/sys/class/net/eth0/statistics/rx_bytes"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout)


def test_the_bridge_sends_each_message_once_per_host(cluster, hosts, tmp_path):
    """Four readers on host 1 of a 1 MiB output of host 0: host 1's link carries it once (one
    stream, not four), and host 2, which reads nothing, gets none of it."""
    for name in ("checksum_producer.py", "checksum_consumer.py"):
        (tmp_path / name).write_text((NODES / name).read_text())
    readers = "".join(
        f"  - {{id: r{i}, path: checksum_consumer.py, env: {{EXPECTED: 40}}, deploy: {{machine: m1}}, "
        "inputs: {data: producer/data}}\n"
        for i in range(4)
    )
    path = write(
        tmp_path,
        "nodes:\n"
        "  - {id: producer, path: checksum_producer.py, env: {SIZES: '1048576', ROUNDS: 40}, deploy: {machine: m0},"
        " outputs: [data]}\n" + readers,
    )
    cluster.up()
    before = (rx_bytes(hosts, 1), rx_bytes(hosts, 2))
    started = cluster.nerve("start", str(path), "--attach")
    assert started.returncode == 0, started.stdout + started.stderr
    assert started.stdout.count("verified 40 arrays") == 4, started.stdout
    payload = 40 * (1 << 20)
    on_host1 = rx_bytes(hosts, 1) - before[0]
    on_host2 = rx_bytes(hosts, 2) - before[1]
    assert payload <= on_host1 < 1.1 * payload, f"{on_host1} bytes reached host 1 for {payload} bytes of messages"
    assert on_host2 < payload / 10, f"{on_host2} bytes reached host 2, which reads nothing"


TICKING = """
nodes:
  - id: ticker
    path: ticker.py
    deploy: {machine: m0}
    inputs: {tick: timer/millis/20}
    outputs: [count]
  - id: closer
    path: reader.py
    deploy: {machine: m1}
    inputs: {count: ticker/count}
  - id: waiter
    path: reader.py
    deploy: {machine: m1}
    on_host_lost: wait
    inputs: {count: ticker/count}
"""


def start_ticking(cluster: Cluster, tmp_path: Path) -> dict:
    """TICKING started on two machines: its status as `nerve list --json` gives it."""
    (tmp_path / "ticker.py").write_text((NODES / "ticker.py").read_text())
    path = write(tmp_path, TICKING, **{"reader.py": READER})
    cluster.up(2)
    started = cluster.nerve("start", str(path), "--name", "ticking")
    assert started.returncode == 0, started.stderr
    return cluster.dataflow("ticking")


def test_a_lost_host_closes_or_keeps_its_readers_inputs(cluster, hosts, tmp_path):
    start_ticking(cluster, tmp_path)
    wait_for(lambda: "received 20" in log_of(tmp_path, cluster.dataflow("ticking"), "waiter"), what="data on m1")

    cluster.daemons[0].kill()  # the whole machine m0 goes: its daemon and, with it, its nodes
    running = cluster.dataflow("ticking")
    wait_for(lambda: "closed count" in log_of(tmp_path, running, "closer"), what="INPUT_CLOSED at the closer")

    def states() -> dict[str, str]:
        return {n["id"]: n["state"] for n in cluster.dataflow("ticking")["nodes"]}

    wait_for(lambda: states()["closer"] == "finished", what="the closer to finish")
    now = states()
    assert now["ticker"].startswith("lost (machine `m0`"), now
    assert now["waiter"] == "running", now
    assert "closed" not in log_of(tmp_path, running, "waiter")
    assert cluster.dataflow("ticking")["state"] == "running"
    assert not [p for p in node_processes(tmp_path) if "ticker.py" in p], "m0's node outlived its daemon"
    table = cluster.nerve("list").stdout
    assert "lost (machine `m0` is gone)" in table and "m1" in table, table

    # The machine comes back: its daemon rejoins the cluster, finding it by multicast scouting.
    cluster.start_daemon(0, scout=True)
    wait_for(lambda: cluster.machines() == {"m0", "m1"}, what="m0 back")
    stopped = cluster.nerve("stop", "ticking")
    assert stopped.returncode == 0, stopped.stderr
    assert "stopped after" in log_of(tmp_path, running, "waiter")
    assert cluster.dataflow("ticking")["state"] == "failed"
    assert "machine `m0` was lost" in cluster.dataflow("ticking")["error"]


def test_a_stop_after_a_machine_is_lost_stops_the_rest_at_once(cluster, hosts, tmp_path):
    running = start_ticking(cluster, tmp_path)
    wait_for(lambda: "received 20" in log_of(tmp_path, running, "waiter"), what="data on m1")

    # m1's daemon hangs, as a machine that loses power falls silent: no connection is closed, and
    # it answers nothing (its nodes, out of its reach, run on).
    cluster.daemons[1].send_signal(signal.SIGSTOP)
    stopped = cluster.nerve("stop", "ticking")
    assert stopped.returncode == 0, stopped.stderr
    assert "machine `m1` was lost, and its nodes with it: closer, waiter" in stopped.stderr, stopped.stderr
    assert "stopped after" in log_of(tmp_path, running, "ticker")
    assert cluster.dataflow("ticking")["state"] == "failed"
    cluster.daemons[1].kill()  # the machine is gone for good: with its daemon go its nodes
    wait_for(lambda: not node_processes(tmp_path), what="m1's nodes to go with their daemon")


def test_a_coordinator_restart_leaves_dataflows_running(cluster, hosts, tmp_path):
    running = start_ticking(cluster, tmp_path)

    def received() -> int:
        lines = [line for line in log_of(tmp_path, running, "waiter").splitlines() if line.startswith("received")]
        return int(lines[-1].split()[1]) if lines else 0

    wait_for(lambda: received() >= 10, what="data on m1")
    assert cluster.coordinator
    cluster.coordinator.kill()
    cluster.coordinator.wait()
    seen = received()
    wait_for(lambda: received() >= seen + 30, what="data flowing without a coordinator")
    assert cluster.nerve("list").returncode != 0, "no coordinator should answer"

    cluster.start_coordinator()

    # The daemons reconnect and tell the new coordinator what they run, each in its own time:
    # until a machine has, its nodes are "unknown" (and until one has, `list` shows this host's
    # part as a run of its own, not the cluster's dataflow).
    def states() -> dict[str, str]:
        listed = cluster.nerve("list", "--json")
        if listed.returncode != 0:
            return {}
        known = [d for d in json.loads(listed.stdout) if d["name"] == "ticking" and d.get("coordinator")]
        return {n["id"]: n["state"] for n in known[0]["nodes"]} if known else {}

    def every_part_known() -> bool:
        now = states()
        return bool(now) and "unknown" not in now.values()

    wait_for(every_part_known, timeout=30, what="every part known again")
    now = states()
    assert now == {"ticker": "running", "closer": "running", "waiter": "running"}, now
    # Followed from another host through the new coordinator, to the end.
    follow_argv = nerve_cmd("logs", "ticking", "waiter", "--follow", "--coordinator", COORDINATOR)
    follow = hosts.popen(2, follow_argv, stdout=subprocess.PIPE)
    assert follow.stdout and follow.stdout.readline().startswith("netns ")
    stopped = cluster.nerve("stop", "ticking")
    assert stopped.returncode == 0, stopped.stderr
    rest, _ = follow.communicate(timeout=30)
    # The stop reaches both machines on its own: the waiter's last line is its STOP, or — when the
    # ticker's machine stopped first — its only input closing, which ends its events as well.
    last = rest.splitlines()[-1] if rest else ""
    assert follow.returncode == 0 and re.match(r"(stopped|closed count) after \d+$", last), rest
    assert cluster.dataflow("ticking")["state"] in ("finished", "failed")
    assert not node_processes(tmp_path)


# Waits for the file GATE, then runs as READER: its machine readies its part only then.
GATE = """
import os, pathlib, time
gate, deadline = pathlib.Path(os.environ["GATE"]), time.monotonic() + 60
while not gate.exists() and time.monotonic() < deadline:
    time.sleep(0.01)
"""
GATED = GATE + READER

FROZEN = """
nodes:
  - {id: ticker, path: ticker.py, deploy: {machine: m0}, inputs: {tick: timer/millis/20}, outputs: [count]}
  - {id: gated, path: gated.py, deploy: {machine: m1}, env: {GATE: $GATE}, inputs: {count: ticker/count}}
  - {id: far, path: reader.py, deploy: {machine: m2}, inputs: {count: ticker/count}}
"""


def test_a_start_that_cannot_complete_leaves_nothing_running(cluster, hosts, tmp_path):
    (tmp_path / "ticker.py").write_text((NODES / "ticker.py").read_text())
    gate = tmp_path / "gate"
    path = write(tmp_path, FROZEN.replace("$GATE", str(gate)), **{"reader.py": READER, "gated.py": GATED})
    cluster.up(2)
    # No daemon for m2: refused before anything starts.
    refused = cluster.nerve("start", str(path))
    assert refused.returncode != 0
    assert "no daemon is connected for machine(s) `m2` (connected: m0, m1)" in refused.stderr, refused.stderr
    assert not node_processes(tmp_path)

    # m2 readies its part, then its daemon stops answering (frozen) before the run can start:
    # m1 readies its part only once m2 is frozen. The start fails naming m2, and what m0 and
    # m1 readied is stopped.
    frozen = cluster.start_daemon(2)
    wait_for(lambda: "m2" in cluster.machines(), what="m2")
    argv = nerve_cmd("start", str(path), "--name", "frozen", "--ready-timeout", "10", "--coordinator", COORDINATOR)
    starting = hosts.popen(0, argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    m2_log = tmp_path / "daemon-m2.log"

    def on_m0_or_m1() -> list[str]:
        return [p for p in node_processes(tmp_path) if "/reader.py" not in p]  # m2's node is reader.py

    try:
        wait_for(lambda: "part ready" in m2_log.read_text(), what="m2 to ready its part")
        frozen.send_signal(signal.SIGSTOP)
        gate.touch()
        _, err = starting.communicate(timeout=120)
        assert starting.returncode != 0
        assert "machine `m2`" in err and "could not start" in err, err
        wait_for(lambda: not on_m0_or_m1(), what="the nodes readied on m0 and m1 to stop")
        assert cluster.dataflow("frozen")["state"] == "failed"
    finally:
        frozen.send_signal(signal.SIGCONT)
    # Thawed, m2 finds that its part was never started within its ready timeout, and stops it
    # by itself: it says so, and none of its nodes is left.
    wait_for(lambda: "part ended" in m2_log.read_text(), what="m2's part to give up")
    assert not node_processes(tmp_path)


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certificates(folder: Path) -> None:
    """A certificate authority, and a certificate it signs for each host's address."""
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=nerve test CA",
            "-keyout", "ca.key", "-out", "ca.pem", cwd=folder)  # fmt: skip
    for host in range(3):
        ip = f"10.231.0.{host + 1}"
        (folder / f"m{host}.ext").write_text(f"subjectAltName = IP:{ip}\n")
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={ip}", "-keyout", f"m{host}.key",
                "-out", f"m{host}.csr", cwd=folder)  # fmt: skip
        openssl("x509", "-req", "-in", f"m{host}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-days", "1", "-extfile", f"m{host}.ext", "-out", f"m{host}.pem", cwd=folder)  # fmt: skip


def test_mutual_tls_between_hosts(hosts, tmp_path):
    """Every link under mutual TLS, the daemons' links over QUIC: the dataflow runs across
    hosts, and a daemon without a certificate of the authority cannot join."""
    certs = tmp_path / "certs"
    certs.mkdir()
    make_certificates(certs)

    def tls(host: int, signed_by: Path = certs) -> tuple[str, ...]:
        """The TLS options of host ``host``, its certificate signed by the authority in ``signed_by``."""
        pem, key = str(signed_by / f"m{host}.pem"), str(signed_by / f"m{host}.key")
        return ("--tls-ca", str(certs / "ca.pem"), "--tls-cert", pem, "--tls-key", key, "--mtls")

    for name in ("checksum_producer.py", "checksum_consumer.py"):
        (tmp_path / name).write_text((NODES / name).read_text())
    path = write(
        tmp_path,
        """
        nodes:
          - id: producer
            path: checksum_producer.py
            env: {SIZES: "8,1048576", ROUNDS: 3}
            deploy: {machine: m0}
            outputs: [data]
          - id: far
            path: checksum_consumer.py
            env: {EXPECTED: 6}
            deploy: {machine: m1}
            inputs: {data: producer/data}
        """,
    )
    clusters = [Cluster(hosts, tmp_path, net_args=tls(h)) for h in range(3)]
    try:
        clusters[0].start_coordinator()
        for host in (0, 1):
            clusters[host].start_daemon(host, "--listen", f"quic/10.231.0.{host + 1}:7447")
        wait_for(lambda: clusters[0].machines() == {"m0", "m1"}, timeout=30, what="both daemons under TLS")
        check = clusters[0].nerve("check").stdout
        assert "tls/10.231.0.1:53290" in check and "listening on quic/10.231.0.2:7447" in check, check
        started = clusters[0].nerve("start", str(path), "--attach")
        assert started.returncode == 0, started.stdout + started.stderr
        assert "[far] verified 6 arrays" in started.stdout, started.stdout
        # Between the daemons, QUIC: host 1's only TCP connection is its link to the coordinator.
        tcp = subprocess.run(
            ["ip", "netns", "exec", hosts.names[1], "ss", "-Htn", "state", "established"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        peers = [word for word in tcp if word.startswith("10.231.0.1:")]
        assert peers == ["10.231.0.1:53290"], tcp
        # A machine whose certificate another authority signed cannot join, and plain TCP to the
        # coordinator gets no answer.
        rogue = tmp_path / "rogue"
        rogue.mkdir()
        make_certificates(rogue)
        intruder = Cluster(hosts, tmp_path, net_args=tls(2, signed_by=rogue))
        coordinator_log = tmp_path / "coordinator.log"
        refused = coordinator_log.read_text().count("invalid peer certificate")
        intruder.start_daemon(2)
        try:
            assert Cluster(hosts, tmp_path).nerve("check", host=2, timeout=60).returncode != 0
            # Once the coordinator has turned the intruder's certificate down, it is not in.
            wait_for(
                lambda: coordinator_log.read_text().count("invalid peer certificate") > refused,
                what="the coordinator to refuse the intruder's certificate",
            )
            assert clusters[0].machines() == {"m0", "m1"}
        finally:
            intruder.stop()
    finally:
        for c in clusters:
            c.stop()


TUNER = """
from nerve import Node

node = Node()
node.on_param_change(lambda key, value: f"{key} must be >= 0, got {value}" if value < 0 else None)
for event in node:
    if event["type"] == "STOP":
        break
print("gain at the end", node.get_param("gain"), flush=True)
"""


def test_parameters_of_a_node_on_another_machine(cluster, hosts, tmp_path):
    """`nerve param` on one machine reads and sets a node of another, whose callback refuses a value."""
    path = write(
        tmp_path,
        """
        nodes:
          - {id: tuner, path: tuner.py, deploy: {machine: m1}, params: {gain: 1.0}}
        """,
        **{"tuner.py": TUNER},
    )
    cluster.up(2)
    assert cluster.nerve("start", str(path), "--name", "tuning").returncode == 0
    got = cluster.nerve("param", "get", "tuner", "gain")
    assert got.returncode == 0 and got.stdout.strip() == "1.0", got.stdout + got.stderr
    assert cluster.nerve("param", "set", "tuner", "gain", "2.5").returncode == 0
    refused = cluster.nerve("param", "set", "tuner", "gain", "-1")
    assert refused.returncode != 0 and "gain must be >= 0, got -1" in refused.stderr, refused.stderr
    listed = cluster.nerve("param", "list", "tuner", "--dataflow", "tuning", "--json")
    assert json.loads(listed.stdout)["gain"]["value"] == 2.5, listed.stdout
    assert cluster.nerve("stop", "tuning").returncode == 0
    assert "gain at the end 2.5" in log_of(tmp_path, cluster.dataflow("tuning"), "tuner")


def test_a_daemon_refuses_a_bad_machine_id_and_tools_name_a_missing_coordinator():
    bad = subprocess.run(nerve_cmd("daemon", "--machine-id", "robot arm"), capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0
    assert "invalid machine id `robot arm`: invalid character ' '" in bad.stderr, bad.stderr
    # Port 9 of loopback (discard) has no coordinator.
    missing = subprocess.run(
        nerve_cmd("check", "--coordinator", "127.0.0.1:9"), capture_output=True, text=True, timeout=60
    )
    assert missing.returncode != 0
    assert "no coordinator answers at tcp/127.0.0.1:9" in missing.stderr, missing.stderr


def test_check_shows_the_port_a_daemon_was_given():
    # A daemon listens where it reaches the coordinator, on a port the system picks: check
    # shows that port, one that takes connections, not the 0 it asked for.
    port = free_port()
    where = ("--coordinator", f"127.0.0.1:{port}")
    coordinator = subprocess.Popen(nerve_cmd("coordinator", "--port", str(port)), stderr=subprocess.PIPE, text=True)
    daemon = subprocess.Popen(
        nerve_cmd("daemon", "--machine-id", f"port-{os.getpid()}", *where), stderr=subprocess.PIPE, text=True
    )
    try:
        checked: list[str] = []

        def listed() -> bool:
            check = subprocess.run(nerve_cmd("check", *where), capture_output=True, text=True, timeout=60)
            checked[:] = [line for line in check.stdout.splitlines() if line.startswith(f"daemon `port-{os.getpid()}`")]
            return bool(checked)

        wait_for(listed, what="the daemon in `nerve check`")
        m = re.search(r"listening on tcp/127\.0\.0\.1:(\d+),", checked[0])
        assert m and m[1] != "0", checked[0]
        socket.create_connection(("127.0.0.1", int(m[1])), timeout=10).close()
    finally:
        for proc in (daemon, coordinator):
            proc.send_signal(signal.SIGINT)
            proc.communicate(timeout=30)


def test_a_failure_with_on_failure_stop_all_stops_every_machines_nodes(cluster, tmp_path):
    path = write(
        tmp_path,
        """
        on_failure: stop_all
        nodes:
          - {id: fail, path: fail.py, deploy: {machine: m0}, outputs: [out]}
          - {id: watch, path: watch.py, deploy: {machine: m1}, inputs: {tick: dora/timer/millis/50}}
        """,
        **{"fail.py": FAILING, "watch.py": WATCHER},
    )
    cluster.up(2)
    started = cluster.nerve("start", str(path), "--name", "failing", "--attach")
    assert started.returncode != 0
    # The node on the other machine was stopped, not left running.
    assert "[watch] saw STOP" in started.stdout, started.stdout + started.stderr
    done = cluster.dataflow("failing")
    assert done["state"] == "failed" and "`on_failure: stop_all`" in done["error"], done
    assert not node_processes(tmp_path)


# A run spanning machines is one run: its topic and its service reach its nodes on the other
# machine with no `share:`, the run's name (its dataflow id, without --name) being the same on
# every machine.
SCOPED_SOURCE = """
import os
import nerve

run = os.environ["NERVE_RUN"]
server = nerve.Service("where", lambda request: [run])
node = nerve.Node()
for event in node:
    if event["type"] == "INPUT":
        node.send_output("count", [run])
    elif event["type"] == "STOP":
        break
"""

SCOPED_SINK = """
import nerve

node = nerve.Node()
print("reply", nerve.Client("where").call(b"?", timeout=30)["value"][0].as_py(), flush=True)
n = 0
for event in node:
    if event["type"] == "INPUT":
        n += 1
        if n == 20:
            print("heard", event["value"][0].as_py(), flush=True)
    elif event["type"] == "STOP":
        break
"""


def test_a_run_over_two_hosts_meets_its_own_topics_and_services(cluster, tmp_path):
    path = write(
        tmp_path,
        """
        nodes:
          - id: source
            path: source.py
            deploy: {machine: m0}
            inputs: {tick: timer/millis/20}
            outputs: [{id: count, topic: counts}]
            services: {serve: [where]}
          - id: sink
            path: sink.py
            deploy: {machine: m1}
            inputs: {count: topic/counts}
            services: {call: [where]}
        """,
        **{"source.py": SCOPED_SOURCE, "sink.py": SCOPED_SINK},
    )
    cluster.up(2)
    started = cluster.nerve("start", str(path))
    assert started.returncode == 0, started.stderr
    (running,) = cluster.dataflows()
    run = running["run_id"]
    wait_for(lambda: f"heard {run}" in log_of(tmp_path, running, "sink"), what="the topic from m0 on m1")
    assert f"reply {run}" in log_of(tmp_path, running, "sink")
    assert cluster.nerve("stop", run).returncode == 0


# Says where it runs: its network namespace and its working directory.
WHERE = """
import os
from nerve import Node

node = Node()
print("netns", os.stat("/proc/self/ns/net").st_ino, "cwd", os.getcwd(), flush=True)
"""


def test_labels_choose_the_machine_and_working_dir_the_folder(cluster, hosts, tmp_path):
    (tmp_path / "data").mkdir()
    path = write(
        tmp_path,
        """
        nodes:
          - {id: plain, path: where.py, deploy: {machine: m0}}
          - {id: accel, path: where.py, deploy: {labels: {gpu: "true"}, working_dir: data}}
        """,
        **{"where.py": WHERE},
    )
    cluster.start_coordinator()
    cluster.start_daemon(0)
    cluster.start_daemon(1, "--label", "gpu=true", "--label", "arch=arm64")
    wait_for(lambda: cluster.machines() == {"m0", "m1"}, timeout=30, what="both daemons")
    check = cluster.nerve("check")
    assert "labels arch=arm64 gpu=true" in check.stdout, check.stdout

    started = cluster.nerve("start", str(path), "--name", "placed", "--attach")
    assert started.returncode == 0, started.stdout + started.stderr
    done = cluster.dataflow("placed")
    assert {n["id"]: n["machine"] for n in done["nodes"]} == {"plain": "m0", "accel": "m1"}
    assert f"netns {netns_inode(hosts, 1)} cwd {tmp_path / 'data'}" in log_of(tmp_path, done, "accel")
    assert f"cwd {tmp_path}\n" in log_of(tmp_path, done, "plain")

    # Labels no daemon has: refused before anything starts, naming them and what each machine has.
    path.write_text(path.read_text().replace('gpu: "true"', "gpu: tpu"))
    refused = cluster.nerve("start", str(path))
    assert refused.returncode != 0
    assert "node `accel` asks for labels gpu=tpu, which no connected daemon has all of" in refused.stderr
    assert "`m1` (arch=arm64, gpu=true)" in refused.stderr, refused.stderr


def test_a_running_dataflow_of_the_cluster_takes_nodes_and_edges_on_and_across_machines(cluster, tmp_path):
    """`nerve node add|connect|disconnect|remove` reach the machine the node or reader is on; an
    edge from another machine is linked there and back as it is made, and closes when its writer
    goes; a node that does not say where it goes is refused."""
    path = write(
        tmp_path,
        """
        nodes:
          - id: sender
            path: sender.py
            inputs: {tick: dora/timer/millis/20}
            outputs: [value, spare]
            deploy: {machine: m1}
          - id: receiver
            path: receiver.py
            inputs: {value: sender/value, tick: dora/timer/secs/1}
            deploy: {machine: m1}
          - {id: idle, path: receiver.py, inputs: {tick: dora/timer/secs/1}, deploy: {machine: m0}}
        """,
        **{"sender.py": SENDER, "receiver.py": RECEIVER, "filter.py": FILTER},
    )
    node = "id: filter\npath: filter.py\ninputs: {input: sender/value}\noutputs: [output]\n"
    (tmp_path / "filter-node.yml").write_text(node + "deploy: {machine: m1}\n")
    (tmp_path / "nowhere-node.yml").write_text(node.replace("filter", "nowhere", 1))
    far = "id: far\npath: receiver.py\ninputs: {value: sender/value, tick: dora/timer/secs/1}\n"
    (tmp_path / "far-node.yml").write_text(far + "deploy: {machine: m0}\n")
    cluster.up(2)
    assert cluster.nerve("start", str(path), "--name", "edits").returncode == 0

    def printed(node: str, what: str) -> list[str]:
        log = log_of(tmp_path, cluster.dataflow("edits"), node)
        return [line.split()[-1] for line in log.splitlines() if line.startswith(what)]

    added = cluster.nerve("node", "add", str(tmp_path / "filter-node.yml"), "-d", "edits")
    assert added.returncode == 0 and "node `filter` added, started (machine `m1`)" in added.stdout, added.stderr
    wired = cluster.nerve("node", "connect", "edits", "filter/output", "receiver/filtered")
    assert wired.returncode == 0, wired.stderr
    wait_for(lambda: printed("receiver", "INPUT filtered"), what="filtered values on m1")

    # Across machines: m1 sends `filter/output` on, m0 receives it for `idle`.
    across = cluster.nerve("node", "connect", "edits", "filter/output", "idle/filtered")
    assert across.returncode == 0 and "(machine `m0`)" in across.stdout, across.stderr
    wait_for(lambda: printed("idle", "INPUT filtered"), what="filtered values on m0")
    # An added node's input from another machine, then a second reader of that output there.
    added_far = cluster.nerve("node", "add", str(tmp_path / "far-node.yml"), "-d", "edits")
    assert added_far.returncode == 0 and "node `far` added, started (machine `m0`)" in added_far.stdout
    wait_for(lambda: printed("far", "INPUT value"), what="values for the added node on m0")
    again = cluster.nerve("node", "connect", "edits", "sender/value", "idle/value")
    assert again.returncode == 0, again.stderr
    wait_for(lambda: printed("idle", "INPUT value"), what="values of a second reader on m0")
    # m0 receives `sender` through a stand-in of its outputs read there: not one output more.
    spare = cluster.nerve("node", "connect", "edits", "sender/spare", "idle/spare")
    assert spare.returncode == 1
    assert "machine `m0`: it receives output(s) value of `sender` through a stand-in" in spare.stderr, spare.stderr
    cut = cluster.nerve("node", "disconnect", "edits", "sender/value", "idle/value")
    assert cut.returncode == 0, cut.stderr
    nodes = {n["id"]: (n["machine"], n["state"]) for n in cluster.dataflow("edits")["nodes"]}
    assert nodes == {
        "sender": ("m1", "running"),
        "receiver": ("m1", "running"),
        "filter": ("m1", "running"),
        "idle": ("m0", "running"),
        "far": ("m0", "running"),
    }, nodes

    # The machine's own part, reached on its host without the coordinator, is not changed behind
    # the coordinator's back.
    direct = cluster.nerve("node", "connect", "sender/value", "receiver/other", host=1)
    assert direct.returncode == 1 and "change it through the coordinator" in direct.stderr, direct.stderr
    nowhere = cluster.nerve("node", "add", str(tmp_path / "nowhere-node.yml"), "-d", "edits")
    assert nowhere.returncode == 1 and "runs on machines m0, m1: say which one takes node `nowhere`" in nowhere.stderr

    # The filter goes: its readers on both machines get INPUT_CLOSED, after what it sent.
    removed = cluster.nerve("node", "remove", "edits", "filter")
    assert removed.returncode == 0, removed.stderr
    wait_for(lambda: printed("receiver", "INPUT_CLOSED filtered"), what="the filtered input closed on m1")
    wait_for(lambda: printed("idle", "INPUT_CLOSED filtered"), what="the filtered input closed on m0")
    assert cluster.nerve("stop", "edits").returncode == 0
    for reader in ("receiver", "idle"):
        filtered = [int(v) for v in printed(reader, "INPUT filtered")]
        assert filtered and all(v % 2 == 0 for v in filtered), (reader, filtered)
        assert filtered == sorted(filtered), (reader, filtered)


SCHED_FIFO = 1


def thread_scheduling(pid: int) -> set[tuple[int, int]]:
    """The (policy, real-time priority) pairs of process ``pid``'s threads, from /proc."""
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        found.add((int(fields[38]), int(fields[37])))  # stat fields 41 (policy) and 40 (rt_priority)
    return found


def load_module(path: Path) -> ModuleType:
    """The Python file ``path`` imported as a module of its own name."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("mapping", [1, 2, 3])
def test_the_walker_example_in_each_of_the_papers_mappings(cluster, hosts, tmp_path, mapping):
    """examples/walker unchanged on two hosts, its modules placed by the daemons' labels as the
    walker study's mapping says, the daemons at real-time priority: each module runs on its
    board, and AVI hears every topic it reads with no message missing."""
    folder = tmp_path / "walker"
    shutil.copytree(REPO / "examples" / "walker", folder, ignore=shutil.ignore_patterns("out"))
    workload = load_module(folder / "workload.py")
    cluster.start_coordinator()
    daemons = [cluster.start_daemon(board - 1, *workload.daemon_options(mapping, board)) for board in (1, 2)]
    wait_for(lambda: cluster.machines() == {"m0", "m1"}, timeout=30, what="both boards")
    for daemon in daemons:  # `--realtime-priority`: every thread, the bridge's and Zenoh's too
        assert thread_scheduling(daemon.pid) == {(SCHED_FIFO, workload.DAEMON_PRIORITY)}

    started = cluster.nerve("start", str(folder / "dataflow.yml"), "--name", "walker", "--attach")
    assert started.returncode == 0, started.stdout + started.stderr
    placed = {n["id"]: n["machine"] for n in cluster.dataflow("walker")["nodes"]}
    assert placed == {m: "m0" if m in workload.MAPPINGS[mapping] else "m1" for m in workload.MODULES}
    (heard,) = re.findall(r"\[avi\] avi: \d+ messages \((.*)\); latency .*; lost (\d+)", started.stdout)
    topics = {topic.split()[0] for topic in heard[0].split(", ")}
    assert topics == set(workload.MODULES["avi"].inputs) and heard[1] == "0", started.stdout

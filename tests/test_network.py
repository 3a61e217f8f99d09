"""The network a process reaches: by default this host only; opened by one setting, which
`nerve run` passes on to its nodes."""

import os
import subprocess
import sys
from pathlib import Path

from conftest import Run

# A process that opens a network-scoped publisher, says so, and keeps it until stdin closes.
PUBLISHER = (
    "import sys, nerve\n"
    "p = nerve.Publisher('test/network/range')\n"
    "print('ready', flush=True)\n"
    "sys.stdin.read()\n"
)


def socket_inodes(pid: int) -> set[str]:
    """The inodes of the sockets process `pid` holds open."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    return inodes


def inet_sockets(pid: int) -> dict[str, list[str]]:
    """Process `pid`'s IP sockets, by table: TCP ones listening, UDP ones bound at all (the
    tables are read in the process's own network namespace)."""
    mine = socket_inodes(pid)
    found: dict[str, list[str]] = {}
    for table in ("tcp", "tcp6", "udp", "udp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            listening = state == "0A"  # TCP_LISTEN
            if inode in mine and (table.startswith("udp") or listening):
                found.setdefault(table, []).append(local)
    return found


def publisher(argv_prefix: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [*argv_prefix, sys.executable, "-c", PUBLISHER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    return proc


def test_by_default_a_process_listens_on_no_interface_and_scouts_nothing():
    # The default itself: no range set, no Zenoh file.
    env = {k: v for k, v in os.environ.items() if k not in ("NERVE_DISCOVERY_RANGE", "NERVE_ZENOH_CONFIG")}
    proc = publisher([], env)
    try:
        assert inet_sockets(proc.pid) == {}, "a network-scoped publisher opened IP sockets by default"
    finally:
        proc.communicate(input="", timeout=30)


def test_the_subnet_range_listens_and_scouts(hosts):
    # Inside a namespace of the test's own (the fixture gives it the subnet range), so nothing
    # reaches a real network: what the default above must not do, this one does.
    proc = hosts.popen(0, [sys.executable, "-c", PUBLISHER], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "ready"
        sockets = inet_sockets(proc.pid)
        assert sockets.get("tcp6") or sockets.get("tcp"), sockets
        assert sockets.get("udp") or sockets.get("udp6"), sockets
    finally:
        proc.communicate(input="", timeout=30)


def test_run_passes_its_network_settings_to_its_nodes_but_not_where_it_listens(dataflows):
    show = (
        "import os\n"
        "for name in ('NERVE_DISCOVERY_RANGE', 'NERVE_CONNECT', 'NERVE_MTLS', 'NERVE_LISTEN'):\n"
        "    print(name, repr(os.environ.get(name)))\n"
    )
    path = dataflows.write(
        """
        nodes:
          - id: show
            path: show.py
        """,
        {"show.py": show},
    )
    env = {**os.environ, "NERVE_LISTEN": "tcp/127.0.0.1:0", "NERVE_CONNECT": "tcp/127.0.0.1:9"}
    argv = [sys.executable, "-m", "nerve", "run", str(path), "--discovery-range", "subnet"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, cwd=path.parent)
    run = Run(done.returncode, done.stdout, done.stderr, path.parent)
    assert run.returncode == 0, run.stderr
    assert run.node_lines("show") == [
        "NERVE_DISCOVERY_RANGE 'subnet'",  # the flag, over the environment's `host`
        "NERVE_CONNECT 'tcp/127.0.0.1:9'",  # the environment's
        "NERVE_MTLS '0'",
        "NERVE_LISTEN ''",  # where the command listens is its own
    ]


def test_a_bad_range_is_refused_naming_the_setting(dataflows):
    bad = {**os.environ, "NERVE_DISCOVERY_RANGE": "lan"}
    done = subprocess.run([sys.executable, "-m", "nerve", "topic", "list"], capture_output=True, text=True, env=bad)
    assert done.returncode != 0
    assert "NERVE_DISCOVERY_RANGE" in done.stderr and "`lan`" in done.stderr, done.stderr
    flag = [sys.executable, "-m", "nerve", "topic", "list", "--discovery-range", "lan"]
    done = subprocess.run(flag, capture_output=True, text=True)
    assert done.returncode != 0 and "subnet" in done.stderr, done.stderr


NETWORK_DATAFLOW = """
network:
  discovery_range: subnet
nodes:
  - id: probe
    path: probe.py
"""

# A node that says the range it was given, opens a publisher, and says whether it listens on
# an IP socket of its own (its sockets' inodes found among the kernel's listening TCP ones).
PROBE = """
import os
import nerve

print("range", os.environ.get("NERVE_DISCOVERY_RANGE"), flush=True)
publisher = nerve.Publisher("probe")
mine = set()
for fd in os.listdir("/proc/self/fd"):
    try:
        link = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        continue
    if link.startswith("socket:["):
        mine.add(link[8:-1])
listening = False
for table in ("tcp", "tcp6"):
    with open(f"/proc/self/net/{table}") as f:
        for line in f.readlines()[1:]:
            cols = line.split()
            listening |= cols[3] == "0A" and cols[9] in mine
print("listens", listening, flush=True)
"""


def test_a_dataflows_network_key_opens_its_nodes_unless_the_environment_says_otherwise(dataflows, hosts):
    # On a host of the test's own: a node that listens on every interface reaches nothing real.
    path = dataflows.write(NETWORK_DATAFLOW, {"probe.py": PROBE})
    plain = {k: v for k, v in os.environ.items() if k not in ("NERVE_DISCOVERY_RANGE", "NERVE_ZENOH_CONFIG")}
    argv = hosts.on(0, [sys.executable, "-m", "nerve", "run", str(path)])
    cases = [(plain, "subnet", "True"), ({**plain, "NERVE_DISCOVERY_RANGE": "host"}, "host", "False")]
    for env, range_, listens in cases:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, cwd=path.parent)
        run = Run(done.returncode, done.stdout, done.stderr, path.parent)
        assert run.returncode == 0, run.stderr
        assert run.node_lines("probe") == [f"range {range_}", f"listens {listens}"], run.stderr

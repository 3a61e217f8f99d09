"""Services across real processes: a server process and a client process meeting over Zenoh on
loopback (the server listens on a port, the client connects to it; no multicast)."""

import os
import subprocess
import sys
import threading
from pathlib import Path

import nerve
import pytest
from conftest import NODES, ZENOH_ENV, free_port, nerve_cmd, unique_topic, zenoh_config


def start(script: str, config: Path, name: str, **kw) -> subprocess.Popen[str]:
    env = {**os.environ, ZENOH_ENV: str(config), "NAME": name}
    return subprocess.Popen([sys.executable, str(NODES / script)], env=env, stdout=subprocess.PIPE, text=True, **kw)


def check_calls(server: subprocess.Popen[str], client: subprocess.Popen[str], name: str) -> None:
    """Drives nodes/service_client.py against a serving nodes/service_server.py, killing the server
    in the middle of a slow call, and checks every outcome the client printed."""
    assert server.stdout and server.stdout.readline().strip() == "serving"
    assert client.stdout
    lines = []
    for line in client.stdout:
        lines.append(line.strip())
        if line.startswith("calling-slow"):
            # The server dies in the middle of a call it would never answer.
            held: list[str] = []
            while held[-1:] != ["holding slow"]:
                held.append(server.stdout.readline().strip())
                assert held[-1], f"the server stopped before it took the slow call: {held}"
            server.kill()
            server.wait()
    client.wait(timeout=60)
    out = "\n".join(lines)
    assert client.returncode == 0, out
    assert lines[0] == "reply [2, 4, 6] 3", out
    assert lines[1] == f"refused service `{name}` failed the request: ValueError: negative values are not accepted", out
    assert lines[2].startswith("timeout ") and "did not answer within 300ms" in lines[2], out
    assert lines[3] == "async True", out
    assert lines[5].startswith("gone ") and "went away before answering" in lines[5], out
    assert lines[6].startswith("none ") and f"no server for service `{name}`" in lines[6], out


def test_calls_refusals_timeouts_and_a_dying_server(tmp_path):
    name = unique_topic("double")
    port = free_port()
    server = start("service_server.py", zenoh_config(tmp_path, "server", port), name, stdin=subprocess.PIPE)
    check_calls(server, start("service_client.py", zenoh_config(tmp_path, "client", port), name), name)


def test_calls_between_two_hosts(hosts, monkeypatch):
    """The same calls with server and client on two hosts (network namespaces; Zenoh's defaults,
    multicast scouting)."""
    name = unique_topic("hosts")
    monkeypatch.setenv("NAME", name)
    server = hosts.popen(
        0, [sys.executable, str(NODES / "service_server.py")], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        client = hosts.popen(1, [sys.executable, str(NODES / "service_client.py")], stdout=subprocess.PIPE)
        check_calls(server, client, name)
    finally:
        server.kill()
        server.wait()


def test_service_cli_lists_and_calls(tmp_path):
    name = unique_topic("cli")
    port = free_port()
    server = start("service_server.py", zenoh_config(tmp_path, "server", port), name, stdin=subprocess.PIPE)
    assert server.stdout and server.stdout.readline().strip() == "serving"
    env = {**os.environ, ZENOH_ENV: str(zenoh_config(tmp_path, "client", port))}
    try:
        listed = subprocess.run(nerve_cmd("service", "list"), env=env, capture_output=True, text=True, timeout=60)
        rows = [line.split() for line in listed.stdout.splitlines()]
        assert rows[0] == ["SERVICE", "RUN", "HOST"] and [name, "-"] in [row[:2] for row in rows], listed.stdout
        called = subprocess.run(
            nerve_cmd("service", "call", name, "[1, 2]", "--type", "Int64"),
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert called.returncode == 0, called.stderr
        assert "[2, 4]" in called.stdout and 'parameters: {"count":2}' in called.stdout, called.stdout
    finally:
        server.kill()
        server.wait()


def test_processes_of_one_host_meet_without_multicast_or_endpoints():
    # The tests' Zenoh config has multicast off and no endpoints to connect to: the sessions of
    # this host find each other through the registry's rendezvous sockets alone.
    name = unique_topic("rendezvous")
    env = {**os.environ, "NAME": name}
    script = [sys.executable, str(NODES / "service_server.py")]
    server = subprocess.Popen(script, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout and server.stdout.readline().strip() == "serving"
        called = subprocess.run(
            nerve_cmd("service", "call", name, "[1, 2]", "--type", "Int64"), capture_output=True, text=True, timeout=60
        )
        assert called.returncode == 0, called.stderr
        assert "[2, 4]" in called.stdout, called.stdout
    finally:
        server.kill()
        server.wait()


def test_a_program_may_end_while_its_call_async_callbacks_run(tmp_path):
    """A call's future runs its callbacks on the call's thread, and they may let go of the GIL
    (asyncio's write to its loop's socket does): a program that ends meanwhile waits for them,
    instead of the thread being killed by the exiting interpreter and the process aborting."""
    name = unique_topic("exit")
    answer = threading.Event()

    def handler(request):
        assert answer.wait(60), "the client never said its callback was in place"
        return b"ok"

    server = nerve.Service(name, handler)
    script = tmp_path / "client.py"
    script.write_text(
        "import sys, time, nerve\n"
        "future = nerve.Client(sys.argv[1]).call_async(b'x')\n"
        "future.add_done_callback(lambda f: (time.sleep(0.2), print('callback ended', flush=True)))\n"
        "print('waiting', flush=True)\n"
        "future.result(timeout=60)\n"  # the program ends here, while the callback sleeps
    )
    client = subprocess.Popen([sys.executable, str(script), name], stdout=subprocess.PIPE, text=True)
    try:
        assert client.stdout and client.stdout.readline() == "waiting\n"
        answer.set()
        out, _ = client.communicate(timeout=60)
    finally:
        client.kill()
        server.close()
    assert client.returncode == 0 and out == "callback ended\n", (client.returncode, out)


# A server that ends while its handler (or an action's execute function) is being called.
EXIT_WHILE_SERVING = """
import sys, threading, nerve
called = threading.Event()
def work(_request):
    called.set()
    sum(range(20000))  # work, holding the GIL, while the program ends
    return b"ok"
if sys.argv[2] == "service":
    server = nerve.Service(sys.argv[1], work, workers=4)
else:
    server = nerve.ActionServer(sys.argv[1], work, workers=4)
print("serving", flush=True)
called.wait()
# The program ends here, with the server's threads busy and requests still coming.
"""


@pytest.mark.parametrize("kind", ["service", "action"])
def test_a_program_ends_cleanly_while_its_server_is_called(kind: str) -> None:
    # Handlers run on nerve's threads: they must be stopped before the interpreter goes, or one
    # calling into it then aborts the process. Each run ends mid-flood; all must exit 0.
    for run in range(5):
        name = unique_topic(f"exit-{kind}{run}")
        server = subprocess.Popen(
            [sys.executable, "-c", EXIT_WHILE_SERVING, name, kind],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert server.stdout and server.stdout.readline() == "serving\n"
        flooding = threading.Thread(target=flood, args=(kind, name, server), daemon=True)
        flooding.start()
        try:
            _, err = server.communicate(timeout=60)
        finally:
            server.kill()
        flooding.join(60)
        assert server.returncode == 0, f"run {run}: exit {server.returncode}\n{err}"


def flood(kind: str, name: str, server: subprocess.Popen[str]) -> None:
    """Calls `name` from 4 threads, as fast as it answers, until `server` ends."""

    def call() -> None:
        client = nerve.Client(name) if kind == "service" else nerve.ActionClient(name)
        client.wait_for_server(60)
        while server.poll() is None:
            try:
                if isinstance(client, nerve.Client):
                    client.call(b"x", timeout=5)
                else:
                    client.send_goal(b"x").result(timeout=5)
            except (nerve.ServiceError, nerve.ActionError, TimeoutError):
                pass  # the server went away mid-call: what this test does to it

    callers = [threading.Thread(target=call) for _ in range(4)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()


ADDER = """
import os
import numpy as np
import nerve

node = nerve.Node()
for event in node:
    if event["type"] == "INPUT" and event["id"] == "tick" and os.environ["SERVE"] == "no":
        raise SystemExit(3)  # ends before it serves
    if event["type"] == "INPUT" and event["id"] == "tick" and "service" not in globals():
        # Serves only from its first tick, well after the run started: a caller that did not
        # wait for it calls first.
        service = nerve.Service(os.environ["NAME"], lambda r: np.array([sum(r["value"].to_pylist())]))
        action = nerve.ActionServer(os.environ["NAME"], lambda goal: np.array([2 * goal.request["value"][0].as_py()]))
    if event["type"] == "INPUT" and event["id"] == "done":
        break
"""

CALLER = """
import os
import numpy as np
import nerve

node = nerve.Node()  # returns once the service and the action it calls have a server
reply = nerve.Client(os.environ["NAME"]).call(np.array([1, 2, 3]), timeout=10)
print("sum", reply["value"].to_pylist(), flush=True)
goal = nerve.ActionClient(os.environ["NAME"]).send_goal(np.array([21]), timeout=10)
print("result", goal.result(timeout=10)["value"].to_pylist(), flush=True)
node.send_output("done", b"")
"""


def calling_dataflow(dataflows, name: str, serve: str, caller_restart: str = "never") -> Path:
    return dataflows.write(
        f"""
        nodes:
          - id: adder
            path: adder.py
            env: {{NAME: {name}, SERVE: "{serve}"}}
            inputs: {{tick: timer/millis/500, done: caller/done}}
            services: {{serve: [{name}]}}
            actions: {{serve: [{name}]}}
          - id: caller
            path: caller.py
            env: {{NAME: {name}}}
            restart: {caller_restart}
            outputs: [done]
            services: {{call: [{name}]}}
            actions: {{call: [{name}]}}
        """,
        {"adder.py": ADDER, "caller.py": CALLER},
    )


def test_a_node_that_calls_a_service_starts_once_its_server_serves(dataflows):
    name = unique_topic("gated")
    run = dataflows.run(calling_dataflow(dataflows, name, "yes"))
    assert run.returncode == 0, run.output
    said = [line for line in run.node_lines("caller") if line.startswith(("sum", "result"))]
    assert said == ["sum [6]", "result [42]"], run.output


def test_a_caller_fails_naming_the_service_when_its_server_node_ends_before_serving(dataflows):
    """The caller waits for its server when the adder ends: it fails at once, naming both; its
    restart, which registers after the adder ended, is told so on registering and fails the same
    way (not after the ready timeout, with another reason)."""
    name = unique_topic("never-served")
    restart = "{policy: on-failure, max_restarts: 1, delay: 10ms}"
    run = dataflows.run(calling_dataflow(dataflows, name, "no", restart), "--ready-timeout", "30")
    assert run.returncode != 0, run.output
    said = f"node `caller` calls service `{name}`, but node `adder`, which serves it, ended (failed (exit code 3))"
    assert run.output.count(said) == 2, run.output

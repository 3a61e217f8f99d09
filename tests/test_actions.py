"""Actions across real processes and languages: a Python client against the Rust server of
examples/actions, the Rust client against its Python server, and the `nerve action` commands.
Processes meet over Zenoh on loopback (the server listens on a port, clients connect to it)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import NODES, REPO, ZENOH_ENV, free_port, nerve_cmd, unique_topic, zenoh_config

# Whichever test runs first builds `action_counter` (examples/actions) in its set-up.
pytestmark = pytest.mark.timeout(900)

EXAMPLE = REPO / "examples" / "actions"


def serve(command: list[str], config: Path) -> subprocess.Popen[str]:
    """Starts a server of the counting action and waits until it serves."""
    env = {**os.environ, ZENOH_ENV: str(config)}
    server = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert server.stdout and server.stdout.readline().startswith("serving"), "the server did not start"
    return server


def stop(server: subprocess.Popen[str]) -> str:
    """Kills a server (if it still runs); what it printed after `serving` and was not yet read."""
    if server.poll() is None:
        server.kill()
    out = server.stdout.read() if server.stdout else ""
    server.wait(timeout=30)
    return out


def test_python_client_against_the_rust_server(tmp_path, action_counter):
    name = unique_topic("count")
    port = free_port()
    server = serve([str(action_counter), "serve", name], zenoh_config(tmp_path, "server", port))
    env = {**os.environ, ZENOH_ENV: str(zenoh_config(tmp_path, "client", port)), "NAME": name}
    client = subprocess.Popen(
        [sys.executable, str(NODES / "action_client.py")], env=env, stdout=subprocess.PIPE, text=True
    )
    assert client.stdout
    lines, server_out = [], ""
    try:
        for line in client.stdout:
            lines.append(line.strip())
            if line.startswith("kill-me"):
                # The server dies in the middle of a goal that would take 50 s.
                server_out += stop(server)
        client.wait(timeout=60)
    finally:
        server_out += stop(server)
    out = "\n".join(lines)
    assert client.returncode == 0, out
    assert lines[0] == "accepted True", out
    assert lines[1] == "feedback [1, 2, 3, 4, 5]", out
    assert lines[2] == "result succeeded [5]", out
    assert lines[3] == f"rejected action `{name}` rejected the goal: n must be between 0 and 1000, not 5000", out
    aborted = f"aborted aborted failed at 3 as asked | action `{name}` aborted the goal: failed at 3 as asked"
    assert lines[4] == aborted, out
    assert lines[5] == "first [1] executing", out
    assert lines[6] == "cancel True", out
    assert lines[7] == "canceled canceled True False", out
    assert lines[8] == "polled None", out
    # The goal failed, as only the server's death could make it before its 50 s were up.
    assert lines[10].startswith("failed failed "), out
    assert f"the server of action `{name}` went away before the goal ended" in lines[10], out
    assert "cancel requested at" in server_out, server_out


def send(action_counter: Path, config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, ZENOH_ENV: str(config)}
    return subprocess.run([str(action_counter), "send", *args], env=env, capture_output=True, text=True, timeout=60)


def test_rust_client_against_the_python_server(tmp_path, action_counter):
    name = unique_topic("count")
    port = free_port()
    server = serve([sys.executable, str(EXAMPLE / "server.py"), name], zenoh_config(tmp_path, "server", port))
    config = zenoh_config(tmp_path, "client", port)
    try:
        done = send(action_counter, config, name, "5", "--step-ms", "10")
        assert done.returncode == 0, done.stdout + done.stderr
        lines = done.stdout.splitlines()
        assert lines[0].startswith("accepted ") and lines[-1] == "succeeded at 5", done.stdout
        assert lines[1:-1] == [f"feedback [{i}]" for i in range(1, 6)], done.stdout

        rejected = send(action_counter, config, name, "5000")
        assert rejected.returncode == 1
        assert "rejected the goal: ValueError: n must be between 0 and 1000, not 5000" in rejected.stdout

        aborted = send(action_counter, config, name, "10", "--step-ms", "10", "--fail-at", "3")
        assert aborted.returncode == 1
        assert aborted.stdout.splitlines()[-1] == "aborted (RuntimeError: failed at 3 as asked)", aborted.stdout

        canceled = send(action_counter, config, name, "1000", "--step-ms", "20", "--cancel-after", "0.5")
        assert canceled.returncode == 0, canceled.stdout + canceled.stderr
        assert "cancel taken: true" in canceled.stdout, canceled.stdout
        assert canceled.stdout.splitlines()[-1].startswith("canceled at "), canceled.stdout

        doomed = subprocess.Popen(
            [str(action_counter), "send", name, "1000", "--step-ms", "50"],
            env={**os.environ, ZENOH_ENV: str(config)},
            stdout=subprocess.PIPE,
            text=True,
        )
        assert doomed.stdout
        while not doomed.stdout.readline().startswith("feedback"):
            pass
        server_out = stop(server)
        # A goal of 50 s that has no timeout: only noticing the server's death ends it.
        rest, _ = doomed.communicate(timeout=60)
        assert doomed.returncode == 1
        assert rest.splitlines()[-1].startswith("failed (the server of action"), rest
        assert "cancel requested at" in server_out, server_out
    finally:
        stop(server)


def test_action_cli_lists_and_sends_goals(tmp_path, action_counter):
    name = unique_topic("cli")
    port = free_port()
    server = serve([str(action_counter), "serve", name], zenoh_config(tmp_path, "server", port))
    env = {**os.environ, ZENOH_ENV: str(zenoh_config(tmp_path, "client", port))}

    def nerve(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(nerve_cmd("action", *args), env=env, capture_output=True, text=True, timeout=60)

    try:
        listed = nerve("list")
        rows = [line.split() for line in listed.stdout.splitlines()]
        assert listed.returncode == 0 and rows[0] == ["ACTION", "RUN", "HOST"], listed.stdout + listed.stderr
        assert [name, "-"] in [row[:2] for row in rows], listed.stdout

        done = nerve("send_goal", name, "3", "--type", "Int64", "--metadata", '{"step_ms": 10}')
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.startswith("accepted goal "), done.stdout
        assert done.stdout.count("feedback:") == 3 and 'parameters: {"of":3}' in done.stdout, done.stdout
        assert "status: succeeded\nresult:\n" in done.stdout and "values: [3]" in done.stdout, done.stdout

        canceled = nerve("send_goal", name, "[1000]", "--metadata", '{"step_ms": 20}', "--cancel-after", "0.5")
        assert canceled.returncode == 0, canceled.stdout + canceled.stderr
        assert "cancel requested\n" in canceled.stdout and "status: canceled" in canceled.stdout, canceled.stdout

        rejected = nerve("send_goal", name, "5000")
        assert rejected.returncode == 1
        assert "rejected: n must be between 0 and 1000, not 5000" in rejected.stdout, rejected.stdout

        timed_out = nerve("send_goal", name, "1000", "--timeout", "0.5")
        assert timed_out.returncode == 1
        assert "no result within 0.5 s: goal canceled" in timed_out.stdout, timed_out.stdout + timed_out.stderr
    finally:
        stop(server)


def test_goals_between_two_hosts(hosts, action_counter, monkeypatch):
    """Server and client on two hosts (network namespaces; Zenoh's defaults, multicast
    scouting), both ways: the Python client against the Rust server, through to the server's
    death mid-goal, and the Rust client canceling a goal of the Python server."""
    name = unique_topic("hosts")
    monkeypatch.setenv("NAME", name)
    server = hosts.popen(0, [str(action_counter), "serve", name], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdout and server.stdout.readline().startswith("serving")
    client = hosts.popen(1, [sys.executable, str(NODES / "action_client.py")], stdout=subprocess.PIPE)
    assert client.stdout
    lines = []
    try:
        for line in client.stdout:
            lines.append(line.strip())
            if line.startswith("kill-me"):
                stop(server)
        client.wait(timeout=60)
    finally:
        stop(server)
    out = "\n".join(lines)
    assert client.returncode == 0, out
    assert lines[1:3] == ["feedback [1, 2, 3, 4, 5]", "result succeeded [5]"], out
    assert lines[6:8] == ["cancel True", "canceled canceled True False"], out
    assert lines[10].startswith("failed failed "), out

    server = hosts.popen(
        0, [sys.executable, str(EXAMPLE / "server.py"), name], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert server.stdout and server.stdout.readline().startswith("serving")
        command = [str(action_counter), "send", name, "1000", "--step-ms", "20", "--cancel-after", "0.5"]
        canceled = hosts.popen(1, command, stdout=subprocess.PIPE)
        rest, _ = canceled.communicate(timeout=60)
        assert canceled.returncode == 0, rest
        assert "cancel taken: true" in rest and rest.splitlines()[-1].startswith("canceled at "), rest
    finally:
        stop(server)

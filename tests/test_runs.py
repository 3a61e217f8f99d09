"""`nerve list`, `nerve stop` and `nerve logs` on dataflows running on this machine."""

import json
import subprocess
import time
from pathlib import Path

from conftest import nerve_cmd, wait_for
from test_lifecycle import copy_nodes, ticker_recorder

SLOW_READER = """
          - id: slow
            path: recorder.py
            env: {DELAY: "0.05"}
            inputs:
              count: {source: ticker/count, queue_size: 2, queue_policy: drop_oldest}
"""


def nerve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(nerve_cmd(*args), capture_output=True, text=True, timeout=60, check=False)


def runs() -> list[dict]:
    return json.loads(nerve("list", "--json").stdout)


def named(name: str) -> dict | None:
    return next((r for r in runs() if r["name"] == name), None)


def start_named(dataflows, prefix: str) -> tuple[subprocess.Popen, Path, str]:
    """A ticker read by a recorder and by a slow reader that drops, running under a fresh name."""
    path = dataflows.write(ticker_recorder(5, extra=SLOW_READER))
    copy_nodes(path, "ticker.py", "recorder.py")
    name = f"{prefix}-{time.monotonic_ns()}"
    proc = dataflows.start(path, "--name", name)
    wait_for(lambda: (r := named(name)) is not None and r["state"] == "running", what="the run in `nerve list`")
    return proc, path, name


def test_list_stop_and_logs_of_a_named_run(dataflows):
    proc, path, name = start_named(dataflows, "demo")

    # The slow reader's drops show up while the run goes on.
    def slow_input() -> dict:
        run = named(name)
        assert run, "the run disappeared"
        (slow,) = [n for n in run["nodes"] if n["id"] == "slow"]
        return slow["inputs"][0]

    wait_for(lambda: slow_input()["dropped"] > 0, what="drops of the slow reader")
    run = named(name)
    assert run and run["dataflow"] == str(path)
    states = {n["id"]: (n["state"], n["pid"] is not None, n["restarts"]) for n in run["nodes"]}
    assert states == {n: ("running", True, 0) for n in ("ticker", "recorder", "slow")}, states
    assert slow_input()["capacity"] == 2
    table = nerve("list").stdout
    assert f"{name} ({run['run_id']}): running" in table and "count " in table and " dropped" in table, table

    # A second run may not take the name.
    second = dataflows.run(path, "--name", name)
    assert second.returncode != 0
    assert f"a dataflow named `{name}` is already running (run {run['run_id']})" in second.stderr

    logs = nerve("logs", name, "recorder")
    assert logs.returncode == 0 and "INPUT count 0" in logs.stdout, logs.stderr
    bad = nerve("logs", name, "recordr")
    assert bad.returncode != 0 and "has no node `recordr` (its nodes: ticker, recorder, slow)" in bad.stderr
    follow = subprocess.Popen(
        nerve_cmd("logs", run["run_id"][:13], "ticker", "--follow"), stdout=subprocess.PIPE, text=True
    )

    # `nerve node` shows the same run node by node.
    listed = nerve("node", "list").stdout
    assert any(line.startswith(f"{name}/slow ") and " running " in line for line in listed.splitlines()), listed
    info = nerve("node", "info", "slow", "--dataflow", name)
    assert info.returncode == 0, info.stderr
    # It names the run as `nerve list` heads it.
    headline = next(line for line in table.splitlines() if line.startswith(f"{name} ({run['run_id']}): "))
    assert f"dataflow: {headline}\n" in info.stdout, (info.stdout, table)
    assert "path: recorder.py" in info.stdout and "  count <- ticker/count  (queued " in info.stdout, info.stdout
    unknown = nerve("node", "info", "no-such-node")
    assert unknown.returncode != 0 and "no running dataflow has a node `no-such-node`" in unknown.stderr
    assert f"{name}/ticker" in unknown.stderr, unknown.stderr

    stopped = nerve("stop", name)
    assert stopped.returncode == 0 and f"stopped {name}" in stopped.stderr, stopped.stderr
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, out + err
    assert "stopping (asked by `nerve stop`)" in err
    assert named(name) is None
    # `--follow` ends with the run, after the node's last line.
    followed, _ = follow.communicate(timeout=30)
    assert follow.returncode == 0 and followed.rstrip().splitlines()[-1].startswith("stopped after"), followed


def test_unknown_runs_are_named_in_the_error():
    stop = nerve("stop", "no-such-dataflow")
    assert stop.returncode != 0
    assert "no running dataflow is called `no-such-dataflow` or has an id starting with it" in stop.stderr
    bad_name = nerve("run", "x.yml", "--name", "two words")
    assert bad_name.returncode != 0 and "use letters, digits" in bad_name.stderr


def test_logs_of_a_run_that_ended(dataflows, tmp_path):
    path = dataflows.write(
        """
        nodes:
          - id: hello
            path: hello.py
        """,
        {"hello.py": "from nerve import Node\nnode = Node()\nprint('hello from the node', flush=True)\n"},
    )
    name = f"ended-{time.monotonic_ns()}"
    first = dataflows.run(path, "--name", name)
    assert first.returncode == 0, first.output
    assert named(name) is None, "the run should have ended"
    for which in (name, first.run_id()[:13]):
        logs = nerve("logs", which, "hello", "--follow")
        assert logs.returncode == 0, logs.stderr
        assert logs.stdout == "hello from the node\n", logs.stdout

    # A run whose logs went elsewhere is found there.
    elsewhere = tmp_path / "elsewhere"
    second = dataflows.run(path, "--log-dir", str(elsewhere))
    assert second.returncode == 0, second.output
    logs = nerve("logs", second.run_id(), "hello")
    assert logs.returncode == 0 and logs.stdout == "hello from the node\n", logs.stderr

    no_node = nerve("logs", name, "helo")
    assert no_node.returncode != 0
    assert f"{name} ({first.run_id()}) has ended and left no log of node `helo`" in no_node.stderr, no_node.stderr
    assert "(logs there: hello)" in no_node.stderr, no_node.stderr
    unknown = nerve("logs", "no-such-run", "hello")
    assert unknown.returncode != 0
    assert "no dataflow that runs or ran on this host is called `no-such-run`" in unknown.stderr, unknown.stderr
    assert "out/<run id>/<node>.log" in unknown.stderr, unknown.stderr


def test_top_shows_each_nodes_cpu_memory_rates_and_drops(dataflows):
    proc, _, name = start_named(dataflows, "top")

    def screen() -> dict:
        top = nerve("top", name, "--once", "--json", "--interval", "0.5")
        assert top.returncode == 0, top.stderr
        (run,) = json.loads(top.stdout)["runs"]
        assert run["name"] == name and run["state"] == "running", run
        return {n["id"]: n for n in run["nodes"]}

    # The ticker sends every 5 ms: once its messages flow, both readers receive them, and the
    # slow one (a 2-message queue read every 50 ms) drops some.
    wait_for(lambda: screen()["slow"]["dropped_per_sec"], what="drops of the slow reader in `nerve top`")
    nodes = screen()
    assert set(nodes) == {"ticker", "recorder", "slow"}
    for node in nodes.values():
        assert node["state"] == "running" and node["pid"] > 0, node
        assert node["memory_bytes"] > 1 << 20, node  # a Python interpreter's resident memory
        assert node["cpu_percent"] is not None and node["cpu_percent"] >= 0, node
    # Rates are the inputs' rates: the ticker has none, its readers get its messages.
    assert nodes["ticker"]["received_per_sec"] is None and nodes["ticker"]["queued"] is None
    assert nodes["recorder"]["received_per_sec"] > 0 and nodes["recorder"]["dropped"] == 0
    assert nodes["slow"]["received_per_sec"] > 0 and nodes["slow"]["queue_size"] == 2

    table = nerve("top", name, "--once", "--interval", "0.2")
    assert table.returncode == 0, table.stderr
    assert f"{name} ({named(name)['run_id']}): running" in table.stdout, table.stdout
    assert "cpu%" in table.stdout and "in msg/s" in table.stdout, table.stdout
    slow_line = next(line for line in table.stdout.splitlines() if line.strip().startswith("slow "))
    assert " MiB " in slow_line and "/2" in slow_line, slow_line

    unknown = nerve("top", "no-such-dataflow", "--once")
    assert unknown.returncode != 0 and "no running dataflow is called `no-such-dataflow`" in unknown.stderr
    bad = nerve("top", "--interval", "0")
    assert bad.returncode != 0 and "--interval must be a positive number of seconds" in bad.stderr

    # Watching a run that ends ends the watch.
    watch = subprocess.Popen(nerve_cmd("top", name, "--json", "--interval", "0.1"), stdout=subprocess.PIPE, text=True)
    assert watch.stdout is not None
    assert json.loads(watch.stdout.readline())["runs"][0]["name"] == name
    assert nerve("stop", name).returncode == 0
    proc.communicate(timeout=30)
    watch.communicate(timeout=30)
    assert watch.returncode == 0

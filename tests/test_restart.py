"""`restart:` policies: crashed nodes come back, wired in again, without restarting others; and
`on_failure:`, what a node's failure for good does to the others."""

import re
import signal

from test_lifecycle import copy_nodes, ticker_recorder


def counts(lines: list[str]) -> list[int]:
    return [int(line.split()[2]) for line in lines if line.startswith("INPUT count")]


def crashing_ticker(dataflows, restart: str):
    """Runs a ticker that sends 0..19 then kills itself, restarted as `restart` (YAML keys of
    the node) allows, read by a recorder."""
    ticker_env = '{CRASH_AT: "20"}\n            ' + restart.replace("\n", "\n            ")
    path = dataflows.write(ticker_recorder(5, ticker_env=ticker_env))
    copy_nodes(path, "ticker.py", "recorder.py")
    run = dataflows.run(path)
    assert run.returncode != 0
    assert "ticker (killed by signal 9)" in run.stderr
    # The reader kept running throughout: three whole runs of the producer, in order, then
    # its input closes once the producer is given up on.
    lines = run.node_lines("recorder")
    assert counts(lines) == list(range(20)) * 3, lines
    assert lines[-2:] == ["INPUT_CLOSED count", "END"]
    return run, path


def test_a_crashing_producer_is_restarted_until_its_limit(dataflows):
    run, path = crashing_ticker(dataflows, "restart: {policy: on-failure, max_restarts: 2, delay: 0.2}")
    assert re.findall(r"restarting in .*node=(\S+)", run.stderr) == ["ticker"] * 2, run.stderr
    assert "not restarting: 2 restart(s) in a row already (max_restarts: 2)" in run.stderr
    log = next((path.parent / "out").glob("*/ticker.log")).read_text()
    assert "--- nerve: restart 2 of this node ---" in log


def test_doras_restart_keys_count_the_runs_restarts(dataflows):
    # dora-rs's form, with dora's meaning: no back-off unless asked, the run's restarts counted.
    run, _ = crashing_ticker(dataflows, "restart_policy: on-failure\nmax_restarts: 2")
    assert re.findall(r"restarting in 0ns .*node=(\S+)", run.stderr) == ["ticker"] * 2, run.stderr
    assert "not restarting: 2 restart(s) in this run already (max_restarts: 2)" in run.stderr


def test_a_restarted_node_knows_it_is_one(dataflows):
    # The first process fails; the restart says which run and restart it is, then finishes.
    node = (
        "import sys\nfrom nerve import Node\nnode = Node()\n"
        "print(node.dataflow_id(), node.restart_count(), node.is_restart(), flush=True)\n"
        "sys.exit(0 if node.is_restart() else 3)\n"
    )
    path = dataflows.write(
        """
        nodes:
          - id: phoenix
            path: phoenix.py
            restart: {policy: on-failure, delay: 0}
        """,
        {"phoenix.py": node},
    )
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    first, second = (line.split() for line in run.node_lines("phoenix") if line.count(" ") == 2)
    assert first[1:] == ["0", "False"] and second[1:] == ["1", "True"], (first, second)
    assert first[0] == second[0] and first[0] in run.stderr  # the run id nerve printed


def test_a_crashed_reader_is_wired_in_again(dataflows, tmp_path):
    mark, back = tmp_path / "crashed-once", tmp_path / "back"
    reader_env = f'{{CRASH_AT: "10", CRASH_MARK: "{mark}", BACK_MARK: "{back}"}}'
    # The ticker sends message 100 and on only once the restarted reader is back: those it
    # must get, however long the restart took.
    ticker_env = f'{{STOP_AFTER: "300", PAUSE_AT: "100", PAUSE_UNTIL: "{back}"}}'
    path = dataflows.write(
        f"""
        nodes:
          - id: ticker
            path: ticker.py
            env: {ticker_env}
            inputs: {{tick: timer/millis/5}}
            outputs: [count]
          - id: recorder
            path: recorder.py
            env: {reader_env}
            restart: on-failure
            inputs: {{count: ticker/count}}
        """
    )
    copy_nodes(path, "ticker.py", "recorder.py")
    run = dataflows.run(path)
    assert mark.exists()
    assert run.returncode == 0, run.output
    assert re.findall(r"restarting in .*node=(\S+)", run.stderr) == ["recorder"], run.stderr
    seen = counts(run.node_lines("recorder"))
    first, second = seen[:10], seen[10:]
    assert first == list(range(10))
    # The new process reads on from where the producer is now (what came during the gap is
    # gone with the old process), in order, to the end.
    assert second, run.output
    assert second == sorted(set(second)) and second[0] >= 10, second
    assert second[-200:] == list(range(100, 300)), second
    assert run.node_lines("recorder")[-2:] == ["INPUT_CLOSED count", "END"]


def test_always_restarts_a_node_that_finished(dataflows):
    ticker_env = '{STOP_AFTER: "5"}\n            restart: {policy: always, max_restarts: 2, delay: 100ms}'
    path = dataflows.write(ticker_recorder(5, ticker_env=ticker_env))
    copy_nodes(path, "ticker.py", "recorder.py")
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    assert counts(run.node_lines("recorder")) == list(range(5)) * 3


def test_a_stop_during_the_back_off_cancels_the_restart(dataflows):
    ticker_env = '{CRASH_AT: "3"}\n            restart: {policy: on-failure, delay: 60, max_delay: 60}'
    path = dataflows.write(ticker_recorder(5, ticker_env=ticker_env))
    copy_nodes(path, "ticker.py", "recorder.py")
    proc = dataflows.start(path)
    assert proc.stderr
    # Until the crashed ticker's restart is scheduled, 60 s away.
    err = ""
    while "restarting in 60s" not in err:
        line = proc.stderr.readline()
        assert line, f"the run ended before the restart was scheduled:\n{err}"
        err += line
    proc.send_signal(signal.SIGINT)
    # Within half the back-off: the stop did not wait for it.
    proc.wait(timeout=30)
    err += proc.stderr.read()
    assert "ticker (killed by signal 9)" in err
    log = next((path.parent / "out").glob("*/ticker.log")).read_text()
    assert "restart 1 of this node" not in log, "the restart went ahead"


# A node that says it runs, sends one message and fails; and one that says how it was ended.
FAILING = """
import sys
from nerve import Node

node = Node()
print("run", flush=True)
node.send_output("out", [1])
sys.exit(3)
"""
WATCHER = """
from nerve import Node

for event in Node():
    if event["type"] in ("STOP", "INPUT_CLOSED"):
        print("saw", event["type"], flush=True)
        break
"""


def test_on_failure_stop_all_stops_every_node_once_restarts_give_up(dataflows):
    path = dataflows.write(
        """
        on_failure: stop_all
        nodes:
          - id: fail
            path: fail.py
            outputs: [out]
            restart: {policy: on-failure, max_restarts: 1, delay: 0.01}
          - id: watch
            path: watch.py
            inputs: {tick: dora/timer/millis/50}
        """,
        {"fail.py": FAILING, "watch.py": WATCHER},
    )
    run = dataflows.run(path)
    assert run.returncode != 0
    # Restarted once; its second failure is final, and stops the run.
    assert run.node_lines("fail") == ["run", "--- nerve: restart 1 of this node ---", "run"], run.stderr
    assert run.node_lines("watch") == ["saw STOP"], run.stderr
    assert "node `fail` failed (exit code 3); `on_failure: stop_all` stops every node" in run.stderr


def test_with_on_failure_continue_the_others_keep_running(dataflows):
    # The node's own `continue` overrides the dataflow's `stop_all`.
    path = dataflows.write(
        """
        on_failure: stop_all
        nodes:
          - id: fail
            path: fail.py
            outputs: [out]
            on_failure: continue
          - id: watch
            path: watch.py
            inputs: {x: fail/out}
        """,
        {"fail.py": FAILING, "watch.py": WATCHER},
    )
    run = dataflows.run(path)
    assert run.returncode != 0 and "fail (exit code 3)" in run.stderr
    assert run.node_lines("watch") == ["saw INPUT_CLOSED"], run.stderr
    assert "the other nodes keep running (`on_failure: continue`" in run.stderr

"""Start, stop, crashes and clean-up of real node processes."""

import json
import os
import re
import shutil
import signal
import socket
import stat
import struct
import subprocess
import time
from pathlib import Path

import nerve
from conftest import NODES, nerve_cmd, nerve_shm_objects, runtime_dir, wait_for


def copy_nodes(path, *names):
    for name in names:
        shutil.copy(NODES / name, path.parent / name)


def node_log(path: Path, node: str) -> str:
    """What ``node`` of the run of dataflow ``path`` has printed so far, from its log file."""
    logs = list((path.parent / "out").glob(f"*/{node}.log"))
    return logs[0].read_text() if logs else ""


def ticker_recorder(period_ms: int, ticker_env: str = "", extra: str = "") -> str:
    """A ticker feeding a recorder, plus `extra` nodes (YAML, indented like the others)."""
    env = f"\n            env: {ticker_env}" if ticker_env else ""
    return f"""
        nodes:
          - id: ticker
            path: ticker.py{env}
            inputs: {{tick: timer/millis/{period_ms}}}
            outputs: [count]
          - id: recorder
            path: recorder.py
            inputs: {{count: ticker/count}}
{extra}"""


def test_ctrl_c_stops_every_node_cleanly(dataflows):
    idle = "          - id: idle\n            path: sleeper.py\n"
    path = dataflows.write(ticker_recorder(5, extra=idle))
    copy_nodes(path, "ticker.py", "recorder.py", "sleeper.py")
    proc = dataflows.start(path)

    def running() -> bool:
        # The recorder got data from the ticker, and the idle node waits for events.
        return "INPUT count" in node_log(path, "recorder") and "ready" in node_log(path, "idle")

    wait_for(lambda: running() or proc.poll() is not None, what="every node to run")
    # While running: the run's objects exist and are private to the user. They are named
    # after the run (its log folder's name), whatever other runs of the machine make.
    (run_id,) = [d.name for d in (path.parent / "out").iterdir()]
    ours = {n for n in nerve_shm_objects() if n.startswith(f"nerve.{run_id}.")}
    assert ours, "no shared memory while running"
    for name in ours:
        mode = stat.S_IMODE(os.stat(f"/dev/shm/{name}").st_mode)
        assert mode == 0o600, f"{name} has mode {oct(mode)}"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, out + err
    assert re.search(r"\[ticker\] stopped after \d+", out)
    assert "[recorder] STOP" in out and "[recorder] END" in out
    assert "[idle] event STOP" in out and "[idle] bye" in out
    assert not (nerve_shm_objects() & ours)


def start_stubborn(dataflows, grace: str) -> subprocess.Popen[str]:
    """A run of one node that ignores STOP, once the node runs."""
    path = dataflows.write(
        """
        nodes:
          - id: stubborn
            path: sleeper.py
            env: {IGNORE_STOP: "1"}
        """
    )
    copy_nodes(path, "sleeper.py")
    proc = dataflows.start(path, "--grace", grace)
    wait_for(lambda: "ready" in node_log(path, "stubborn") or proc.poll() is not None, what="the node to run")
    return proc


def test_node_ignoring_stop_is_killed_after_grace(dataflows):
    proc = start_stubborn(dataflows, "1")
    proc.send_signal(signal.SIGINT)
    # The node would sleep an hour: the run ends (within the bound here) only by killing it.
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode != 0
    assert "stubborn (did not stop within the grace period)" in err


def test_a_failure_before_the_start_blames_only_the_node_that_failed(dataflows, tmp_path):
    # `slow` is still importing when `early` fails: it may connect before or after the runtime
    # sees the failure; either way it is stopped at once, not left to hang or blamed.
    mark = tmp_path / "early-failed"
    path = dataflows.write(
        """
        nodes:
          - id: early
            path: early.py
          - id: slow
            path: slow.py
            inputs: {tick: dora/timer/millis/50}
        """,
        {
            "early.py": f"import pathlib, sys\npathlib.Path({str(mark)!r}).touch()\nsys.exit(3)\n",
            "slow.py": f"""
                import pathlib, time
                while not pathlib.Path({str(mark)!r}).exists():
                    time.sleep(0.01)
                from nerve import Node
                for event in Node():
                    print(event["type"], flush=True)
            """,
        },
    )
    run = dataflows.run(path, "--ready-timeout", "600")
    assert run.returncode == 1, run.output
    assert "dataflow aborted: node `early` exited before the dataflow started" in run.stderr, run.stderr
    assert "node(s) failed: early (exit code 3)\n" in run.stderr, run.stderr
    assert "slow" not in run.stderr.split("node(s) failed:")[1], run.stderr


def test_a_second_interrupt_kills_at_once_and_says_so(dataflows):
    # A grace period far longer than the test's bound: only the second interrupt ends the run.
    proc = start_stubborn(dataflows, "3600")
    proc.send_signal(signal.SIGINT)
    assert proc.stderr is not None
    for line in proc.stderr:
        if "interrupt again to kill at once" in line:
            break
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode != 0
    assert "stubborn (killed at the second interrupt)" in err, err
    assert "grace period" not in err, err


def voluntary_switches(pid: int, tid: int) -> int:
    status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
    return int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)", status, re.M).group(1))


def test_an_idle_run_leaves_the_runtime_asleep(dataflows):
    """The runtime's event loop, and the threads of a node reading a topic, sleep until there is
    something to do: no polling."""
    path = dataflows.write(
        f"""
        nodes:
          - id: idle
            path: sleeper.py
            inputs: {{pose: topic/test/idle/{os.getpid()}}}
        """
    )
    copy_nodes(path, "sleeper.py")
    proc = dataflows.start(path)
    try:
        node = str(path.parent / "sleeper.py")

        def node_pid() -> int | None:
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    if node in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0"):
                        return int(pid)
                except OSError:
                    continue
            return None

        wait_for(lambda: node_pid() is not None, what="the node's process")
        pid = node_pid()

        def threads() -> dict[int, str]:
            # By name (a thread's name is cut to 15 bytes).
            tasks = os.listdir(f"/proc/{pid}/task")
            return {int(t): Path(f"/proc/{pid}/task/{t}/comm").read_text().strip() for t in tasks}

        # The node's topic input has no thread of its own: its queues are in the node's inbox.
        wait_for(lambda: "nerve-control" in threads().values(), what="the node to start")
        assert not any(name.startswith("nerve-topic-in") for name in threads().values()), threads()
        # The node waits for events, and the runtime wrote its last line: start-up is over.
        wait_for(lambda: "ready" in node_log(path, "idle"), what="the node to wait for events")
        # The event loop runs on the runtime process's main thread, whose task id is its pid.
        # The node's main thread looks for Ctrl-C between waits; every other thread of it sleeps.
        watched = [(proc.pid, proc.pid), *((pid, tid) for tid in threads() if tid != pid)]
        before = [voluntary_switches(*w) for w in watched]
        time.sleep(2.0)
        after = [voluntary_switches(*w) for w in watched]
        # Each used to wake every 100 ms (20 times here) to look for work.
        assert all(b - a <= 2 for a, b in zip(before, after, strict=True)), (before, after)
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, out + err
    assert "[idle] event STOP" in out


def test_crashing_node_closes_its_readers_inputs(dataflows):
    path = dataflows.write(ticker_recorder(5, ticker_env='{CRASH_AT: "20"}'))
    copy_nodes(path, "ticker.py", "recorder.py")
    run = dataflows.run(path)
    assert run.returncode != 0
    assert "ticker (killed by signal 9)" in run.stderr
    lines = run.node_lines("recorder")
    # Everything sent before the crash arrives, then the input closes, then the stream ends.
    assert lines[:20] == [f"INPUT count {n}" for n in range(20)]
    assert lines[20:] == ["INPUT_CLOSED count", "END"]


def test_sigkill_of_nerve_takes_every_node_and_shm_with_it(dataflows):
    path = dataflows.write(ticker_recorder(10))
    copy_nodes(path, "ticker.py", "recorder.py")
    proc = dataflows.start(path)
    wait_for(lambda: len(list((path.parent / "out").glob("*/recorder.log"))) == 1, what="log file")
    log = next((path.parent / "out").glob("*/recorder.log"))
    run_id = log.parent.name  # the run's objects are named after it, whatever other runs make
    wait_for(lambda: "INPUT count" in log.read_text(), what="first message")
    pids = node_pids(path.parent)
    assert len(pids) == 2, pids
    proc.kill()
    proc.communicate(timeout=10)
    wait_for(lambda: not any(alive(p) for p in pids), timeout=10, what="nodes to die")
    wait_for(lambda: not any(n.startswith(f"nerve.{run_id}.") for n in nerve_shm_objects()), 10, "shm removal")


def test_the_watchdog_holds_nothing_of_the_run_but_its_pipe(dataflows):
    """The watchdog process `nerve run` forks keeps only its pipe and /dev/null as standard
    streams, even beside the Foxglove and dashboard servers: a copy of any other descriptor (a
    Zenoh socket, the host's session lock) would outlive its closing by the run, and the host's
    next session would wait on that lock forever."""
    path = dataflows.write(ticker_recorder(10))
    copy_nodes(path, "ticker.py", "recorder.py")
    proc = dataflows.start(path, "--foxglove=0", "--view=0")
    try:
        wait_for(lambda: len(node_pids(path.parent)) == 2, what="both nodes")
        # Forked, never exec'd: the one child with nerve's own command line.
        (watchdog,) = [pid for pid in children(proc.pid) if cmdline(pid) == cmdline(proc.pid)]
        held = {fd: os.readlink(f"/proc/{watchdog}/fd/{fd}") for fd in os.listdir(f"/proc/{watchdog}/fd")}
        assert set(held) - {"0", "1", "2"} == {fd for fd, what in held.items() if what.startswith("pipe:")}, held
        assert len(held) == 4 and {held[fd] for fd in "012"} == {"/dev/null"}, held
    finally:
        dataflows.interrupt(proc)


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    return [int(task) for task in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def cmdline(pid: int) -> bytes:
    return Path(f"/proc/{pid}/cmdline").read_bytes()


def node_pids(folder):
    """Pids of live processes whose command line runs a node script of `folder`."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = open(f"/proc/{entry}/cmdline", "rb").read().split(b"\0")
            except OSError:
                continue
            if any(arg.startswith(str(folder).encode()) and arg.endswith(b".py") for arg in cmdline):
                pids.append(int(entry))
    return pids


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


def test_logs_are_prefixed_and_written_per_node(dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: talker
            path: talker.py
        """,
        {
            "talker.py": """
            import logging
            import sys
            from nerve import Node
            node = Node()
            print("hello from print")
            print("to stderr", file=sys.stderr)
            logging.getLogger("talker").info("hello from logging")
            """
        },
    )
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    lines = run.node_lines("talker")
    assert "hello from print" in lines and "to stderr" in lines
    assert "INFO talker: hello from logging" in lines
    log = (path.parent / "out" / run.run_id() / "talker.log").read_text()
    assert "hello from print" in log and "INFO talker: hello from logging" in log


def test_nodes_start_together(dataflows):
    """A slow-starting node does not make a fast one miss the first messages."""
    path = dataflows.write(
        """
        nodes:
          - id: fast
            path: fast.py
            outputs: [out]
          - id: slow
            path: slow.py
            inputs: {in: fast/out}
        """,
        {
            "fast.py": """
            from nerve import Node
            node = Node()
            node.send_output("out", b"first")
            """,
            "slow.py": """
            import time
            time.sleep(1.5)
            from nerve import Node
            node = Node()
            event = node.next(timeout=10)
            assert event["type"] == "INPUT" and event["value"].to_pylist() == [ord(c) for c in "first"], event
            print("got first")
            """,
        },
    )
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    assert run.node_lines("slow") == ["got first"]


def test_junk_on_the_runtime_socket_does_not_disturb_the_run(dataflows):
    path = dataflows.write(ticker_recorder(5, ticker_env="{STOP_AFTER: '300'}"))
    copy_nodes(path, "ticker.py", "recorder.py")
    before = set(runtime_dir().glob("*.sock"))
    proc = dataflows.start(path)
    wait_for(lambda: set(runtime_dir().glob("*.sock")) - before or proc.poll() is not None, what="the run's socket")
    (sock_path,) = set(runtime_dir().glob("*.sock")) - before
    junk = [
        b"",
        os.urandom(3000),
        struct.pack("<I", 0xFFFFFFFF),  # a length prefix far beyond the frame limit
        struct.pack("<I", 9) + b"not json!",
        # Well-formed but unwelcome: a second `recorder`, an unknown node, a foreign version,
        # and `ready` without registering.
        register("recorder", nerve.__version__),
        register("no-such-node", nerve.__version__),
        register("recorder", "99.0.0"),
        frame({"type": "ready"}),
    ]
    for data in junk:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect(str(sock_path))
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            try:
                s.recv(1 << 16)  # whatever the runtime answers (a refusal), or nothing
            except OSError:
                pass
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    counts = [line for line in out.splitlines() if line.startswith("[recorder] INPUT count")]
    assert counts == [f"[recorder] INPUT count {n}" for n in range(300)], out[-2000:]
    assert "[recorder] INPUT_CLOSED count" in out


def register(node: str, version: str) -> bytes:
    return frame({"type": "register", "node_id": node, "nerve_version": version, "pid": 1})


def frame(message) -> bytes:
    body = json.dumps(message).encode()
    return struct.pack("<I", len(body)) + body


def test_drops_of_a_keep_latest_input_are_counted_not_warned_about(dataflows, tmp_path):
    # The reader takes one message, then none until the test lets it: it is as slow as a reader
    # can be, however fast or slow the machine runs either.
    done, release = tmp_path / "ticker-done", tmp_path / "release"
    path = dataflows.write(
        f"""
        nodes:
          - id: ticker
            path: ticker.py
            env: {{STOP_AFTER: '400', DONE_FILE: "{done}"}}
            inputs: {{tick: timer/millis/1}}
            outputs: [count]
          - id: recorder
            path: recorder.py
            env: {{HOLD_UNTIL: "{release}"}}
            inputs:
              count: {{source: ticker/count, queue_size: 2, queue_policy: drop_oldest}}
        """
    )
    copy_nodes(path, "ticker.py", "recorder.py")
    name = f"drops-{time.monotonic_ns()}"
    proc = dataflows.start(path, "--name", name)
    try:
        wait_for(lambda: "INPUT count" in node_log(path, "recorder"), what="the reader's one message")
        wait_for(done.exists, what="the ticker's last message")
        listed = json.loads(subprocess.run(nerve_cmd("list", "--json"), capture_output=True, check=True).stdout)
        (run,) = [r for r in listed if r["name"] == name]
        (recorder,) = [n for n in run["nodes"] if n["id"] == "recorder"]
        (count,) = recorder["inputs"]
        # Taken one, holding the newest two: every other message was dropped, and counted.
        assert (count["queued"], count["capacity"], count["dropped"]) == (2, 2, 397), count
        info = subprocess.run(nerve_cmd("node", "info", "recorder"), capture_output=True, text=True, check=True)
        assert "count <- ticker/count  (queued 2/2, 397 dropped)" in info.stdout, info.stdout
        # The run outlasts the interval at which nerve used to warn about these drops again and
        # again, although the dataflow chose to lose them.
        time.sleep(6)
    finally:
        release.touch()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    received = [line for line in out.splitlines() if line.startswith("[recorder] INPUT count")]
    assert len(received) == 3, out
    # Said once, as the run ends: the total.
    assert [line for line in err.splitlines() if "dropped" in line] == [
        "nerve: recorder/count dropped 397 message(s) in all (queue full, drop_oldest)"
    ], err


def test_a_process_that_never_creates_a_node_is_named_when_it_exits(dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: forgetful
            path: forgetful.py
          - id: ticker
            path: ticker.py
            env: {STOP_AFTER: "3"}
            inputs: {tick: timer/millis/10}
            outputs: [count]
        """,
        {"forgetful.py": "print('no Node here')\n"},
    )
    copy_nodes(path, "ticker.py")
    hint = "without connecting to the run: does it create a nerve Node (`Node()` in Python"
    # Said as the process exits, before the run starts, not after the (long) ready timeout.
    run = dataflows.run(path, "--ready-timeout", "600")
    assert run.returncode == 0, run.output
    lines = run.stderr.splitlines()
    said = [i for i, line in enumerate(lines) if "exited (exit code 0) " + hint in line and "forgetful" in line]
    started = [i for i, line in enumerate(lines) if "all nodes ready, starting" in line]
    assert said and started and said[0] < started[0], run.stderr

    # A failing one aborts the run at once, with the same hint.
    (path.parent / "forgetful.py").write_text("raise SystemExit(3)\n")
    run = dataflows.run(path, "--ready-timeout", "600")
    assert run.returncode == 1, run.output
    assert f"dataflow aborted: node `forgetful` exited before the dataflow started {hint}" in run.stderr, run.stderr


BATCH_SOURCE = """
import nerve

node = nerve.Node()
for i in range(5):
    node.send_output("data", [i])
"""

# Ticked by a timer and listening to a topic no one publishes, as well as fed by the source:
# neither would ever close by itself.
BATCH_SINK = """
import nerve

got = []
for event in nerve.Node():
    if event["type"] == "INPUT" and event["id"] == "data":
        got.append(event["value"][0].as_py())
    elif event["type"] == "INPUT_CLOSED":
        print("closed", event["id"], flush=True)
print("got", got, flush=True)
"""

BATCH = """
{key}nodes:
  - id: source
    path: source.py
    outputs: [data]
  - id: sink
    path: sink.py
    inputs:
      data: {{source: source/data, queue_size: 100}}
      tick: timer/millis/10
      news: topic/{topic}
"""


def test_exit_when_nodes_finish_ends_a_batch_run_whose_sink_has_a_timer_and_a_topic(dataflows, tmp_path):
    """dora-rs's `exit_when_nodes_finish:` (or `nerve run --exit-when-nodes-finish`): once the
    inputs other nodes feed have closed, the node's timer and topic inputs close too, so the run
    ends by itself, every message delivered first."""
    topic = f"batch/{os.getpid()}"
    nodes = {"source.py": BATCH_SOURCE, "sink.py": BATCH_SINK}
    for key, extra in (("exit_when_nodes_finish: true\n", ()), ("", ("--exit-when-nodes-finish",))):
        path = dataflows.write(BATCH.format(key=key, topic=topic), nodes, name=f"batch{len(extra)}")
        run = dataflows.run(path, *extra)
        assert run.returncode == 0, run.output
        lines = run.node_lines("sink")
        assert lines[0] == "closed data", lines
        assert sorted(lines[1:3]) == ["closed news", "closed tick"], lines
        assert lines[3] == "got [0, 1, 2, 3, 4]", lines


def test_exit_when_nodes_finish_must_be_a_boolean(dataflows):
    path = dataflows.write("exit_when_nodes_finish: soon\nnodes:\n  - id: a\n    path: a.py\n")
    checked = subprocess.run(nerve_cmd("validate", str(path)), capture_output=True, text=True)
    assert checked.returncode != 0
    assert "exit_when_nodes_finish: expected true or false, found a string" in checked.stderr, checked.stderr


def test_a_node_left_running_after_its_inputs_closed_is_killed_after_its_finish_grace(dataflows):
    """dora-rs's `finish_grace_secs`: once every other node ended and all its inputs closed, a
    node may still run that long; then nerve kills it, and the run says why."""
    path = dataflows.write(
        """
        nodes:
          - id: source
            path: source.py
            outputs: [data]
          - id: prompt
            path: reader.py
            finish_grace_secs: 600
            inputs: {data: source/data}
          - id: lingerer
            path: reader.py
            args: linger
            finish_grace_secs: 0.5
            inputs: {data: source/data}
        """,
        {
            "source.py": """
                import pyarrow as pa
                from nerve import Node

                node = Node()
                for i in range(3):
                    node.send_output("data", pa.array([i]))
            """,
            "reader.py": """
                import sys
                import time
                from nerve import Node

                got = sum(1 for event in Node() if event["type"] == "INPUT")
                print(f"inputs closed after {got}", flush=True)
                while len(sys.argv) > 1:  # past its inputs, in a computation that does not end
                    time.sleep(3600)
            """,
        },
    )
    run = dataflows.run(path)
    assert run.returncode != 0, run.output
    assert run.node_lines("prompt") == run.node_lines("lingerer") == ["inputs closed after 3"]
    assert "lingerer (still running 500ms after every other node ended and all its inputs closed" in run.stderr
    assert "prompt (" not in run.stderr, run.stderr


def test_a_hung_node_is_killed_after_its_health_check_timeout_and_restarted(dataflows):
    """dora-rs's `health_check_timeout`: a node that neither calls nerve nor waits for an event
    that long is hung; nerve kills it, and its restart policy applies as to a crash. A node
    waiting for its next event for longer is not hung."""
    path = dataflows.write(
        """
        nodes:
          - id: source
            path: source.py
            outputs: [data]
          - id: hangs
            path: hangs.py
            health_check_timeout: 0.5
            restart_policy: on-failure
            inputs: {data: source/data}
          - id: waits
            path: waits.py
            health_check_timeout: 0.5
            inputs: {data: source/data}
        """,
        {
            "source.py": """
                import time
                import pyarrow as pa
                from nerve import Node

                node = Node()
                node.send_output("data", pa.array([1]))
                # Long past the readers' timeouts: `waits` waits for its next event all along.
                time.sleep(3)
                node.send_output("data", pa.array([2]))
            """,
            "hangs.py": """
                import threading
                from nerve import Node

                node = Node()
                if node.is_restart():
                    print(f"restarted {node.restart_count()}", flush=True)
                else:
                    next(event for event in node if event["type"] == "INPUT")
                    print("hanging", flush=True)
                    threading.Event().wait()  # in its own code, never to return
            """,
            "waits.py": """
                from nerve import Node

                got = [event["value"][0].as_py() for event in Node() if event["type"] == "INPUT"]
                print(f"got {got}", flush=True)
            """,
        },
    )
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    assert run.node_lines("hangs") == ["hanging", "--- nerve: restart 1 of this node ---", "restarted 1"], run.output
    assert "unresponsive: no call to nerve and no wait for an event in 500ms (health_check_timeout)" in run.output
    assert run.node_lines("waits") == ["got [1, 2]"], run.output

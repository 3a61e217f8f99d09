"""Topics by name across real processes: discovery, shared memory, keep-latest, restarts,
domains, scopes, in-process delivery and callbacks."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import nerve
import numpy as np
import pyarrow as pa
import pytest
from conftest import NODES, publish_topic, runtime_dir, unique_topic, wait_for


def finish(proc: subprocess.Popen[str], timeout: float = 60) -> str:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return out


def check(message: nerve.Message | None, i: int) -> None:
    """Message ``i`` of topic_publisher.py, byte for byte."""
    assert message is not None, f"message {i} missing"
    assert message["type"] == "INPUT"
    assert message["metadata"]["i"] == i
    values = message["value"].to_numpy(zero_copy_only=True)
    assert values.shape == (1 + i % 1000,)
    assert zlib.crc32(values.tobytes()) == message["metadata"]["crc"]
    assert (values == i).all()


def shared_mappings() -> str:
    return Path("/proc/self/maps").read_text()


def test_another_process_delivers_in_shared_memory_in_order() -> None:
    topic = unique_topic("order")
    sub = nerve.Subscriber(topic, queue_size=500)
    proc = publish_topic(topic, 0, 300)
    check(first := sub.recv(30), 0)
    address = first["value"].buffers()[1].address
    # The value is a view of the publisher's shared memory, not a copy.
    maps = [line for line in shared_mappings().splitlines() if "memfd:nerve-block" in line]
    assert any(int(lo, 16) <= address < int(hi, 16) for lo, hi in (m.split()[0].split("-") for m in maps))
    finish(proc)
    # The publisher has exited; everything it sent is still there, in order.
    for i in range(1, 300):
        check(sub.recv(10), i)
    assert sub.recv(0) is None
    assert sub.dropped == 0


def test_keep_latest_slow_subscriber_never_slows_the_publisher() -> None:
    topic = unique_topic("latest")
    sub = nerve.Subscriber(topic, keep_latest=True)
    proc = publish_topic(topic, 0, 200, "--rate", "400")
    # A few messages taken as they come; then none: the publisher finishes all the same.
    seen: list[int] = []
    while len(seen) < 5 and (m := sub.recv(30)) is not None:
        seen.append(m["metadata"]["i"])
        if seen[-1] == 199:
            break
    finish(proc)
    # The newest message always arrives, and nothing else was kept for this reader.
    seen += [m["metadata"]["i"] for m in iter(lambda: sub.recv(0), None)]
    assert seen[-1] == 199, "the newest message must always arrive"
    assert seen == sorted(set(seen)), seen
    assert len(seen) + sub.dropped == 200, "every message is taken or counted as skipped"
    assert len(seen) <= 6, "a keep-latest subscriber skips what it had no time for"


def test_a_slow_subscriber_loses_its_oldest_and_never_stalls_another() -> None:
    topic = unique_topic("slow")
    slow = nerve.Subscriber(topic, queue_size=5)
    fast = nerve.Subscriber(topic, queue_size=1000)
    proc = publish_topic(topic, 0, 100, "--subscribers", "2")
    for i in range(100):
        check(fast.recv(10), i)
    finish(proc)
    # The publisher has exited: what it sent is queued by now.
    got = [m["metadata"]["i"] for m in iter(lambda: slow.recv(0), None)]
    assert got == [95, 96, 97, 98, 99]
    assert slow.dropped == 95


def test_subscriber_resumes_when_its_publisher_is_killed_and_restarted() -> None:
    topic = unique_topic("restart")
    sub = nerve.Subscriber(topic, queue_size=1000)
    first = publish_topic(topic, 0, 1_000_000, "--rate", "200")
    for i in range(20):
        check(sub.recv(30), i)
    first.send_signal(signal.SIGKILL)
    first.wait()
    # Whatever the dead publisher had queued is still intact.
    while (m := sub.recv(0.5)) is not None and m["metadata"]["i"] < 1000:
        check(m, m["metadata"]["i"])
    wait_for(lambda: sub.publisher_count == 0, what="the dead publisher to be noticed")
    second = publish_topic(topic, 5000, 50)
    for i in range(5000, 5050):
        check(sub.recv(30), i)
    finish(second)
    entries = list(Path(nerve_topic_dir(topic)).iterdir())
    assert [e.name for e in entries if e.name.endswith(".pub")] == [], "registry entries must go with their process"


def nerve_topic_dir(topic: str) -> Path:
    root = runtime_dir()
    netns = os.stat("/proc/self/ns/net").st_ino
    return root / "topics" / f"net{netns}" / "d0" / topic.replace("/", "%")


def test_two_domains_side_by_side_never_meet() -> None:
    topic = unique_topic("domains")
    one = nerve.Subscriber(topic, domain=1, queue_size=100)
    two = nerve.Subscriber(topic, domain=2, queue_size=100)
    p1 = publish_topic(topic, 0, 10, "--domain", "1")
    p2 = publish_topic(topic, 100, 10, "--domain", "2")
    for i in range(10):
        check(one.recv(30), i)
        check(two.recv(30), 100 + i)
    finish(p1)
    finish(p2)
    # Both publishers have exited: a message that crossed domains would be queued by now.
    assert one.recv(0) is None and two.recv(0) is None


def test_process_scope_stays_in_its_process() -> None:
    topic = unique_topic("scope")
    sub = nerve.Subscriber(topic, queue_size=100)
    finish(publish_topic(topic, 0, 5, "--scope", "process", "--no-wait"))
    assert sub.recv(0) is None  # the publisher has exited: anything it sent here is queued
    local = nerve.Subscriber(topic, scope="process")
    with pytest.raises(ValueError, match="unknown scope"):
        nerve.Publisher(topic, scope="galaxy")
    nerve.Publisher(topic, scope="process").send(b"here")
    assert local.recv(1)["value"] == b"here"


def test_a_subscriber_in_the_same_process_receives_the_very_object() -> None:
    topic = unique_topic("object")
    sub = nerve.Subscriber(topic)
    pub = nerve.Publisher(topic)
    frame = np.zeros((480, 640, 3), dtype=np.uint8)
    pub.send(frame, {"seq": 1})
    m = sub.recv(1)
    assert m["value"] is frame
    assert m["id"] == topic
    assert m["metadata"]["seq"] == 1 and m["metadata"]["timestamp"] > 0
    assert sub.recv(0) is None, "recv(0) never blocks"


def test_numpy_scalars_in_metadata_arrive_as_python_values() -> None:
    """`array.sum()` and `array[0]` hand out numpy scalars: metadata takes them as the plain
    values they hold, and still refuses what is no plain value, naming its key."""
    topic = unique_topic("numpy-metadata")
    sub = nerve.Subscriber(topic, scope="process")
    pub = nerve.Publisher(topic, scope="process")
    values = np.arange(4, dtype=np.int32)
    sent = {"sum": values.sum(), "first": values[0], "half": np.float32(0.5), "ok": np.bool_(True)}
    pub.send(b"x", {**sent, "nested": {"list": [np.uint8(7), np.int16(-2)]}})
    metadata = sub.recv(1)["metadata"]
    del metadata["timestamp"]
    assert metadata == {"sum": 6, "first": 0, "half": 0.5, "ok": True, "nested": {"list": [7, -2]}}
    assert [type(metadata[k]) for k in ("sum", "first", "half", "ok")] == [int, int, float, bool]
    with pytest.raises(TypeError, match="metadata `shape`: ndarray is not a bool, int, float"):
        pub.send(b"x", {"shape": np.array([480, 640])})


def reader_process(tmp_path: Path, topic: str, shown: str) -> tuple[subprocess.Popen[str], nerve.Publisher]:
    """A process that prints `shown` (an expression of its first message `m`) of `topic`, and a
    publisher of this process once it reaches that process and one subscriber here."""
    script = tmp_path / "reader.py"
    script.write_text(f"import sys, nerve\ns = nerve.Subscriber(sys.argv[1])\nm = s.recv(30)\nprint({shown})\n")
    reader = subprocess.Popen([sys.executable, str(script), topic], stdout=subprocess.PIPE, text=True)
    pub = nerve.Publisher(topic)
    assert pub.wait_for_subscribers(2, timeout=30), "the reader process never linked"
    return reader, pub


def test_loaned_messages_reach_other_processes_and_this_one(tmp_path: Path) -> None:
    topic = unique_topic("loan")
    local = nerve.Subscriber(topic)
    reader, pub = reader_process(tmp_path, topic, "bytes(m['value'].to_numpy(zero_copy_only=True)).decode()")
    with pub.loan(5) as sample:
        memoryview(sample)[:] = b"hello"
    assert reader.communicate(timeout=30)[0].strip() == "hello"
    assert local.recv(1)["value"].to_pylist() == list(b"hello")


def test_what_cannot_reach_other_processes_reaches_nobody(tmp_path: Path) -> None:
    topic = unique_topic("refused")
    local = nerve.Subscriber(topic)
    reader, pub = reader_process(tmp_path, topic, "m['value'].to_pylist()")
    with pytest.raises(TypeError, match=f"^topic `{topic}`: a str is not sent as its characters"):
        pub.send("hello")
    # Refused whole: this process's subscriber did not get it either.
    assert local.recv(0) is None
    pub.send(["hello"])
    assert reader.communicate(timeout=30)[0].strip() == "['hello']"
    assert local.recv(1)["value"] == ["hello"]


def test_serial_callbacks_run_one_at_a_time_in_order() -> None:
    topic = unique_topic("serial")
    calls: list[int] = []
    running = [0, 0]  # now, most at once
    lock = threading.Lock()

    def on_message(m: nerve.Message) -> None:
        with lock:
            running[0] += 1
            running[1] = max(running)
        time.sleep(0.01)
        calls.append(m["value"])
        with lock:
            running[0] -= 1

    with nerve.Subscriber(topic, queue_size=100, callback=on_message):
        pub = nerve.Publisher(topic)
        for i in range(20):
            pub.send(i)
        wait_for(lambda: len(calls) == 20, what="every callback")
    assert calls == list(range(20))
    assert running[1] == 1


def test_concurrent_callbacks_of_one_subscriber_run_in_parallel() -> None:
    topic = unique_topic("concurrent")
    # Every call waits until all four are inside (it releases the GIL, as numpy or I/O would):
    # calls one after the other would never all be in at once, and the barrier breaks.
    inside = threading.Barrier(4, timeout=20)
    met: list[bool] = []

    def meet(_m: nerve.Message) -> None:
        try:
            inside.wait()
            met.append(True)
        except threading.BrokenBarrierError:
            met.append(False)

    with nerve.Subscriber(topic, queue_size=100, callback=meet, mode="concurrent") as sub:
        pub = nerve.Publisher(topic)
        for i in range(4):
            pub.send(i)
        wait_for(lambda: len(met) == 4, timeout=60, what="every callback")
        with pytest.raises(RuntimeError, match="callback"):
            sub.recv(0)
    assert met == [True] * 4, "the 4 calls were not all running at once"


EXIT_WHILE_CALLED = """
import sys, threading, nerve
topic = sys.argv[1]
called = threading.Event()
def slow(message):
    called.set()
    sum(range(20000))  # work, holding the GIL, while the program ends
sub = nerve.Subscriber(topic, queue_size=1000, callback=slow, mode=sys.argv[2])
publisher = nerve.Publisher(topic, scope="process")
def flood():
    while True:
        publisher.send([1, 2, 3])
threading.Thread(target=flood, daemon=True).start()
called.wait()
# The program ends here, with the callback threads busy and messages still coming.
"""


@pytest.mark.parametrize("mode", ["serial", "concurrent"])
def test_a_program_ends_cleanly_while_its_callbacks_run(mode: str) -> None:
    # Callbacks run on nerve's threads: they must be stopped before the interpreter goes, or
    # one calling into it then aborts the process. Each run ends mid-flood; all must exit 0.
    for run in range(15):
        done = subprocess.run(
            [sys.executable, "-c", EXIT_WHILE_CALLED, unique_topic(f"exit{run}"), mode],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, f"run {run}: exit {done.returncode}\n{done.stderr}"


def test_bad_names_and_queue_sizes_are_refused_clearly() -> None:
    with pytest.raises(ValueError, match="invalid topic name `a//b`"):
        nerve.Publisher("a//b")
    with pytest.raises(ValueError, match="queue_size"):
        nerve.Subscriber("ok", queue_size=0)
    with pytest.raises(ValueError, match="mode"):
        nerve.Subscriber("ok", mode="parallel")  # type: ignore[arg-type]


def test_pyarrow_values_cross_processes_with_their_type(tmp_path: Path) -> None:
    topic = unique_topic("arrow")
    sub = nerve.Subscriber(topic)
    script = tmp_path / "writer.py"
    script.write_text(
        "import sys, pyarrow as pa, nerve\n"
        "p = nerve.Publisher(sys.argv[1])\n"
        "assert p.wait_for_subscribers(timeout=60)\n"
        "p.send(pa.array(['left', None, 'right']), {'frame': 'base_link'})\n"
    )
    subprocess.run([sys.executable, str(script), topic], check=True, timeout=60)
    m = sub.recv(10)
    assert m["value"].type == pa.string()
    assert m["value"].to_pylist() == ["left", None, "right"]
    assert m["metadata"]["frame"] == "base_link"


def test_two_publisher_processes_feed_one_subscriber() -> None:
    topic = unique_topic("fanin")
    sub = nerve.Subscriber(topic, queue_size=1000)
    procs = [publish_topic(topic, 0, 300), publish_topic(topic, 10_000, 300)]
    got: dict[int, list[int]] = {0: [], 10_000: []}
    for _ in range(600):
        m = sub.recv(30)
        i = m["metadata"]["i"] if m else -1
        check(m, i)
        got[0 if i < 10_000 else 10_000].append(i)
    for p in procs:
        finish(p)
    # Each publisher's messages arrive complete and in its order, interleaved by send time.
    assert got[0] == list(range(300))
    assert got[10_000] == list(range(10_000, 10_300))


def test_publisher_and_subscriber_on_two_hosts(hosts) -> None:
    """Two network namespaces: the messages go through Zenoh, byte for byte and in order."""
    topic = unique_topic("hosts")
    listener = (
        "import sys, zlib, nerve\n"
        "s = nerve.Subscriber(sys.argv[1], queue_size=200)\n"
        "for i in range(100):\n"
        "    m = s.recv(30)\n"
        "    assert m is not None, f'message {i} missing'\n"
        "    v = m['value'].to_numpy(zero_copy_only=True)\n"
        "    assert m['metadata']['i'] == i and zlib.crc32(v.tobytes()) == m['metadata']['crc'], i\n"
        "print('all 100 received')\n"
    )
    sub = hosts.popen(0, [sys.executable, "-c", listener, topic], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pub = hosts.popen(1, [sys.executable, str(NODES / "topic_publisher.py"), topic, "0", "100"], stderr=subprocess.PIPE)
    assert pub.wait(timeout=60) == 0, pub.stderr.read() if pub.stderr else ""
    out, err = sub.communicate(timeout=60)
    assert sub.returncode == 0, err
    assert "all 100 received" in out


DOUBLER = """
import nerve

node = nerve.Node()
for event in node:
    if event["type"] == "INPUT":
        node.send_output("doubled", event["value"].to_numpy() * 2, {"i": event["metadata"]["i"]})
    elif event["type"] == "STOP":
        break
"""


def test_a_dataflow_reads_a_topic_and_publishes_an_output_as_a_topic(dataflows) -> None:
    topic_in, topic_out = unique_topic("df-in"), unique_topic("df-out")
    path = dataflows.write(
        f"""
        share: [{topic_in}, {topic_out}]     # meant for processes outside the run
        nodes:
          - id: doubler
            path: doubler.py
            inputs:
              value: {{source: topic/{topic_in}, queue_size: 100}}
            outputs:
              - id: doubled
                topic: {topic_out}
        """,
        {"doubler.py": DOUBLER},
    )
    results = nerve.Subscriber(topic_out, queue_size=100)
    run = dataflows.start(path)
    try:
        values = nerve.Publisher(topic_in)
        assert values.wait_for_subscribers(1, timeout=30), "the node never subscribed to its input topic"
        wait_for(lambda: results.publisher_count >= 1, what="the node's output topic to link")
        for i in range(20):
            values.send(np.array([i, -i], dtype=np.int64), {"i": i})
        for i in range(20):
            m = results.recv(30)
            assert m is not None, f"result {i} missing"
            assert m["metadata"]["i"] == i
            assert m["value"].to_pylist() == [2 * i, -2 * i]
    finally:
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=60)
    assert run.returncode == 0, out + err


def test_garbage_on_a_publishers_socket_does_not_disturb_it() -> None:
    topic = unique_topic("garbage")
    sub = nerve.Subscriber(topic, queue_size=1000)
    proc = publish_topic(topic, 0, 400, "--rate", "100")
    check(sub.recv(30), 0)
    entry = next(p for p in nerve_topic_dir(topic).iterdir() if p.name.endswith(".pub"))
    address = json.loads(entry.read_text())["socket"]
    for junk in (b"", b"\x00" * 64, b"{not json", b'{"msg":"hello","version":"0.1.0"}', os.urandom(4000)):
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
            s.connect(address)
            if junk:
                s.send(junk)
    for i in range(1, 400):
        check(sub.recv(30), i)
    finish(proc)


def test_a_talker_that_waits_for_the_listener_loses_no_first_message(tmp_path: Path) -> None:
    """The listener runs first; the talker starts, waits for it, and sends exactly one message:
    the listener gets it (without the wait, it is sent before the link exists, to nobody)."""
    topic = unique_topic("first-message")
    listener = nerve.Subscriber(topic)
    talker = tmp_path / "talker.py"
    talker.write_text(
        "import sys, nerve\n"
        "p = nerve.Publisher(sys.argv[1])\n"
        "assert not p.wait_for_subscribers(2, timeout=0.05), 'only one subscriber exists'\n"
        "assert p.wait_for_subscribers(timeout=60), 'the listener never linked'\n"
        "p.send(b'first')\n"
    )
    subprocess.run([sys.executable, str(talker), topic], check=True, timeout=60)
    assert (first := listener.recv(30)) is not None, "the first message was lost"
    assert bytes(first["value"].to_numpy(zero_copy_only=True)) == b"first"
    assert listener.recv(0) is None


def test_wait_for_subscribers_returns_false_when_the_time_runs_out_and_refuses_bad_timeouts() -> None:
    pub = nerve.Publisher(unique_topic("nobody"))
    assert pub.wait_for_subscribers(timeout=0.05) is False
    assert pub.wait_for_subscribers(0, timeout=0) is True
    with pytest.raises(ValueError, match="timeout must be a non-negative number"):
        pub.wait_for_subscribers(timeout=-1)
    assert pub.latched is False


LATCHED_TALKER = """
import sys, nerve
p = nerve.Publisher(sys.argv[1], latched=True)
p.send([1, 2, 3])
p.send([4, 5, 6])  # replaces [1, 2, 3] as the message kept for late subscribers
print("sent", flush=True)
sys.stdin.readline()  # the test's subscribers have their latched message
p.send([7])
print("sent again", flush=True)
sys.stdin.readline()
"""


def test_a_latched_topic_hands_its_last_message_to_each_late_subscriber_only(tmp_path: Path) -> None:
    topic = unique_topic("latched")
    script = tmp_path / "latched_talker.py"
    script.write_text(LATCHED_TALKER)
    talker = subprocess.Popen(
        [sys.executable, str(script), topic], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert talker.stdin and talker.stdout
    try:
        assert talker.stdout.readline().strip() == "sent"
        # Both subscribe after the sends; each gets the last message once, on linking.
        first = nerve.Subscriber(topic)
        assert (m := first.recv(30)) is not None, "a late subscriber got no latched message"
        assert m["value"].to_pylist() == [4, 5, 6]
        second = nerve.Subscriber(topic)
        assert (m := second.recv(30)) is not None
        assert m["value"].to_pylist() == [4, 5, 6]
        talker.stdin.write("go\n")
        talker.stdin.flush()
        assert talker.stdout.readline().strip() == "sent again"
        # The second one joining sent the first nothing again: its next message is the new one.
        assert first.recv(30)["value"].to_pylist() == [7]
        assert second.recv(30)["value"].to_pylist() == [7]
        assert first.recv(0) is None and second.recv(0) is None
    finally:
        talker.stdin.close()
        assert talker.wait(timeout=60) == 0


def test_a_latched_publisher_hands_a_late_subscriber_of_its_process_the_very_object() -> None:
    topic = unique_topic("latched-here")
    pub = nerve.Publisher(topic, scope="process", latched=True)
    assert pub.latched
    grid = np.zeros((4, 4), dtype=np.int8)
    pub.send(grid, {"frame": "map"})
    late = nerve.Subscriber(topic, scope="process")
    m = late.recv(0)
    assert m is not None and m["value"] is grid and m["metadata"]["frame"] == "map"
    assert late.recv(0) is None


def test_a_latched_topic_reaches_a_late_subscriber_on_another_host(hosts, tmp_path: Path) -> None:
    topic = unique_topic("latched-hosts")
    script = tmp_path / "latched_talker.py"
    script.write_text(LATCHED_TALKER)
    listener = (
        "import sys, nerve\n"
        "s = nerve.Subscriber(sys.argv[1])\n"
        "print('latched', s.recv(60)['value'].to_pylist(), flush=True)\n"
        "print('next', s.recv(60)['value'].to_pylist(), flush=True)\n"
    )
    talker = hosts.popen(1, [sys.executable, str(script), topic], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert talker.stdin and talker.stdout
    try:
        assert talker.stdout.readline().strip() == "sent"
        sub = hosts.popen(0, [sys.executable, "-c", listener, topic], stdout=subprocess.PIPE)
        assert sub.stdout
        assert sub.stdout.readline().strip() == "latched [4, 5, 6]"
        talker.stdin.write("go\n")
        talker.stdin.flush()
        assert sub.stdout.readline().strip() == "next [7]", "the next message, not the latched one again"
        assert sub.wait(timeout=60) == 0
    finally:
        talker.stdin.close()
        assert talker.wait(timeout=60) == 0

"""The Python node API against real dataflows."""

import json
import os
import socket
import struct
import subprocess
import sys
from pathlib import Path

from conftest import log_lines, nerve_cmd, runtime_dir, wait_for

ALL_TYPES_SENDER = """
import numpy as np
import pyarrow as pa
from nerve import Node
node = Node()
node.send_output("out", b"raw bytes")
node.send_output("out", bytearray(b"abc"))
node.send_output("out", np.arange(12, dtype=np.float32).reshape(3, 4))
node.send_output("out", np.arange(10, dtype=np.int64)[::2])
node.send_output("out", np.array([True, False, True]))
node.send_output("out", pa.array(["a", None, "ccc"]))
node.send_output("out", pa.array([[1, 2], [], None, [3]]))
node.send_output("out", pa.array([{"x": 1.5, "tag": "a"}, {"x": None, "tag": "b"}]))
node.send_output("out", pa.array(range(100), type=pa.uint16()).slice(10, 5))
node.send_output("out", [1, 2, 3], {"list": [1, "two"], "nested": {"ok": True}, "f": 0.5})
with node.send_output_raw("out", 6, {"raw": 1}) as sample:
    memoryview(sample)[:] = b"loaned"
# dora-rs's manual form.
sample = node.send_output_raw("out", 4, {"raw": 2})
sample.as_memoryview()[:] = b"dora"
sample.send()
try:
    node.send_output("nope", b"x")
except KeyError as e:
    print("KeyError:", e)
"""

ALL_TYPES_RECEIVER = """
import json
from nerve import Node
node = Node()
for event in node:
    if event["type"] == "INPUT":
        meta = {k: v for k, v in event["metadata"].items() if k != "timestamp"}
        assert isinstance(event["metadata"]["timestamp"], int)
        print(json.dumps([str(event["value"].type), event["value"].to_pylist(), meta]))
"""


def sender_to_receiver(dataflows, sender: str, receiver: str):
    """Runs a dataflow of node script `sender` (output `out`) feeding `receiver` (input `out`)
    to its end; the run, which must have succeeded."""
    path = dataflows.write(
        """
        nodes:
          - id: sender
            path: sender.py
            outputs: [out]
          - id: receiver
            path: receiver.py
            inputs: {out: sender/out}
        """,
        {"sender.py": sender, "receiver.py": receiver},
    )
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    return run


def test_send_output_accepts_bytes_numpy_and_any_arrow_array(dataflows):
    run = sender_to_receiver(dataflows, ALL_TYPES_SENDER, ALL_TYPES_RECEIVER)
    got = [json.loads(line) for line in run.node_lines("receiver")]
    assert got == [
        ["uint8", list(b"raw bytes"), {}],
        ["uint8", list(b"abc"), {}],
        # Two dimensions: one fixed-shape tensor (test_n_d_arrays_keep_their_shape has more).
        [
            "extension<arrow.fixed_shape_tensor[value_type=float, shape=[3,4]]>",
            [[float(i) for i in range(12)]],
            {},
        ],
        ["int64", [0, 2, 4, 6, 8], {}],
        ["bool", [True, False, True], {}],
        ["string", ["a", None, "ccc"], {}],
        ["list<item: int64>", [[1, 2], [], None, [3]], {}],
        ["struct<x: double, tag: string>", [{"x": 1.5, "tag": "a"}, {"x": None, "tag": "b"}], {}],
        ["uint16", [10, 11, 12, 13, 14], {}],
        ["int64", [1, 2, 3], {"f": 0.5, "list": [1, "two"], "nested": {"ok": True}}],
        ["uint8", list(b"loaned"), {"raw": 1}],
        ["uint8", list(b"dora"), {"raw": 2}],
    ]
    [error] = run.node_lines("sender")
    assert "KeyError:" in error and "no output `nope`" in error and "declared outputs: out" in error


TENSOR_SENDER = """
import numpy as np
import pyarrow as pa
from nerve import Node
node = Node()
node.send_output("out", (np.arange(480 * 640 * 3) % 251).astype(np.uint8).reshape(480, 640, 3))
node.send_output("out", np.arange(6, dtype=np.float32).reshape(2, 3).T)  # strided: sent as it reads
node.send_output("out", pa.FixedShapeTensorArray.from_numpy_ndarray(np.ones((2, 2, 2))))  # two of 2 by 2
node.send_output("out", np.arange(4, dtype=np.int16))  # one dimension: a flat array
node.send_output("out", [])
node.send_output("typed", [])
"""

TENSOR_RECEIVER = """
import json
import numpy as np
import pyarrow as pa
from nerve import Node
node = Node()
for event in node:
    if event["type"] != "INPUT":
        continue
    value = event["value"]
    if isinstance(value.type, pa.FixedShapeTensorType):
        tensors = value.to_numpy_ndarray()
        # A view of the values where they arrived, in the sender's shared memory: no copy.
        view = tensors.ctypes.data == value.storage.values.buffers()[1].address
        print(json.dumps([event["id"], str(tensors.dtype), tensors.shape, view, tensors.ravel().tolist()[:8]]))
    else:
        print(json.dumps([event["id"], str(value.type), value.to_pylist()]))
"""


def test_n_d_arrays_keep_their_shape_and_empty_lists_their_declared_type(dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: sender
            path: sender.py
            outputs: [out, typed]
            output_types: {typed: std/core/v1/Int64}
          - id: receiver
            path: receiver.py
            inputs: {out: sender/out, typed: sender/typed}
        """,
        {"sender.py": TENSOR_SENDER, "receiver.py": TENSOR_RECEIVER},
    )
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    got = [json.loads(line) for line in run.node_lines("receiver")]
    assert got == [
        ["out", "uint8", [1, 480, 640, 3], True, list(range(8))],
        ["out", "float32", [1, 3, 2], True, [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]],
        ["out", "float64", [2, 2, 2], True, [1.0] * 8],
        ["out", "int16", [0, 1, 2, 3]],
        # Without a declared type, pyarrow's own choice for an empty list.
        ["out", "null", []],
        ["typed", "int64", []],
    ]


LOGGER = """
import logging
from nerve import Node
node = Node()
node.log("info", "hello from log")
node.logger.warning("careful: %d left", 3)
node.log(logging.ERROR, "an error")
node.log("debug", "not shown at the default level")
try:
    node.log("loud", "x")
except ValueError as e:
    print("refused:", e, flush=True)
try:
    node.create_timer(0, lambda: None)
except ValueError as e:
    print("refused:", e, flush=True)
"""


def test_a_node_logs_at_levels_into_its_log(dataflows):
    path = dataflows.write("nodes:\n  - id: talker\n    path: talker.py\n", {"talker.py": LOGGER})
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    logged = run.node_lines("talker")
    assert "INFO hello from log" in logged, run.output
    assert "WARN careful: 3 left" in logged and "ERROR an error" in logged, run.output
    log = log_lines(path.parent / "out" / run.run_id() / "talker.log")
    # Records come in their order; printed lines (another pipe) may fall anywhere among them.
    records = [line for line in log if line.split()[0] in ("DEBUG", "INFO", "WARN", "ERROR")]
    assert records == ["INFO hello from log", "WARN careful: 3 left", "ERROR an error"], log
    assert "not shown" not in run.stdout, run.output
    refused = [line for line in run.node_lines("talker") if line.startswith("refused:")]
    assert refused == [
        "refused: unknown log level `loud`: one of debug, info, warning, error, critical (or a logging level number)",
        "refused: period must be a positive number of seconds, got 0",
    ], run.output


NUMBER_SEQUENCES_SENDER = """
import enum
import json
import numpy as np
import pyarrow as pa
from nerve import Node

class Gear(enum.IntEnum):
    LOW = 1

node = Node()
values = [
    [1, 2, -(2**63)], [0.5, -0.0, float("nan")], [1, 0.5], [0.5, 2**53], (3, 4), (0.25,),
    [np.float64(2.5), 1], [True, False], [1, None], [np.float32(1.5)], [Gear.LOW], [2**63], [0.5, 2**53 + 1], [1, "a"],
]
for v in values:
    try:
        a = pa.array(v)
        expected = [str(a.type), a.to_pylist()]
    except Exception as e:
        expected = [type(e).__name__]
    try:
        node.send_output("out", v)
    except Exception as e:
        print(json.dumps(["refused", expected, [type(e).__name__]]), flush=True)
    else:
        print(json.dumps(["sent", expected]), flush=True)
"""

NUMBER_SEQUENCES_RECEIVER = """
import json
from nerve import Node
node = Node()
for event in node:
    if event["type"] == "INPUT":
        print(json.dumps([str(event["value"].type), event["value"].to_pylist()]), flush=True)
"""


def test_lists_and_tuples_of_numbers_arrive_as_pyarrow_would_make_them(dataflows):
    # Short lists of numbers are built into arrays by nerve, not pyarrow: the result must be
    # what pyarrow.array gives, and what pyarrow refuses must still be refused.
    run = sender_to_receiver(dataflows, NUMBER_SEQUENCES_SENDER, NUMBER_SEQUENCES_RECEIVER)
    sent = [json.loads(line) for line in run.node_lines("sender")]
    got = [json.loads(line.replace("NaN", '"nan"')) for line in run.node_lines("receiver")]
    expected = [json.loads(json.dumps(s[1]).replace("NaN", '"nan"')) for s in sent if s[0] == "sent"]
    assert got == expected
    assert got[:7] == [
        ["int64", [1, 2, -(2**63)]],
        ["double", [0.5, -0.0, "nan"]],
        ["double", [1.0, 0.5]],
        ["double", [0.5, float(2**53)]],
        ["int64", [3, 4]],
        ["double", [0.25]],
        ["double", [2.5, 1.0]],
    ]
    refused = [s for s in sent if s[0] == "refused"]
    assert refused == [
        ["refused", ["OverflowError"], ["OverflowError"]],
        ["refused", ["ArrowInvalid"], ["ArrowInvalid"]],
        ["refused", ["ArrowInvalid"], ["ArrowInvalid"]],
    ], refused
    assert len(got) == 11


NOT_ARRAYS_SENDER = """
import json
from nerve import Node
node = Node()
for v in ("hello", {"a": 1}, 3.5, None, True, [1, [2]]):
    try:
        node.send_output("out", v)
    except Exception as e:
        print(json.dumps([type(e).__name__, str(e)]), flush=True)
node.send_output("out", ["hello"])
node.send_output("out", [{"a": 1}])
"""


def test_send_output_refuses_what_is_not_an_array_and_names_the_output(dataflows):
    # pyarrow.array would make a str's characters or a dict's keys into an array: refused, as
    # a single number is, with what to send instead; nothing of a refused message arrives.
    run = sender_to_receiver(dataflows, NOT_ARRAYS_SENDER, NUMBER_SEQUENCES_RECEIVER)
    refused = [json.loads(line) for line in run.node_lines("sender")]
    assert refused == [
        [
            "TypeError",
            "output `out`: a str is not sent as its characters: send [text] (a string array of one) or text.encode()",
        ],
        ["TypeError", "output `out`: a dict is not sent as its keys: send [mapping] (a struct array of one row)"],
        ["TypeError", "output `out`: a single float is not an array: send [value]"],
        ["TypeError", "output `out`: None is not an array: send [value]"],
        ["TypeError", "output `out`: a single bool is not an array: send [value]"],
        ["ArrowInvalid", "output `out`: cannot mix list and non-list, non-null values"],
    ]
    got = [json.loads(line) for line in run.node_lines("receiver")]
    assert got == [["string", ["hello"]], ["struct<a: int64>", [{"a": 1}]]]


def test_queue_size_one_always_hands_over_the_newest(dataflows):
    # Ten rounds: the producer sends a burst of 50 while the reader takes nothing, then the
    # reader takes one message, which must be the last of the burst.
    sync = dataflows.tmp_path
    path = dataflows.write(
        """
        nodes:
          - id: burst
            path: burst.py
            outputs: [count]
          - id: slow
            path: slow.py
            inputs:
              count: {source: burst/count, queue_size: 1, queue_policy: drop_oldest}
        """,
        {
            "sync.py": f"""
            import pathlib, time

            def wait_for(name):
                path = pathlib.Path({str(sync)!r}) / name
                deadline = time.monotonic() + 60
                while not path.exists():
                    assert time.monotonic() < deadline, f"no {{name}}"
                    time.sleep(0.005)

            def mark(name):
                (pathlib.Path({str(sync)!r}) / name).touch()
            """,
            "burst.py": """
            import pyarrow as pa
            from nerve import Node
            from sync import mark, wait_for
            node = Node()
            for k in range(10):
                for n in range(50 * k, 50 * k + 50):
                    node.send_output("count", pa.array([n], type=pa.uint64()), {"n": n})
                mark(f"sent-{k}")
                wait_for(f"read-{k}")
            """,
            "slow.py": """
            from nerve import Node
            from sync import mark, wait_for
            node = Node()
            for k in range(10):
                wait_for(f"sent-{k}")
                event = node.next(timeout=5)
                n = event["metadata"]["n"]
                assert n == 50 * k + 49, f"message {n} after a burst that ended with {50 * k + 49}"
                mark(f"read-{k}")
            print("newest every time")
            """,
        },
    )
    run = dataflows.run(path)
    assert "[slow] newest every time" in run.stdout, run.output


def test_descriptor_config_and_iteration_api(dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: src
            path: src.py
            args: --flag value
            env: {MODE: "1"}
            inputs: {tick: dora/timer/millis/10}
            outputs: [out]
          - id: dst
            path: dst.py
            inputs: {out: src/out}
        """,
        {
            "src.py": """
            import sys
            from nerve import Node
            node = Node()
            assert sys.argv[1:] == ["--flag", "value"], sys.argv
            assert node.id == "src"
            assert node.node_config()["env"] == {"MODE": "1"}
            ids = [n["id"] for n in node.dataflow_descriptor()["nodes"]]
            assert ids == ["src", "dst"], ids
            sent = 0
            while sent < 5:
                event = node.next()
                if event["type"] == "INPUT":
                    assert event["id"] == "tick" and len(event["value"]) == 0
                    node.send_output("out", bytes([sent]))
                    sent += 1
            """,
            "dst.py": """
            from nerve import Node
            node = Node()
            seen = []
            while len(seen) < 5:
                event = node.next(timeout=10)
                assert event is not None, "timed out"
                if event["type"] == "INPUT":
                    seen.append(event["value"].to_pylist()[0])
            closed = node.next(timeout=10)
            assert closed["type"] == "INPUT_CLOSED" and closed["id"] == "out", closed
            assert node.next(timeout=1) is None  # every input closed: the stream ended
            assert node.drain() == [] and node.try_recv() is None
            print(seen)
            """,
        },
    )
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    assert run.node_lines("dst") == ["[0, 1, 2, 3, 4]"]


def test_a_look_from_another_thread_leaves_the_waiting_thread_its_message(dataflows):
    """One thread waits in `next` while another looks with `try_recv`: the looks find nothing
    and return, and every message reaches a reader once, in order."""
    looked = dataflows.tmp_path / "looked"
    path = dataflows.write(
        """
        nodes:
          - id: src
            path: src.py
            outputs: [out]
          - id: dst
            path: dst.py
            inputs: {out: src/out}
        """,
        {
            "src.py": f"""
            import pathlib, time
            from nerve import Node
            node = Node()
            while not pathlib.Path({str(looked)!r}).exists():
                time.sleep(0.01)
            for i in range(3):
                node.send_output("out", [i])
            """,
            "dst.py": f"""
            import pathlib, threading, time
            from nerve import Node
            node = Node()
            got = []
            waiter = threading.Thread(target=lambda: got.append(node.next(timeout=20)))
            waiter.start()
            looks = []
            end = time.monotonic() + 0.5
            while time.monotonic() < end:
                looks.append(node.try_recv())
            pathlib.Path({str(looked)!r}).touch()
            waiter.join()
            assert looks and all(look is None for look in looks), looks
            got += [node.next(timeout=20) for _ in range(2)]
            print([(e["type"], e["id"], e["value"].to_pylist()) for e in got])
            """,
        },
    )
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    assert run.node_lines("dst") == ["[('INPUT', 'out', [0]), ('INPUT', 'out', [1]), ('INPUT', 'out', [2])]"]


def test_dynamic_node_joins_a_running_dataflow(dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: ticker
            path: ticker.py
            inputs: {tick: timer/millis/10}
            outputs: [count]
          - id: by-hand
            path: dynamic
            inputs: {count: ticker/count}
        """,
        {"ticker.py": (Path(__file__).parent / "nodes" / "ticker.py").read_text()},
    )
    proc = dataflows.start(path)
    try:
        dataflows.wait_accepting(path, proc)
        from nerve import Node

        node = Node("by-hand")
        values = []
        while len(values) < 3:
            event = node.next(timeout=10)
            assert event is not None
            if event["type"] == "INPUT":
                values.append(event["metadata"]["n"])
        assert values == sorted(values)
        del node  # leaving is how a node started by hand finishes
    finally:
        out, err = dataflows.interrupt(proc)
    assert proc.returncode == 0, out + err


VIEWER = """
import os
import sys
from pathlib import Path

import pyarrow as pa
from nerve import Node

visit, leave = sys.argv[1], Path(sys.argv[2])
node = Node("viewer")
counts = []
while len(counts) < 3:
    event = node.next(timeout=20)
    assert event is not None and event["type"] == "INPUT", event
    counts.append(event["metadata"]["n"])
node.send_output("seen", pa.array([int(visit)]))
print("counts", counts, flush=True)
# Stays connected (reading its input) until the test has looked at it.
while not leave.exists():
    assert node.next(timeout=20) is not None
"""

SEEN_SINK = """
from nerve import Node

node = Node()
for event in node:
    if event["type"] == "INPUT" and event["id"] == "seen":
        print("seen", event["value"].to_pylist()[0], flush=True)
    elif event["type"] == "INPUT_CLOSED":
        print("closed", event["id"], flush=True)
"""


def test_dynamic_node_leaves_and_joins_again(dataflows, tmp_path):
    path = dataflows.write(
        """
        nodes:
          - id: ticker
            path: ticker.py
            inputs: {tick: timer/millis/20}
            outputs: [count]
          - id: viewer
            path: dynamic
            inputs: {count: ticker/count}
            outputs: [seen]
          - id: sink
            path: sink.py
            inputs: {seen: viewer/seen, count: ticker/count}
        """,
        {"ticker.py": (Path(__file__).parent / "nodes" / "ticker.py").read_text(), "sink.py": SEEN_SINK},
    )
    proc = dataflows.start(path)
    sink_log = path.parent / "out"

    def sink_lines() -> list[str]:
        logs = list(sink_log.glob("*/sink.log"))
        return log_lines(logs[0]) if logs else []

    def viewer_state() -> str:
        listed = subprocess.run(nerve_cmd("list", "--json"), capture_output=True, text=True, timeout=60, check=True)
        (run,) = [r for r in json.loads(listed.stdout) if r["dataflow"] == str(path)]
        (viewer,) = [n for n in run["nodes"] if n["id"] == "viewer"]
        return viewer["state"]

    try:
        wait_for(lambda: sink_log.exists(), what="run folder")
        viewer = tmp_path / "viewer.py"
        viewer.write_text(VIEWER)
        for visit in (1, 2):
            leave = tmp_path / f"leave-{visit}"
            joined = subprocess.Popen(
                [sys.executable, str(viewer), str(visit), str(leave)], stdout=subprocess.PIPE, text=True
            )
            # Its output reaches the sink, on every visit: the input closed at its leave opens again.
            seen = f"seen {visit}"
            wait_for(
                lambda seen=seen, joined=joined: seen in sink_lines() or joined.poll() is not None,
                what=f"the sink to see {seen}",
            )
            assert joined.poll() is None, joined.communicate()
            assert viewer_state() == "running"
            leave.touch()
            out, _ = joined.communicate(timeout=60)
            assert joined.returncode == 0, out
            assert out.startswith("counts "), out
            # Its leave is its finish: its reader is told so, and `nerve list` shows it.
            wait_for(
                lambda visit=visit: sink_lines().count("closed seen") == visit, what=f"the sink to see leave {visit}"
            )
            assert viewer_state() == "finished"
        assert sink_lines() == ["seen 1", "closed seen", "seen 2", "closed seen"]
    finally:
        proc.send_signal(2)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, out + err


def test_runtime_refuses_a_mismatched_node_version(dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: idle
            path: idle.py
          - id: late
            path: dynamic
        """,
        {"idle.py": "from nerve import Node\nnode = Node()\nnode.next()\n"},
    )
    before = set(runtime_dir().glob("*.sock"))
    proc = dataflows.start(path)
    try:
        # This run's socket: it appears when bound, and takes connections once listening.
        wait_for(lambda: set(runtime_dir().glob("*.sock")) - before, what="the run's socket")
        (sock_path,) = set(runtime_dir().glob("*.sock")) - before

        conn: list[socket.socket] = []

        def listening() -> bool:
            s = socket.socket(socket.AF_UNIX)
            try:
                s.connect(str(sock_path))
            except ConnectionRefusedError:
                s.close()
                return False
            conn.append(s)
            return True

        wait_for(listening, what="the run to listen")
        with conn[0] as s:
            body = json.dumps({"type": "register", "node_id": "late", "nerve_version": "9.9.0", "pid": 1}).encode()
            s.sendall(struct.pack("<I", len(body)) + body)
            (n,) = struct.unpack("<I", s.recv(4))
            reply = json.loads(s.recv(n))
        assert reply["type"] == "refused", reply
        assert "9.9.0" in reply["reason"] and "pip install nerve==" in reply["reason"], reply
    finally:
        proc.send_signal(2)
        proc.communicate(timeout=30)


def test_node_outside_nerve_gets_a_clear_error():
    import nerve
    import pytest

    env_backup = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("NERVE_")}
    try:
        with pytest.raises(nerve.ConnectError, match="nerve run"):
            nerve.Node()
        with pytest.raises(nerve.ConnectError, match="no running dataflow accepts node `ghost`"):
            nerve.Node("ghost")
    finally:
        os.environ.update(env_backup)


def test_a_message_over_the_limit_is_refused_and_the_run_goes_on(dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: sender
            path: sender.py
            outputs: [out]
          - id: receiver
            path: receiver.py
            inputs: {out: sender/out}
        """,
        {
            "sender.py": """
                import numpy as np
                from nerve import Node

                node = Node()
                try:
                    node.send_output("out", np.zeros(4096, dtype=np.uint8))
                except ValueError as e:
                    print(f"refused: {e}", flush=True)
                node.send_output("out", np.arange(8, dtype=np.uint8))
            """,
            "receiver.py": """
                from nerve import Node

                for event in Node():
                    if event["type"] == "INPUT":
                        print(event["value"].to_pylist(), flush=True)
            """,
        },
    )
    run = dataflows.run(path, "--max-message", "1024")
    assert run.returncode == 0, run.output
    [refused] = run.node_lines("sender")
    assert refused.startswith("refused: ") and "exceeds the limit of 1024 bytes" in refused, refused
    # Nothing of the refused message reached the reader; the next one arrived whole.
    assert run.node_lines("receiver") == [str(list(range(8)))]


SELF_FEEDER = """
import pyarrow as pa
from nerve import Node

node = Node()
assert node.is_empty(), "nothing sent yet"
node.send_output("out", pa.array([1]))
node.send_output("out", pa.array([2]))
assert not node.is_empty(), "two messages queued"
events = [node.next(), node.next()]
assert [e["value"][0].as_py() for e in events] == [1, 2]
assert node.is_empty(), "both read"
ages = [node.timestamp() - e["metadata"]["timestamp"] for e in events]
assert all(0 <= age < 60_000_000_000 for age in ages), ages
print("checked", flush=True)
"""


def test_is_empty_says_whether_an_event_waits_and_timestamp_ages_messages(dataflows):
    path = dataflows.write(
        "nodes:\n  - id: loop\n    path: loop.py\n    inputs: {in: loop/out}\n    outputs: [out]\n",
        {"loop.py": SELF_FEEDER},
    )
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    assert run.node_lines("loop") == ["checked"], run.output


WATCHED_PRODUCER = """
import os, time
import pyarrow as pa
from nerve import Node

node = Node()
node.send_output("pose", pa.array([1]))
# Silent until the reader has seen the silence: then one more message, and the end.
while not os.path.exists("silence-seen"):
    time.sleep(0.01)
node.send_output("pose", pa.array([2]))
"""

WATCHED_CONSUMER = """
from nerve import Node

node = Node()
seen = []
for event in node:
    seen.append((event["type"], event.get("id"), event["value"][0].as_py() if event["type"] == "INPUT" else None))
    if event["type"] == "INPUT_CLOSED" and len(seen) == 2:
        open("silence-seen", "w").close()
print(seen, flush=True)
"""


def test_input_timeout_closes_a_silent_input_until_its_next_message(dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: localizer
            path: producer.py
            outputs: [pose]
          - id: controller
            path: consumer.py
            inputs:
              pose: {source: localizer/pose, input_timeout: 0.2}
        """,
        {"producer.py": WATCHED_PRODUCER, "consumer.py": WATCHED_CONSUMER},
    )
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    assert run.node_lines("controller") == [
        str(
            [
                ("INPUT", "pose", 1),
                ("INPUT_CLOSED", "pose", None),
                ("INPUT_RECOVERED", "pose", None),
                ("INPUT", "pose", 2),
                ("INPUT_CLOSED", "pose", None),
            ]
        )
    ], run.output

"""dora-rs operators (`operator:`, `operators:`): `Operator` classes run in one process per node,
their outputs addressed `node/output` and `node/operator/output` as in dora-rs."""

import subprocess

from conftest import nerve_cmd

SOURCE = """
import pyarrow as pa
from nerve import Node

node = Node()
for i in range(1, 6):
    node.send_output("value", pa.array([i]))
"""

DOUBLE = """
import os
from nerve import DoraStatus


class Operator:
    def __init__(self):
        self.pid = os.getpid()

    def on_event(self, event, send_output):
        if event["type"] == "INPUT":
            assert event["id"] == "number", event["id"]
            send_output("doubled", [event["value"][0].as_py() * 2], {"pid": self.pid})
        return DoraStatus.CONTINUE
"""

FIRST_THREE = """
import os
from nerve import DoraStatus


class Operator:
    seen = 0

    def on_event(self, event, send_output):
        if event["type"] != "INPUT":
            return DoraStatus.CONTINUE
        self.seen += 1
        send_output("kept", event["value"], {"pid": os.getpid()})
        return DoraStatus.STOP if self.seen == 3 else DoraStatus.CONTINUE
"""

OFFSET = """
from nerve import DoraStatus


class Operator:
    def on_event(self, event, send_output):
        if event["type"] == "INPUT":
            send_output("offset", [event["value"][0].as_py() + 100])
        return DoraStatus.CONTINUE
"""

SINK = """
from nerve import Node

got = {}
pids = {}
for event in Node():
    if event["type"] == "INPUT":
        got.setdefault(event["id"], []).append(event["value"][0].as_py())
        if "pid" in event["metadata"]:
            pids[event["id"]] = event["metadata"]["pid"]
for name in sorted(got):
    print(name, got[name])
print("one process" if len(set(pids.values())) == 1 else f"processes {pids}")
"""


def test_operators_run_in_one_process_and_are_read_as_dora_addresses_them(dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: source
            path: source.py
            outputs: [value]

          - id: single
            operator:
              python: offset.py
              inputs: {number: source/value}
              outputs: [offset]

          - id: pair
            operators:
              - id: double
                python: double.py
                inputs: {number: source/value}
                outputs: [doubled]
              - id: first
                python: first_three.py
                inputs: {number: source/value}
                outputs: [kept]

          - id: sink
            path: sink.py
            inputs:
              doubled: pair/double/doubled
              kept: pair/first/kept
              offset: single/offset
        """,
        {
            "source.py": SOURCE,
            "double.py": DOUBLE,
            "first_three.py": FIRST_THREE,
            "offset.py": OFFSET,
            "sink.py": SINK,
        },
    )
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    assert run.node_lines("sink") == [
        "doubled [2, 4, 6, 8, 10]",
        # STOP ended that operator; its sibling went on.
        "kept [1, 2, 3]",
        "offset [101, 102, 103, 104, 105]",
        "one process",
    ]


def test_a_wrong_operator_is_refused_before_the_run(dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: source
            path: source.py
            outputs: [value]
          - id: pair
            path: source.py
            operators:
              - python: double.py
              - id: lib
                shared-library: build/libop.so
        """,
        {"source.py": SOURCE, "double.py": DOUBLE},
    )
    checked = subprocess.run(nerve_cmd("validate", str(path)), capture_output=True, text=True, timeout=60)
    assert checked.returncode != 0
    assert "missing required key `id`: each of a node's `operators` has one" in checked.stderr
    assert "shared-library operators are not supported by nerve yet" in checked.stderr
    assert "a node runs a program (`path:`) or operators, not both" in checked.stderr


PRODUCE = """
import numpy as np
import pyarrow as pa
from nerve import DoraStatus

KINDS = [
    lambda: pa.array([1, 2], type=pa.int64()),
    lambda: b"ab",
    lambda: [1.5, 2.5],
    lambda: np.array([7, 8], dtype=np.float32),
    lambda: np.arange(6, dtype=np.uint8).reshape(2, 3),
]


class Operator:
    sent = 0

    def on_event(self, event, send_output):
        if event["type"] != "INPUT":
            return DoraStatus.CONTINUE
        # Kept alive, so that no other object takes its id while the reader looks.
        self.last = KINDS[self.sent]()
        send_output("out", self.last, {"id": id(self.last)})
        self.sent += 1
        return DoraStatus.STOP if self.sent == len(KINDS) else DoraStatus.CONTINUE
"""

CONSUME = """
from nerve import DoraStatus


class Operator:
    def on_event(self, event, send_output):
        if event["type"] == "INPUT":
            value = event["value"]
            same = "same object" if id(value) == event["metadata"]["id"] else "converted"
            assert event["metadata"]["timestamp"] > 0
            print("got", event["id"], value.type, value.to_pylist(), same)
        elif event["type"] == "INPUT_CLOSED":
            print("closed", event["id"])
        return DoraStatus.CONTINUE
"""

REMOTE = """
from nerve import Node

for event in Node():
    if event["type"] == "INPUT":
        print("got", event["id"], event["value"].type, event["value"].to_pylist())
"""


def test_operators_of_one_node_hand_messages_over_in_process(dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: source
            path: source.py
            outputs: [value]
          - id: chain
            operators:
              - id: produce
                python: produce.py
                inputs: {tick: source/value}
                outputs: [out]
              - id: consume
                python: consume.py
                inputs: {data: chain/produce/out}
          - id: remote
            path: remote.py
            inputs: {data: chain/produce/out}
        """,
        {"source.py": SOURCE, "produce.py": PRODUCE, "consume.py": CONSUME, "remote.py": REMOTE},
    )
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    local = run.node_lines("chain")
    # Each message once (not a second time through shared memory), the pyarrow array itself
    # when one was sent, and the input closed as its operator stopped.
    assert len(local) == 6, local
    assert local[0].endswith(" same object"), local
    assert all(line.endswith(" converted") for line in local[1:5]), local
    assert local[5] == "closed data"
    # What the node's own operator got is what a reader in another process got.
    received = [line.removesuffix(" same object").removesuffix(" converted") for line in local[:5]]
    assert received == run.node_lines("remote")

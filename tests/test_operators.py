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

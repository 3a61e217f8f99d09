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
    assert "shared library not found:" in checked.stderr and "df/build/libop.so" in checked.stderr
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


COUNTER_C = r"""
#include <operator_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

DoraInitResult_t dora_init_operator(void) {
    int *count = calloc(1, sizeof(int));
    DoraInitResult_t result = {.operator_context = count};
    return result;
}

DoraResult_t dora_drop_operator(void *context) {
    printf("dropped after %d\n", *(int *)context);
    free(context);
    DoraResult_t result = {0};
    return result;
}

OnEventResult_t dora_on_event(RawEvent_t *event, const SendOutput_t *send_output, void *context) {
    OnEventResult_t result = {.status = DORA_STATUS_CONTINUE};
    int *count = context;
    if (event->input != NULL) {
        char *id = dora_read_input_id(event->input);
        Vec_uint8_t data = dora_read_data(event->input);
        if (data.ptr == NULL) {
            printf("%s: not bytes\n", id);
        } else {
            *count += 1;
            char out[64];
            int len = snprintf(out, sizeof out, "%d:%.*s", *count, (int)data.len, (const char *)data.ptr);
            result.result = dora_send_operator_output(send_output, "counter", (const uint8_t *)out, (size_t)len);
            if (strcmp(id, "fail") == 0)
                result.result = dora_send_operator_output(send_output, "undeclared", NULL, 0);
        }
        dora_free_data(data);
        dora_free_input_id(id);
    } else if (event->input_closed.ptr != NULL) {
        printf("closed %.*s\n", (int)event->input_closed.len, (const char *)event->input_closed.ptr);
    } else if (event->stop) {
        printf("stop\n");
    }
    return result;
}
"""

BYTES_SOURCE = """
import pyarrow as pa
from nerve import Node

node = Node()
for text in [b"a", b"b", b"c"]:
    node.send_output("message", text)
node.send_output("numbers", pa.array([1, 2]))
"""

ECHO = """
from nerve import DoraStatus


class Operator:
    def on_event(self, event, send_output):
        if event["type"] == "INPUT":
            print("python got", bytes(event["value"].to_numpy()).decode())
        return DoraStatus.CONTINUE
"""

BYTES_SINK = """
from nerve import Node

for event in Node():
    if event["type"] == "INPUT":
        print(bytes(event["value"].to_numpy()).decode())
"""

C_OPERATOR_NODE = """
          - id: runtime-node
            operators:
              - id: c_op
                shared-library: build/counter
                build: >-
                  mkdir -p build && cc -shared -fPIC -Wall -Werror counter.c -o build/libcounter.so
                  $(PKG_CONFIG_PATH="$(nerve --lib-dir)/pkgconfig" pkg-config --cflags --libs nerve)
                inputs: {INPUTS}
                outputs: [counter]
"""


def test_a_c_operator_runs_in_the_node_process_beside_a_python_one(dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: source
            path: source.py
            outputs: [message, numbers]
        """
        + C_OPERATOR_NODE.replace("{INPUTS}", "{message: source/message, numbers: source/numbers}")
        + """
              - id: py_op
                python: echo.py
                inputs: {counter: runtime-node/c_op/counter}
          - id: sink
            path: sink.py
            inputs: {counter: runtime-node/c_op/counter}
        """,
        {"source.py": BYTES_SOURCE, "echo.py": ECHO, "sink.py": BYTES_SINK, "counter.c": COUNTER_C},
    )
    run = dataflows.run(path, "--build")
    assert run.returncode == 0, run.output
    lines = run.node_lines("runtime-node")
    # The C operator's output reached its Python sibling inside the process, in order.
    assert [line for line in lines if line.startswith("python got")] == [
        "python got 1:a",
        "python got 2:b",
        "python got 3:c",
    ], lines
    assert "numbers: not bytes" in lines, lines
    assert {"closed message", "closed numbers"} <= set(lines), lines
    assert lines[-1] == "dropped after 3", lines
    assert run.node_lines("sink") == ["1:a", "2:b", "3:c"]


def test_a_c_operators_error_ends_its_node_with_the_text(dataflows):
    source = BYTES_SOURCE.replace('node.send_output("numbers", pa.array([1, 2]))', "")
    path = dataflows.write(
        """
        nodes:
          - id: source
            path: source.py
            outputs: [message]
        """
        + C_OPERATOR_NODE.replace("{INPUTS}", "{fail: source/message}"),
        {"source.py": source, "counter.c": COUNTER_C},
    )
    run = dataflows.run(path, "--build")
    assert run.returncode != 0
    assert "operator `c_op`" in run.output and "dora_on_event failed" in run.output, run.output
    assert "undeclared" in run.output, run.output


def test_an_on_event_returning_no_status_ends_its_node_saying_so(dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: source
            path: source.py
            outputs: [value]
          - id: single
            operator:
              python: careless.py
              inputs: {number: source/value}
        """,
        {
            "source.py": SOURCE,
            "careless.py": """
                class Operator:
                    def on_event(self, event, send_output):
                        return "ok"
            """,
        },
    )
    run = dataflows.run(path)
    assert run.returncode != 0
    assert "on_event returned 'ok', not a DoraStatus (CONTINUE 0, STOP 1 or STOP_ALL 2)" in run.output, run.output

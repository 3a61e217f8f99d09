"""`nerve node add|remove|connect|disconnect`: changing a running graph as dora-rs's
dynamic-add-remove example does, with the running nodes untouched and nothing lost on the edges
that stay."""

import subprocess
import time
from pathlib import Path

from conftest import log_lines, nerve_cmd, wait_for

SENDER = """
import pyarrow as pa
from nerve import Node

node = Node()
n = 0
for event in node:
    if event["type"] == "INPUT":
        node.send_output("value", pa.array([n]))
        n += 1
"""

RECEIVER = """
from nerve import Node

for event in Node():
    if event["type"] == "INPUT" and len(event["value"]):
        print("INPUT", event["id"], event["value"][0].as_py(), flush=True)
    elif event["type"] == "INPUT_CLOSED":
        print("INPUT_CLOSED", event["id"], flush=True)
"""

FILTER = """
from nerve import Node

node = Node()
for event in node:
    if event["type"] == "INPUT" and event["value"][0].as_py() % 2 == 0:
        node.send_output("output", event["value"])
"""

DATAFLOW = """
nodes:
  - id: sender
    path: sender.py
    inputs: {tick: dora/timer/millis/20}
    outputs: [value]
  - id: receiver
    path: receiver.py
    # The timer keeps it running while `value` is cut: a node ends once all its inputs closed.
    inputs: {value: sender/value, tick: dora/timer/secs/1}
"""


def nerve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(nerve_cmd(*args), capture_output=True, text=True, timeout=60, check=False)


def received(log: Path) -> list[tuple[str, str]]:
    """What the receiver printed: (input id, value) for inputs, (input id, "closed") for closes."""
    lines = [line.split() for line in log_lines(log)] if log.exists() else []
    return [(w[1], w[2]) if w[0] == "INPUT" else (w[1], "closed") for w in lines if w and w[0].startswith("INPUT")]


def values(log: Path, input_id: str) -> list[int]:
    return [int(v) for i, v in received(log) if i == input_id and v != "closed"]


def test_a_filter_is_added_wired_and_removed_while_the_graph_runs(dataflows):
    path = dataflows.write(
        DATAFLOW,
        {"sender.py": SENDER, "receiver.py": RECEIVER, "filter.py": FILTER},
    )
    (path.parent / "filter-node.yml").write_text("id: filter\npath: filter.py\noutputs:\n  - output\n")
    name = f"edit-{time.monotonic_ns()}"
    proc = dataflows.start(path, "--name", name)
    wait_for(lambda: nerve("list").stdout.count(f"{name} (") == 1 and "running" in nerve("list").stdout)
    run_id = next(line for line in nerve("list").stdout.splitlines() if line.startswith(f"{name} (")).split("(")[1][:36]
    log = path.parent / "out" / run_id / "receiver.log"
    wait_for(lambda: len(values(log, "value")) >= 3, what="the receiver's first values")

    # dora-rs's own spelling of the command, and nerve's.
    added = nerve("node", "add", "--from-yaml", str(path.parent / "filter-node.yml"), "--dataflow", name)
    assert added.returncode == 0 and "node `filter` added, started" in added.stdout, added.stderr
    wait_for(lambda: "filter " in nerve("node", "list").stdout.replace(f"{name}/", ""), what="the filter listed")
    # The dataflow by `-d`, or first as dora-rs's examples write it.
    for args in (("-d", name, "sender/value", "filter/input"), (name, "filter/output", "receiver/filtered")):
        done = nerve("node", "connect", *args)
        assert done.returncode == 0 and f"{args[-2]} -> {args[-1]}" in done.stdout, done.stderr

    wait_for(lambda: len(values(log, "filtered")) >= 5, what="filtered values at the receiver")
    assert all(v % 2 == 0 for v in values(log, "filtered")), received(log)

    # Refusals name the problem, and change nothing.
    for args, why in [
        (("connect", "camera/image", "receiver/x"), "no node `camera` (its nodes: sender, receiver, filter)"),
        (("connect", "sender/nope", "receiver/x"), "node `sender` has no output `nope` (its outputs: value)"),
        (("connect", "sender/value", "receiver/value"), "input `receiver/value` is declared by the dataflow"),
        (("connect", "sender/value", "receiver/filtered"), "input `receiver/filtered` already reads `filter/output`"),
        (("disconnect", "sender/value", "receiver/filtered"), "reads `filter/output`, not `sender/value`"),
        (("remove", "nobody"), "the dataflow has no node `nobody`"),
    ]:
        refused = nerve("node", *args, "-d", name)
        assert refused.returncode == 1 and why in refused.stderr, (args, refused.stderr)
    twice = nerve("node", "add", str(path.parent / "filter-node.yml"), "-d", name)
    assert twice.returncode == 1, twice.stdout
    assert "filter-node.yml:1:5: nodes[filter].id: the dataflow already has a node `filter`" in twice.stderr
    (path.parent / "bad-node.yml").write_text("id: bad\npath: filter.py\ninputs:\n  x: camera/image\n")
    bad = nerve("node", "add", str(path.parent / "bad-node.yml"), "-d", name)
    assert bad.returncode == 1 and "bad-node.yml:4:6" in bad.stderr and "unknown source node `camera`" in bad.stderr

    removed = nerve("node", "remove", name, "filter")
    assert removed.returncode == 0 and "node `filter` removed" in removed.stdout, removed.stderr
    wait_for(lambda: ("filtered", "closed") in received(log), what="the receiver told its filtered input closed")
    closed_at = len(values(log, "value"))
    wait_for(lambda: len(values(log, "value")) >= closed_at + 3, what="values after the filter left")
    listed = nerve("node", "list").stdout
    assert any(line.startswith(f"{name}/filter ") and " removed " in line for line in listed.splitlines()), listed

    # A declared edge is cut, then fed again (through the output's topic).
    cut = nerve("node", "disconnect", "sender/value", "receiver/value", "-d", name)
    assert cut.returncode == 0 and "sender/value -x- receiver/value" in cut.stdout, cut.stderr
    wait_for(lambda: ("value", "closed") in received(log), what="the cut input closed")
    before = values(log, "value")
    again = nerve("node", "connect", "sender/value", "receiver/value", "-d", name)
    assert again.returncode == 0, again.stderr
    wait_for(lambda: len(values(log, "value")) >= len(before) + 3, what="values on the input connected again")

    stopped = nerve("stop", name)
    assert stopped.returncode == 0, stopped.stderr
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, out + err
    # The edge that stayed lost nothing until it was cut: every value, in order.
    assert before == list(range(len(before))), before
    resumed = values(log, "value")[len(before) :]
    assert resumed == sorted(resumed) and resumed[0] > before[-1], resumed


def test_edits_need_a_running_dataflow():
    lone = nerve("node", "connect", "a/x", "b/y", "-d", "no-such-dataflow")
    assert lone.returncode != 0 and "no running dataflow is called `no-such-dataflow`" in lone.stderr
    malformed = nerve("node", "connect", "ax", "b/y")
    assert malformed.returncode != 0 and "`ax` is not `node/port`" in malformed.stderr
    twice = nerve("node", "remove", "one", "filter", "--dataflow", "two")
    assert twice.returncode != 0 and "the dataflow is named twice: `one` and `--dataflow two`" in twice.stderr

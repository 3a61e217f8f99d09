"""A node's log as dora-rs shapes it: ``min_log_level``, rotation, ``send_logs_as``,
``send_stdout_as`` and the ``dora/logs`` input, across real node processes."""

import json
import subprocess

from conftest import nerve_cmd

DATAFLOW = """
nodes:
  - id: sensor
    path: sensor.py
    min_log_level: info
    max_log_size: "40"
    max_rotated_files: 2
    outputs: [reading]
  - id: processor
    path: processor.py
    send_logs_as: log_entries
    send_stdout_as: lines
    inputs:
      reading: sensor/reading
    outputs: [result, log_entries, lines]
  - id: monitor
    path: monitor.py
    inputs:
      logs: processor/log_entries
      warnings: dora/logs/warn
      reading: sensor/reading
  - id: viewer
    path: viewer.py
    inputs:
      all: dora/logs
      lines: processor/lines
      processor: dora/logs/info/processor
"""

SENSOR = """
import logging
import pyarrow as pa
from nerve import Node

node = Node()
for i in range(5):
    print(f"raw {i}")
    logging.debug("dbg %d", i)
    logging.info("reading %d", i)
    if i % 2 == 0:
        node.log_warn(f"hot {i}")
    node.send_output("reading", pa.array([i]))
"""

PROCESSOR = """
import logging
import pyarrow as pa
from nerve import Node

node = Node()
for event in node:
    if event["type"] == "INPUT":
        value = event["value"][0].as_py()
        logging.info("processed %d", value)
        print(f"processor stdout {value}")
        node.send_output("result", pa.array([value]))
"""

# Each reader of logs ends once it has what the writers sent: a lost entry hangs the run,
# which the test's timeout reports.
MONITOR = """
import json
from nerve import Node

node = Node()
got = {"logs": [], "warnings": []}
for event in node:
    if event["type"] == "INPUT" and event["id"] in got:
        got[event["id"]].append(event["value"][0].as_py())
    if len(got["logs"]) == 5 and len(got["warnings"]) == 3:
        break
open("monitor.json", "w").write(json.dumps(got))
"""

VIEWER = """
import json
from nerve import Node

node = Node()
node.log_info("the viewer never reads itself")
got = {"all": [], "lines": [], "processor": []}
def done():
    messages = [json.loads(e)["message"] for e in got["all"]]
    return (
        len(got["lines"]) == 5
        and len(got["processor"]) == 5
        and sum(m.startswith(("reading", "hot", "processed", "processor stdout")) for m in messages) == 18
    )
for event in node:
    if event["type"] == "INPUT":
        got[event["id"]].append(event["value"][0].as_py())
    if done():
        break
open("viewer.json", "w").write(json.dumps(got))
"""


def test_logs_reach_the_nodes_that_read_them_as_dora_routes_them(dataflows):
    path = dataflows.write(
        DATAFLOW,
        {"sensor.py": SENSOR, "processor.py": PROCESSOR, "monitor.py": MONITOR, "viewer.py": VIEWER},
    )
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    folder = path.parent
    monitor = json.loads((folder / "monitor.json").read_text())
    viewer = json.loads((folder / "viewer.json").read_text())

    # send_logs_as: the processor's records as dora's JSON, never its printed lines.
    entries = [json.loads(e) for e in monitor["logs"]]
    assert [e["message"] for e in entries] == [f"processed {i}" for i in range(5)]
    assert {(e["level"], e["node_id"], e["target"]) for e in entries} == {("info", "processor", "root")}
    assert all(e["timestamp"].endswith("Z") and e["dataflow_id"] for e in entries)

    # dora/logs/warn: warnings and up of every node; the sensor's, in order.
    warnings = [json.loads(e) for e in monitor["warnings"]]
    assert [(w["node_id"], w["level"], w["message"]) for w in warnings] == [
        ("sensor", "warn", f"hot {i}") for i in (0, 2, 4)
    ]

    # send_stdout_as: the processor's printed lines, as printed.
    assert viewer["lines"] == [f"processor stdout {i}" for i in range(5)]

    # dora/logs: every node's entries but the reader's own, after each writer's min_log_level.
    every = [json.loads(e) for e in viewer["all"]]
    assert all(e["node_id"] != "viewer" for e in every)
    sensor = [e["message"] for e in every if e["node_id"] == "sensor"]
    assert not [m for m in sensor if m.startswith(("raw", "dbg"))], sensor
    assert [m for m in sensor if m.startswith("reading")] == [f"reading {i}" for i in range(5)]
    printed = [e for e in every if e["node_id"] == "processor" and e["level"] == "stdout"]
    assert [e["message"] for e in printed] == [f"processor stdout {i}" for i in range(5)]
    assert {e["stream"] for e in printed} == {"stdout"}

    # dora/logs/info/processor: that node's records and nothing printed (below info).
    only = [json.loads(e) for e in viewer["processor"]]
    assert {e["node_id"] for e in only} == {"processor"} and {e["level"] for e in only} == {"info"}

    # The sensor's log: its records from info up, no printed line, rotated at 40 bytes into at
    # most two older files.
    log_dir = folder / "out" / run.run_id()
    files = sorted(p.name for p in log_dir.iterdir() if p.name.startswith("sensor.log"))
    assert files == ["sensor.log", "sensor.log.1", "sensor.log.2"], files
    kept = "".join((log_dir / f).read_text() for f in files)
    assert "raw" not in kept and "dbg" not in kept and "WARN hot 4" in kept
    assert "INFO root: reading 4" in run.node_lines("sensor")

    # `nerve logs` reads the rotated files too, the oldest first: the tail of what was logged.
    logged = []
    for i in range(5):
        logged.append(f"INFO root: reading {i}")
        if i % 2 == 0:
            logged.append(f"WARN hot {i}")
    shown = subprocess.run(nerve_cmd("logs", run.run_id(), "sensor"), capture_output=True, text=True, check=True)
    lines = shown.stdout.splitlines()
    assert len(lines) >= 2 and lines == logged[-len(lines) :], shown.stdout
    warned = subprocess.run(
        nerve_cmd("logs", run.run_id(), "sensor", "--level", "warn"), capture_output=True, text=True, check=True
    )
    assert warned.stdout.splitlines() == [line for line in lines if line.startswith("WARN")], warned.stdout

    # `--timestamps` shows when each line was logged, `--since` keeps those from then on.
    def logs(*flags: str) -> list[str]:
        shown = subprocess.run(nerve_cmd("logs", run.run_id(), "sensor", *flags), capture_output=True, text=True)
        assert shown.returncode == 0, shown.stderr
        return shown.stdout.splitlines()

    stamped = logs("--timestamps")
    assert [line.split(" ", 1)[1] for line in stamped] == lines, stamped
    middle = stamped[len(stamped) // 2].split(" ", 1)[0]
    assert logs("--since", middle, "-t") == [line for line in stamped if line.split(" ", 1)[0] >= middle]
    assert logs("--since", "1day") == lines
    bad = subprocess.run(nerve_cmd("logs", run.run_id(), "sensor", "--since", "soon"), capture_output=True, text=True)
    assert bad.returncode != 0 and "neither a duration" in bad.stderr, bad.stderr


def test_log_keys_are_checked_before_the_run(dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: a
            path: a.py
            min_log_level: loud
            max_log_size: 1XB
            max_rotated_files: 0
            send_logs_as: missing
            outputs: [x]
          - id: b
            path: a.py
            inputs:
              logs: dora/logs/info/nobody
              bad: dora/logs/loud
              policy: {source: dora/logs, queue_policy: backpressure}
        """,
        {"a.py": ""},
    )
    result = subprocess.run(nerve_cmd("validate", str(path)), capture_output=True, text=True)
    assert result.returncode != 0
    out = result.stdout + result.stderr
    for expected in [
        "unknown log level `loud`",
        "expected a size like",
        "max_rotated_files must be a positive integer",
        "`missing` is not one of the node's outputs",
        "unknown node `nobody` in a log source",
        "bad log source `dora/logs/loud`: unknown level `loud`",
        "a topic or log input cannot push back",
    ]:
        assert expected in out, out

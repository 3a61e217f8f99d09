"""`module:` nodes: dora-rs's sub-dataflows, as dora's own module example writes them, run as
the plain nodes they expand to."""

import subprocess
import textwrap

from conftest import nerve_cmd

SENDER = """
import pyarrow as pa
from nerve import Node

node = Node()
for i in range(1, 11):
    node.send_output("value", pa.array([i], type=pa.int64()))
"""

DOUBLER = """
import os
import sys

import pyarrow as pa
from nerve import Node

factor = int(sys.argv[sys.argv.index("--factor") + 1])
node = Node()
inputs = sorted(node.node_config()["inputs"])
print(f"factor {factor} env {os.environ['PARAM_FACTOR']} shared {os.environ['SHARED']} inputs {inputs}", flush=True)
for event in node:
    if event["type"] == "INPUT":
        node.send_output("doubled", pa.array([event["value"][0].as_py() * factor], type=pa.int64()))
"""

FILTER = """
import pyarrow as pa
from nerve import Node

node = Node()
for event in node:
    if event["type"] == "INPUT" and event["value"][0].as_py() % 4 == 0:
        node.send_output("filtered", event["value"])
"""

RECEIVER = """
from nerve import Node

got = [event["value"][0].as_py() for event in Node() if event["type"] == "INPUT"]
print("received", got)
"""

MODULE = """
module:
  name: transform_pipeline
  inputs: [raw_data]
  inputs_optional: [config]
  outputs: [filtered]

nodes:
  - id: doubler
    path: doubler.py
    args: --factor $PARAM_FACTOR
    inputs:
      data: _mod/raw_data
      config: _mod/config
    outputs:
      - doubled

  - id: filter
    path: filter_even.py
    inputs:
      data: doubler/doubled
    outputs:
      - filtered
"""


def write_module(folder, module=MODULE):
    (folder / "modules").mkdir()
    (folder / "modules" / "transform_module.yml").write_text(textwrap.dedent(module).lstrip())
    (folder / "modules" / "doubler.py").write_text(textwrap.dedent(DOUBLER))
    (folder / "modules" / "filter_even.py").write_text(textwrap.dedent(FILTER))


def test_a_module_runs_as_its_nodes_wired_to_the_dataflow(dataflows):
    path = dataflows.write(
        """
        env:
          SHARED: everyone
        nodes:
          - id: sender
            path: sender.py
            outputs:
              - value

          - id: pipeline
            module: modules/transform_module.yml
            inputs:
              raw_data: sender/value
            params:
              factor: 2

          - id: receiver
            path: receiver.py
            inputs:
              filtered: pipeline/filtered
        """,
        {"sender.py": SENDER, "receiver.py": RECEIVER},
    )
    write_module(path.parent)
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    # The parameter reached the arguments and the environment; the optional input nobody wired
    # is not an input of the node.
    assert run.node_lines("pipeline.doubler") == ["factor 2 env 2 shared everyone inputs ['data']"]
    assert run.node_lines("receiver") == ["received [4, 8, 12, 16, 20]"]


def test_a_mistake_in_a_module_file_names_that_file_and_line(dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: sender
            path: sender.py
            outputs: [value]
          - id: pipeline
            module: modules/transform_module.yml
            inputs:
              raw_data: sender/value
          - id: receiver
            path: receiver.py
            inputs:
              filtered: pipeline/unfiltered
        """,
        {"sender.py": SENDER, "receiver.py": RECEIVER},
    )
    write_module(path.parent, MODULE.replace("_mod/config", "_mod/settings"))
    checked = subprocess.run(nerve_cmd("validate", str(path)), capture_output=True, text=True, timeout=60)
    assert checked.returncode != 0
    module_file = path.parent / "modules" / "transform_module.yml"
    assert (
        f"{module_file}:13:15: nodes[pipeline.doubler].inputs.config: `_mod/settings`: module "
        "`transform_pipeline` declares no input `settings`; its inputs: `raw_data`, `config`"
    ) in checked.stderr, checked.stderr
    assert (
        f"{path}:12:17: nodes[receiver].inputs.filtered: `pipeline/unfiltered`: module node `pipeline` has no "
        "output `unfiltered`; its outputs: `filtered`"
    ) in checked.stderr, checked.stderr

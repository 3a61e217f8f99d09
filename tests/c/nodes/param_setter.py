"""Sets node `c-params`'s speed with `nerve param set` once the node says its on-change callback
is in place: 1.5, accepted, then -2, which the callback refuses; then tells the node."""

import os
import subprocess
import sys

import pyarrow as pa
from nerve import Node


def param_set(value: str) -> subprocess.CompletedProcess:
    # The run's id picks this dataflow should another running one have a node `c-params`.
    command = [sys.executable, "-m", "nerve", "param", "set", "c-params", "speed", value]
    command += ["--dataflow", os.environ["NERVE_RUN_ID"]]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


node = Node()
for event in node:
    if event["type"] == "INPUT" and event["id"] == "ready":
        accepted = param_set("1.5")
        assert accepted.returncode == 0, accepted.stderr
        refused = param_set("-2")
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert "speed must be >= 0" in refused.stderr, refused.stderr
        node.send_output("applied", pa.array([], pa.uint8()))
        break

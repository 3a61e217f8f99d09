"""Writes one JSON line per input to the file OUT: input id, values, metadata (without the
timestamp), the monotonic time of arrival in ns, and the node's clock then (`now`)."""

import json
import os
import time

from nerve import Node

node = Node()
with open(os.environ["OUT"], "w") as out:
    for event in node:
        if event["type"] == "INPUT":
            metadata = {k: v for k, v in event["metadata"].items() if k != "timestamp"}
            line = {"id": event["id"], "values": event["value"].to_pylist(), "metadata": metadata}
            out.write(json.dumps({**line, "t": time.monotonic_ns(), "now": node.now_ns()}) + "\n")
            out.flush()
        elif event["type"] == "STOP":
            break

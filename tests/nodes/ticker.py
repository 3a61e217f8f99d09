"""Sends its tick count on every timer event until STOP (or STOP_AFTER ticks), or crashes at CRASH_AT."""

import os

import pyarrow as pa
from nerve import Node

crash_at = int(os.environ.get("CRASH_AT", "-1"))
stop_after = int(os.environ.get("STOP_AFTER", "-1"))
node = Node()
n = 0
for event in node:
    if event["type"] == "INPUT":
        node.send_output("count", pa.array([n], type=pa.uint64()), {"n": n})
        n += 1
        if n == crash_at:
            os.kill(os.getpid(), 9)
        if n == stop_after:
            break
    elif event["type"] == "STOP":
        print(f"stopped after {n}", flush=True)
        break

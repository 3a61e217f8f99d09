"""Calls `add` with the values given: `python client.py add 1 2 3` prints `sum 6`, or the
server's refusal (exit code 1). Meets the Rust `service-adder serve` and `server.py` alike."""

import sys

import nerve
import numpy as np

name, *values = sys.argv[1:] or ["add", "1", "2", "3"]
client = nerve.Client(name)
# Servers announce themselves asynchronously: give a fresh process a moment to hear one (a
# call without one fails at once, "no server").
client.wait_for_server(timeout=5)
try:
    reply = client.call(np.array([int(v) for v in values], dtype=np.int64), timeout=10.0)
except nerve.ServiceError as e:
    print(f"refused: {e}", flush=True)
    sys.exit(1)
print(f"sum {reply['value'].to_pylist()[0]}", flush=True)

"""Sends a speed command every tick, shaped by the node's parameters.

``speed`` may not go below zero: the on-change callback refuses it, whether the change comes from
this code or from ``nerve param set controller speed -1``.
"""

import pyarrow as pa
from nerve import Node, ParameterError

node = Node()
node.declare_param("ticks", 100)  # the dataflow's value (150) wins over this default


def check(key, value):
    if key == "speed" and value < 0:
        return f"speed must be >= 0, got {value}"  # a reason refuses the change
    if key == "ticks" and value < 1:
        raise ValueError("ticks must be at least 1")  # so does an exception
    return None  # accept


node.on_param_change(check)
try:
    node.set_param("speed", -1.0)
except ParameterError as e:
    print(f"refused as expected: {e}", flush=True)

sent = 0
speed = None
for event in node:
    if event["type"] == "INPUT":
        now = node.get_param("speed") * (2.0 if node.get_param("boost") else 1.0)
        if now != speed:
            speed = now
            print(f"commanding speed {speed}", flush=True)
        node.send_output("command", pa.array([speed]))
        sent += 1
        if sent >= node.get_param("ticks"):
            break
    elif event["type"] == "STOP":
        break
print(f"sent {sent} commands", flush=True)

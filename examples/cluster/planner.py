"""Steers away from the nearest obstacle: a command (speed m/s, turn rad/s) per scan."""

import numpy as np
from nerve import Node

node = Node()
planned = 0
for event in node:
    if event["type"] == "INPUT":
        ranges = event["value"].to_numpy()  # a view of this machine's shared memory
        nearest = int(np.argmin(ranges))
        turn = -0.5 if nearest < 180 else 0.5
        speed = 0.2 if ranges[nearest] < 2.0 else 1.0
        node.send_output("command", np.array([speed, turn], dtype=np.float32), event["metadata"])
        planned += 1
    elif event["type"] == "STOP":
        break
print(f"planner: {planned} commands")

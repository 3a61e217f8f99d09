"""Drives the cart towards 1 m with a proportional command on every timer tick (10 Hz of robot
time), and stops after 25 ticks."""

import numpy as np
from nerve import Node

TARGET, GAIN = 1.0, 2.0

node = Node()
position, ticks, first = 0.0, 0, None
for event in node:
    if event["type"] == "INPUT" and event["id"] == "position":
        position = float(event["value"][0].as_py())
    elif event["type"] == "INPUT" and event["id"] == "tick":
        now = node.now()
        first = now if first is None else first
        ticks += 1
        node.send_output("command", np.array([GAIN * (TARGET - position)]))
        if ticks == 25:
            break
    elif event["type"] == "STOP":
        break
clock = "simulated" if node.sim_time else "wall"
print(f"controller: {ticks} ticks over {now - first:.1f} s of {clock} time, cart at {position:.2f} m", flush=True)

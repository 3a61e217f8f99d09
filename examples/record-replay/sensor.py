"""A simulated IMU: 40 readings of (ax, ay, az) in m/s², each with its sequence number."""

import numpy as np
from nerve import Node

READINGS = 40
rng = np.random.default_rng(7)
node = Node()
seq = 0
for event in node:
    if event["type"] == "INPUT":
        reading = np.array([0.0, 0.0, 9.81], dtype=np.float32) + rng.normal(0, 0.05, 3).astype(np.float32)
        node.send_output("reading", reading, {"seq": seq, "unit": "m/s^2"})
        seq += 1
        if seq == READINGS:
            break  # the output closes, and the monitor finishes after the last reading
    elif event["type"] == "STOP":
        break

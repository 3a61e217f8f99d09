"""A 2D lidar: 360 ranges in metres per scan, an obstacle sweeping around the robot."""

import os

import numpy as np
from nerve import Node

SCANS = int(os.environ.get("SCANS", "60"))

node = Node()
angles = np.arange(360)
sent = 0
for event in node:
    if event["type"] == "STOP":
        break
    if event["type"] != "INPUT":
        continue
    ranges = np.full(360, 8.0, dtype=np.float32)
    ranges[np.abs(angles - (sent * 6) % 360) < 5] = 1.5
    node.send_output("scan", ranges, {"seq": sent})
    sent += 1
    if sent == SCANS:
        break
print(f"lidar: sent {sent} scans")

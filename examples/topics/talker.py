"""Publishes 50 poses on `example/pose` at 50 Hz, once a listener is there."""

import math
import time

import nerve
import numpy as np

pub = nerve.Publisher("example/pose")
pub.wait_for_subscribers(1, timeout=30)
for i in range(50):
    pose = np.array([0.1 * i, 0.05 * i, math.sin(i / 10)])
    pub.send(pose, {"frame": "map", "last": i == 49})
    time.sleep(0.02)

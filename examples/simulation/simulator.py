"""Steps a cart (position, velocity) in 10 ms steps for 3 s of robot time, and publishes its
position every step. On simulated time it also sets the run's clock, as fast as ten times the
wall clock; on real time it keeps pace with the wall clock."""

import time

import numpy as np
from nerve import Node

STEP_NS = 10_000_000
STEPS = 300

node = Node()
position, velocity = 0.0, 0.0
start = time.monotonic()
for step in range(1, STEPS + 1):
    for event in node.drain():
        if event["type"] == "INPUT" and event["id"] == "command":
            velocity = float(event["value"][0].as_py())
    position += velocity * STEP_NS / 1e9
    if node.sim_time:
        node.set_sim_time(step * STEP_NS)
        time.sleep(0.001)
    else:
        time.sleep(max(0.0, start + step * STEP_NS / 1e9 - time.monotonic()))
    node.send_output("position", np.array([position]))
print(
    f"simulator: {STEPS * STEP_NS / 1e9:.1f} s of robot time in {time.monotonic() - start:.1f} s, "
    f"cart at {position:.2f} m",
    flush=True,
)

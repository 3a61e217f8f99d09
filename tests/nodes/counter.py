"""On every tick sends message n: float64 values n, n+0.5, ... (1 + n % 5 of them), with n, a
label and a nested dict in the metadata; stops after COUNT messages (closing its output).
With BURST=1 it sends all COUNT messages on the first tick, as fast as it can."""

import os

import numpy as np
from nerve import Node

count = int(os.environ.get("COUNT", "20"))
burst = os.environ.get("BURST") == "1"
node = Node()
n = 0


def send() -> None:
    global n
    values = n + 0.5 * np.arange(1 + n % 5, dtype=np.float64)
    node.send_output("numbers", values, {"n": n, "label": f"reading-{n}", "nested": {"odd": n % 2 == 1}})
    n += 1


for event in node:
    if event["type"] == "INPUT":
        send()
        while burst and n < count:
            send()
        if n == count:
            break
    elif event["type"] == "STOP":
        break

"""Sends the misuse test one message with metadata, then ends (its input closes)."""

import numpy as np
from nerve import Node

node = Node()
node.send_output("data", np.arange(4, dtype=np.int64), {"n": 7, "name": "seven", "ratio": 0.5})

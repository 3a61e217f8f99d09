"""Sends arrays of several sizes, each with its CRC32, its process id and a sequence number
counted per process, until the file STOP_FILE appears."""

import os
import time
import zlib

import numpy as np
from nerve import Node

SIZES = [8, 4096, 65536, 1048576]
stop_file = os.environ["STOP_FILE"]
node = Node()
rng = np.random.default_rng(os.getpid())
seq = 0
while not os.path.exists(stop_file):
    data = rng.integers(0, 255, SIZES[seq % len(SIZES)], dtype=np.uint8)
    node.send_output("data", data, {"pid": os.getpid(), "seq": seq, "crc": zlib.crc32(data)})
    seq += 1
    time.sleep(0.002)
print(f"sent {seq}", flush=True)

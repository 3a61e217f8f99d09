"""Sends numpy arrays of many sizes and dtypes as fast as it can, each with its CRC32."""

import os
import zlib

import numpy as np
from nerve import Node

SIZES = [int(s) for s in os.environ.get("SIZES", "8,1024,65536,1048576,4194304,33554432,67108864").split(",")]
ROUNDS = int(os.environ.get("ROUNDS", "2"))
DTYPES = [np.uint8, np.int16, np.float32, np.float64, np.int64]

node = Node()
rng = np.random.default_rng(7)
seq = 0
for _ in range(ROUNDS):
    for size in SIZES:
        dtype = np.dtype(DTYPES[seq % len(DTYPES)])
        n = max(1, size // dtype.itemsize)
        data = rng.integers(0, 255, n, dtype=np.uint8).astype(dtype)
        meta = {"seq": seq, "crc": zlib.crc32(data.tobytes()), "dtype": dtype.str, "n": n}
        node.send_output("data", data, meta)
        seq += 1
print(f"sent {seq} arrays")

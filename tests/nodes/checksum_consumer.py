"""Checks every array: in order, none missing, every byte intact, and read in place."""

import os
import time
import zlib

import numpy as np
from nerve import Node


def shm_ranges():
    """Address ranges of nerve's shared-memory mappings in this process."""
    ranges = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            if "/dev/shm/nerve." in line:
                start, end = (int(x, 16) for x in line.split()[0].split("-"))
                ranges.append((start, end))
    return ranges


expected = int(os.environ["EXPECTED"])
delay = float(os.environ.get("DELAY", "0"))
node = Node()
received = 0
for event in node:
    if event["type"] == "INPUT":
        meta = event["metadata"]
        assert meta["seq"] == received, f"got seq {meta['seq']}, expected {received}"
        array = event["value"].to_numpy(zero_copy_only=True)
        assert array.dtype == np.dtype(meta["dtype"]) and array.size == meta["n"]
        assert zlib.crc32(array.tobytes()) == meta["crc"], f"array {received} corrupted"
        address = array.__array_interface__["data"][0]
        assert any(s <= address < e for s, e in shm_ranges()), "value is not a view of shared memory"
        assert not array.flags.writeable, "readers must not be able to write into a shared block"
        received += 1
        del array, event
        time.sleep(delay)
    elif event["type"] == "STOP":
        break
print(f"verified {received} arrays")
if received != expected:
    raise SystemExit(f"expected {expected} arrays, got {received}")

"""Checks that readings arrive in order with their metadata, and prints a summary whose
checksum covers every value: the same recording replayed gives the same line."""

import hashlib
import time

from nerve import Node

node = Node()
digest = hashlib.sha256()
count = 0
arrivals = []
for event in node:
    if event["type"] == "INPUT":
        metadata = event["metadata"]
        assert metadata["seq"] == count, f"reading {metadata['seq']} arrived as number {count}"
        assert metadata["unit"] == "m/s^2"
        digest.update(event["value"].to_numpy().tobytes())
        arrivals.append(time.monotonic())
        count += 1
    elif event["type"] == "STOP":
        break
rate = (count - 1) / (arrivals[-1] - arrivals[0]) if count > 1 else 0.0
print(f"monitor: {count} readings, checksum {digest.hexdigest()[:16]}", flush=True)
print(f"monitor: about {rate:.0f} readings/s", flush=True)

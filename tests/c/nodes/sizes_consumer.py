"""Checks each message of the C producer: size and checksum, read in place (no copy)."""

import sys

from nerve import Node
from sizes import SIZES, checksum

node = Node()
received = 0
for event in node:
    if event["type"] != "INPUT":
        continue
    data = event["value"].to_numpy(zero_copy_only=True)
    metadata = event["metadata"]
    if (len(data), metadata["size"], checksum(data)) != (SIZES[received], SIZES[received], metadata["checksum"]):
        sys.exit(f"message {received}: {len(data)} bytes, checksum {checksum(data)}; sent {metadata}")
    received += 1
print(f"sizes_consumer.py: {received} messages, checksums match")
sys.exit(0 if received == len(SIZES) else 1)

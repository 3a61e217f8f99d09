"""Sends one message of each size, with its size and checksum as metadata."""

from nerve import Node
from sizes import SIZES, checksum, content

node = Node()
for seed, size in enumerate(SIZES):
    data = content(size, seed)
    node.send_output("data", data, {"size": size, "checksum": checksum(data)})
print(f"sizes_producer.py: sent {len(SIZES)} messages")

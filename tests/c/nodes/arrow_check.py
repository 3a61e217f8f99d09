"""Checks that what the Arrow C++ node sent back equals each case it was sent."""

import sys

from arrow_cases import cases
from nerve import Node

expected = cases()
node = Node()
received = 0
for event in node:
    if event["type"] != "INPUT":
        continue
    name, array = expected[received]
    if event["metadata"].get("case") != name or not event["value"].equals(array):
        sys.exit(f"case {name}: got {event['metadata']} {event['value']}")
    received += 1
print(f"arrow_check.py: {received} arrays back from Arrow C++, all equal")
sys.exit(0 if received == len(expected) else 1)

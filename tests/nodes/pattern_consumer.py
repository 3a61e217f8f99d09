"""Checks every array against its sequence number, and keeps the last few arrays it got to check
again with every later message: a block must never change while a reader holds it. Holds none
for the first half of the stream, then HOLD."""

import collections
import os

import numpy as np
from nerve import Node
from pattern_producer import message

count = int(os.environ["COUNT"])
node = Node()
held = collections.deque()
received = 0
for event in node:
    if event["type"] != "INPUT":
        continue
    seq = event["metadata"]["seq"]
    assert seq == received, f"got seq {seq}, expected {received}"
    value = event["value"].to_numpy(zero_copy_only=True)
    # A relay between (pattern_relay.py) sends some messages on without their first value.
    expected = message(seq)[1:] if event["metadata"].get("sliced") else message(seq)
    assert np.array_equal(value, expected), f"array {seq} is not its own message's"
    held.append((seq, value, expected))
    while len(held) > (0 if received < count // 2 else int(os.environ["HOLD"])):
        held.popleft()
    for s, v, e in held:
        assert np.array_equal(v, e), f"array {s}, still held, changed by a later message"
    received += 1
    del event, value
print(f"verified {received} arrays, {node.arrays_imported_ahead} imported ahead")

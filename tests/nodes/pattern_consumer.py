"""Checks every array against its sequence number, and keeps the last few arrays it got to check
again with every later message: a block must never change while a reader holds it. Holds none
for the first half of the stream, then HOLD."""

import collections
import os

import numpy as np
import pyarrow as pa
from nerve import Node
from pattern_producer import message


def same(value, expected) -> bool:
    if isinstance(expected, pa.Array):
        return value.equals(expected)
    return np.array_equal(value, expected)


count = int(os.environ["COUNT"])
node = Node()
held = collections.deque()
received = 0
structs = structs_ahead = 0
ahead = node.arrays_imported_ahead
for event in node:
    if event["type"] != "INPUT":
        continue
    seq = event["metadata"]["seq"]
    assert seq == received, f"got seq {seq}, expected {received}"
    value = event["value"]
    if pa.types.is_struct(value.type):
        structs += 1
        structs_ahead += node.arrays_imported_ahead > ahead
    else:
        value = value.to_numpy(zero_copy_only=True)
    # A relay between (pattern_relay.py) sends some messages on without their first value.
    expected = message(seq)[1:] if event["metadata"].get("sliced") else message(seq)
    assert same(value, expected), f"array {seq} is not its own message's"
    held.append((seq, value, expected))
    while len(held) > (0 if received < count // 2 else int(os.environ["HOLD"])):
        held.popleft()
    for s, v, e in held:
        assert same(v, e), f"array {s}, still held, changed by a later message"
    received += 1
    ahead = node.arrays_imported_ahead
    del event, value
print(f"verified {received} arrays, {ahead} imported ahead; {structs} structs, {structs_ahead} imported ahead")

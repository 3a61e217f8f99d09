"""Sends COUNT arrays whose every value is derived from their sequence number: mostly 4 KiB of
bytes, with messages of other sizes and types in between (every 7th and every 11th), and every
3rd a one-row struct like a typed message's (a header with a name whose length changes, and
4 KiB of bytes)."""

import os
import time

import numpy as np
import pyarrow as pa
from nerve import Node


def message(seq: int) -> np.ndarray | pa.StructArray:
    if seq % 3 == 0 and seq % 7 and seq % 11:
        header = {"seq": seq, "name": "n" * (1 + seq % 4)}
        return pa.array([{"header": header, "data": np.full(4096, seq % 251, dtype=np.uint8)}])
    if seq % 11 == 0:
        return np.full(300, seq, dtype=np.int32)
    if seq % 7 == 0:
        return np.full(1000, seq % 251, dtype=np.uint8)
    return np.full(4096, seq % 251, dtype=np.uint8)


if __name__ == "__main__":
    node = Node()
    count = int(os.environ["COUNT"])
    for seq in range(count):
        node.send_output("data", message(seq), {"seq": seq})
        time.sleep(0.001)
    print(f"sent {count} arrays")

"""Checks what came back through Rust and C++: values doubled then offset by 1, nulls kept, metadata
carried along."""

import pyarrow as pa
from nerve import Node


def main() -> None:
    node = Node()
    received = 0
    for event in node:
        if event["type"] == "INPUT":
            seq = event["metadata"]["seq"]
            expected = pa.array([2.0 * i + 1.0 if i % 7 else None for i in range(seq + 1)], type=pa.float64())
            assert event["value"].equals(expected), f"array {seq} is wrong: {event['value']}"
            assert seq == received, f"array {seq} arrived out of order"
            received += 1
        elif event["type"] == "STOP":
            break
    print(f"checker verified {received} arrays")
    if received != 50:
        raise SystemExit(f"expected 50 arrays, got {received}")


if __name__ == "__main__":
    main()

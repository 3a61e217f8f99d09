"""Sends float64 arrays of growing length, some with nulls, to a Rust node."""

import pyarrow as pa
from nerve import Node

COUNT = 50


def main() -> None:
    node = Node()
    sent = 0
    for event in node:
        if event["type"] == "INPUT":
            values = [float(i) if i % 7 else None for i in range(sent + 1)]
            node.send_output("numbers", pa.array(values, type=pa.float64()), {"seq": sent})
            sent += 1
            if sent == COUNT:
                break
        elif event["type"] == "STOP":
            break
    print(f"talker sent {sent} arrays")


if __name__ == "__main__":
    main()

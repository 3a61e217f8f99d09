"""talker: sends a greeting on `message` at every tick, ten times, then exits."""

import pyarrow as pa
from nerve import Node

MESSAGES = 10


def main() -> None:
    node = Node()
    sent = 0
    for event in node:
        if event["type"] == "INPUT" and event["id"] == "tick":
            text = pa.array([f"hello #{sent}"])
            node.send_output("message", text, {"from": "talker"})
            sent += 1
            if sent == MESSAGES:
                break
        elif event["type"] == "STOP":
            break
    print(f"talker sent {sent} messages")


if __name__ == "__main__":
    main()

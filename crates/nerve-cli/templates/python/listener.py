"""listener: prints every message that arrives on its `message` input."""

from nerve import Node


def main() -> None:
    node = Node()
    received = 0
    for event in node:
        if event["type"] == "INPUT" and event["id"] == "message":
            stamp = event["metadata"]["timestamp"]
            for text in event["value"].to_pylist():
                print(f"listener got {text!r} (sent at {stamp} ns)")
            received += 1
        elif event["type"] == "STOP":
            break
    print(f"listener received {received} messages")


if __name__ == "__main__":
    main()

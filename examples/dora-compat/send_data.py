"""Sends a struct array per tick, the way dora Python nodes do."""

import argparse

import pyarrow as pa
from nerve import Node  # with dora-rs: from dora import Node


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=20)
    count = parser.parse_args().count

    node = Node()
    assert node.node_config()["id"] == "sender"
    sent = 0
    while sent < count:
        event = node.next(timeout=5.0)
        if event is None or event["type"] == "STOP":
            break
        if event["type"] == "INPUT" and event["id"] == "tick":
            reading = pa.array([{"seq": sent, "label": f"reading-{sent}", "values": [sent, sent * 2]}])
            node.send_output("data", reading, {"source": "sender"})
            sent += 1
    print(f"sent {sent} readings")


if __name__ == "__main__":
    main()

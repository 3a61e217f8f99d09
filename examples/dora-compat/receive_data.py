"""Receives with the asyncio API, the way dora's python-async example does."""

import asyncio
import os

from nerve import Node  # with dora-rs: from dora import Node


async def main() -> None:
    node = Node()
    expected = int(os.environ["EXPECTED"])
    received = 0
    while True:
        event = await node.recv_async(timeout=10.0)
        if event is None or event["type"] == "STOP":
            break
        if event["type"] == "INPUT_CLOSED":
            continue
        row = event["value"].to_pylist()[0]
        assert row == {"seq": received, "label": f"reading-{received}", "values": [received, received * 2]}, row
        assert event["metadata"]["source"] == "sender"
        received += 1
        if received == expected:
            break
    print(f"received {received} readings")
    if received != expected:
        raise SystemExit(f"expected {expected}, got {received}")


if __name__ == "__main__":
    asyncio.run(main())

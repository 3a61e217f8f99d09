"""Prints one line per event: INPUT id n, INPUT_CLOSED id, STOP; sleeps DELAY after inputs."""

import os
import time

from nerve import Node

delay = float(os.environ.get("DELAY", "0"))
limit = int(os.environ.get("LIMIT", "0"))
node = Node()
count = 0
for event in node:
    if event["type"] == "INPUT":
        print(f"INPUT {event['id']} {event['metadata'].get('n')}", flush=True)
        count += 1
        time.sleep(delay)
        if limit and count >= limit:
            break
    elif event["type"] == "INPUT_CLOSED":
        print(f"INPUT_CLOSED {event['id']}", flush=True)
    else:
        print(event["type"], flush=True)
        if event["type"] == "STOP":
            break
print("END", flush=True)

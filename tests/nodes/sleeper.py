"""Waits for events forever; on STOP exits unless IGNORE_STOP is set."""

import os
import time

from nerve import Node

node = Node()
print("ready", flush=True)
for event in node:
    print(f"event {event['type']}", flush=True)
    if event["type"] == "STOP":
        if os.environ.get("IGNORE_STOP"):
            time.sleep(3600)
        break
print("bye", flush=True)

"""Prints one line per event: INPUT id n, INPUT_CLOSED id, STOP; sleeps DELAY after inputs.

With CRASH_AT and CRASH_MARK, kills itself at that input unless the file CRASH_MARK exists
(which it creates first): a crash that happens once, whatever restarts follow.
"""

import os
import time

from nerve import Node

delay = float(os.environ.get("DELAY", "0"))
limit = int(os.environ.get("LIMIT", "0"))
crash_at = int(os.environ.get("CRASH_AT", "0"))
crash_mark = os.environ.get("CRASH_MARK", "")
node = Node()
count = 0
for event in node:
    if event["type"] == "INPUT":
        print(f"INPUT {event['id']} {event['metadata'].get('n')}", flush=True)
        count += 1
        if crash_at and count == crash_at and not os.path.exists(crash_mark):
            open(crash_mark, "w").close()
            os.kill(os.getpid(), 9)
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

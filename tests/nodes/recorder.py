"""Prints one line per event: INPUT id n, INPUT_CLOSED id, STOP; sleeps DELAY after inputs.

With CRASH_AT and CRASH_MARK, kills itself at that input unless the file CRASH_MARK exists
(which it creates first): a crash that happens once, whatever restarts follow.

With HOLD_UNTIL, takes no input after the first until that file exists (a reader that falls
behind by as much as the test wants, however fast the machine). With BACK_MARK, a restarted
process (CRASH_MARK exists) creates that file once it is wired in again.
"""

import os
import time

from nerve import Node

delay = float(os.environ.get("DELAY", "0"))
limit = int(os.environ.get("LIMIT", "0"))
crash_at = int(os.environ.get("CRASH_AT", "0"))
crash_mark = os.environ.get("CRASH_MARK", "")
hold_until = os.environ.get("HOLD_UNTIL", "")
node = Node()
if os.environ.get("BACK_MARK") and os.path.exists(crash_mark):
    open(os.environ["BACK_MARK"], "w").close()
count = 0
for event in node:
    if event["type"] == "INPUT":
        print(f"INPUT {event['id']} {event['metadata'].get('n')}", flush=True)
        count += 1
        if crash_at and count == crash_at and not os.path.exists(crash_mark):
            open(crash_mark, "w").close()
            os.kill(os.getpid(), 9)
        time.sleep(delay)
        if hold_until:
            deadline = time.monotonic() + 60
            while not os.path.exists(hold_until) and time.monotonic() < deadline:
                time.sleep(0.01)
            hold_until = ""
        if limit and count >= limit:
            break
    elif event["type"] == "INPUT_CLOSED":
        print(f"INPUT_CLOSED {event['id']}", flush=True)
    else:
        print(event["type"], flush=True)
        if event["type"] == "STOP":
            break
print("END", flush=True)

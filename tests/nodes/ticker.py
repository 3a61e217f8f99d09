"""Sends its tick count on every timer event until STOP (or STOP_AFTER ticks), or crashes at CRASH_AT.

With DONE_FILE, creates that file once it has sent its last message. With PAUSE_AT and
PAUSE_UNTIL, waits before sending message PAUSE_AT until the file PAUSE_UNTIL exists.
"""

import os
import time

import pyarrow as pa
from nerve import Node

crash_at = int(os.environ.get("CRASH_AT", "-1"))
stop_after = int(os.environ.get("STOP_AFTER", "-1"))
done_file = os.environ.get("DONE_FILE", "")
pause_at = int(os.environ.get("PAUSE_AT", "-1"))
pause_until = os.environ.get("PAUSE_UNTIL", "")
node = Node()
n = 0
for event in node:
    if event["type"] == "INPUT":
        if n == pause_at:
            deadline = time.monotonic() + 60
            while not os.path.exists(pause_until) and time.monotonic() < deadline:
                time.sleep(0.01)
        node.send_output("count", pa.array([n], type=pa.uint64()), {"n": n})
        n += 1
        if n == crash_at:
            os.kill(os.getpid(), 9)
        if n == stop_after:
            break
    elif event["type"] == "STOP":
        print(f"stopped after {n}", flush=True)
        break
if done_file:
    open(done_file, "w").close()

"""Sends one goal to the counting action and prints its feedback and result; with
`--cancel-after SECS`, cancels it mid-way.

    python client.py [--name count] [--n 10] [--cancel-after SECS]
"""

import argparse
import sys
import threading

import nerve
import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("--name", default="count")
parser.add_argument("--n", type=int, default=10)
parser.add_argument("--cancel-after", type=float)
args = parser.parse_args()

client = nerve.ActionClient(args.name)
client.wait_for_server(timeout=20)  # servers announce themselves as the session starts

try:
    goal = client.send_goal(np.array([args.n]), {"step_ms": 50})
except nerve.GoalRejectedError as e:
    sys.exit(f"rejected: {e}")
print("accepted", goal.id, flush=True)

cancel = None
if args.cancel_after is not None:
    cancel = threading.Timer(args.cancel_after, lambda: print("cancel taken:", goal.cancel(), flush=True))
    cancel.start()
for feedback in goal:  # every feedback message, until the goal ends
    print(f"feedback {feedback['value'][0]} of {feedback['metadata']['of']}", flush=True)
if cancel is not None:
    # The goal can end (canceled) before cancel() has returned in the timer's thread;
    # wait for that thread so its line comes before the result's. A goal that ended on
    # its own first is not canceled any more.
    cancel.cancel()
    cancel.join()

try:
    result = goal.result(timeout=10)
except nerve.ActionError as e:
    sys.exit(f"{goal.status}: {e}")
print(goal.status, "at", result["value"][0], flush=True)

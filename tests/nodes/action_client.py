"""Sends goals to the counting action NAME (examples/actions) the ways a user would, and prints
one line per outcome for the test to check. It prints `kill-me` when the server should die."""

import os

import nerve
import numpy as np

client = nerve.ActionClient(os.environ["NAME"])
assert client.wait_for_server(timeout=60), "the server never appeared"

goal = client.send_goal(np.array([5]), {"step_ms": 10}, timeout=10)
print("accepted", goal.accepted, flush=True)
print("feedback", [f["value"].to_pylist()[0] for f in goal], flush=True)
result = goal.result(timeout=30)
print("result", goal.status, result["value"].to_pylist(), flush=True)

try:
    client.send_goal(np.array([5000]))
except nerve.GoalRejectedError as e:
    print("rejected", e, flush=True)

goal = client.send_goal(np.array([10]), {"step_ms": 10, "fail_at": 3})
try:
    goal.result(timeout=30)
except nerve.ActionError as e:
    print("aborted", goal.status, goal.reason, "|", e, flush=True)

goal = client.send_goal(np.array([1000]), {"step_ms": 20})
first = goal.feedback(timeout=30)
assert first is not None
print("first", first["value"].to_pylist(), goal.status, flush=True)
print("cancel", goal.cancel(), flush=True)
result = goal.result(timeout=30)
print("canceled", goal.status, result["value"].to_pylist()[0] < 1000, goal.cancel(), flush=True)
while goal.feedback(timeout=0) is not None:  # polling never waits: drain what is left
    pass
print("polled", goal.feedback(timeout=0), flush=True)

goal = client.send_goal(np.array([1000]), {"step_ms": 50})
assert goal.feedback(timeout=30) is not None
print("kill-me", flush=True)
try:
    goal.result()  # no timeout: only the server's death ends this goal before its 50 s
except nerve.ActionError as e:
    print("failed", goal.status, e, flush=True)

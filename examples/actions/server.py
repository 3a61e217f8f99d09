"""Serves the counting action (default name `count`): each goal is one int64 `n` from 0 to
1000; the server counts to it, one step every `step_ms` (metadata, default 100), sends each
count as feedback, stops early on a cancel request, and answers with the count it reached.
A goal may ask to fail on reaching `fail_at`, to show an aborted goal."""

import sys

import nerve
import numpy as np


def goal_n(request) -> int:
    values = request["value"].to_pylist()
    if len(values) != 1 or not isinstance(values[0], int):
        raise ValueError("a goal is one int64 value")
    return values[0]


def accept(request) -> bool:
    n = goal_n(request)
    if not 0 <= n <= 1000:
        raise ValueError(f"n must be between 0 and 1000, not {n}")  # the client's reason
    return True


def count(goal):
    n = goal_n(goal.request)
    step = goal.request["metadata"].get("step_ms", 100) / 1000
    fail_at = goal.request["metadata"].get("fail_at")
    reached = 0
    while reached < n:
        if goal.wait_cancel(step):  # the sleep between steps ends early on a cancel
            print(f"cancel requested at {reached}", flush=True)
            break
        reached += 1
        if reached == fail_at:
            raise RuntimeError(f"failed at {reached} as asked")
        goal.publish_feedback(np.array([reached]), {"of": n})
    return np.array([reached])


name = sys.argv[1] if len(sys.argv) > 1 else "count"
server = nerve.ActionServer(name, count, accept=accept, workers=4)
print(f"serving {name}", flush=True)
try:
    sys.stdin.read()  # until stdin closes, Ctrl-D, or Ctrl-C
except KeyboardInterrupt:
    pass

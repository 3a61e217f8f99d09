"""Calls NAME the ways a user would and prints one line per outcome, for the test to check."""

import asyncio
import os
import time

import nerve
import numpy as np

client = nerve.Client(os.environ["NAME"])
assert client.wait_for_server(timeout=60), "the server never appeared"

reply = client.call(np.array([1, 2, 3], dtype=np.int64), timeout=10)
print("reply", reply["value"].to_pylist(), reply["metadata"]["count"], flush=True)

try:
    client.call(np.array([1, -1], dtype=np.int64))
except nerve.ServiceError as e:
    print("refused", e, flush=True)

# The server answers this call only when told to, after it ended: it can only end by its timeout.
try:
    client.call(np.array([1], dtype=np.int64), {"hold": "timeout"}, timeout=0.3)
except TimeoutError as e:
    print("timeout", e, flush=True)
# Its answer goes now, late, to nobody: the calls below must not see it.
client.call(np.array([2], dtype=np.int64), {"release": "timeout"}, timeout=10)


async def many():
    calls = [client.call_async(np.array([i], dtype=np.int64)) for i in range(20)]
    return [(await asyncio.wrap_future(c))["value"].to_pylist()[0] for c in calls]


print("async", asyncio.run(many()) == [2 * i for i in range(20)], flush=True)

# A call the server never answers; the test kills the server once it holds it. Only noticing the
# death ends the call before its timeout (a TimeoutError, not a ServiceError).
print("calling-slow", flush=True)
try:
    client.call(np.array([1], dtype=np.int64), {"hold": "slow"}, timeout=60)
except nerve.ServiceError as e:
    print("gone", e, flush=True)
while client.server_count > 0:
    time.sleep(0.02)
try:
    client.call(np.array([1], dtype=np.int64))
except nerve.ServiceError as e:
    print("none", e, flush=True)

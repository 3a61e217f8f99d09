"""Serves NAME: doubles int64 values; refuses negatives.

A request whose metadata has ``hold`` (a label) is answered only once another request's
``release`` names that label, or never; taking it, the server prints ``holding <label>``. So the
test knows when such a call is under way, and that its answer cannot come before the release.
"""

import os
import sys
import threading

import nerve

holds: dict[str, threading.Event] = {}
holds_lock = threading.Lock()


def hold(label: str) -> threading.Event:
    with holds_lock:
        return holds.setdefault(label, threading.Event())


def double(request):
    metadata = request["metadata"]
    if "release" in metadata:
        hold(metadata["release"]).set()
    if "hold" in metadata:
        print(f"holding {metadata['hold']}", flush=True)
        hold(metadata["hold"]).wait()
    values = request["value"].to_numpy()
    if (values < 0).any():
        raise ValueError("negative values are not accepted")
    return values * 2, {"count": len(values)}


server = nerve.Service(os.environ["NAME"], double, workers=4)
print("serving", flush=True)
sys.stdin.read()  # until the test closes our stdin (or kills us)

"""Serves NAME: doubles int64 values after sleeping metadata["sleep"] seconds; refuses negatives."""

import os
import sys
import time

import nerve


def double(request):
    time.sleep(request["metadata"].get("sleep", 0))
    values = request["value"].to_numpy()
    if (values < 0).any():
        raise ValueError("negative values are not accepted")
    return values * 2, {"count": len(values)}


server = nerve.Service(os.environ["NAME"], double, workers=4)
print("serving", flush=True)
sys.stdin.read()  # until the test closes our stdin (or kills us)

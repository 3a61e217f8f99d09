"""Serves `add` (or the name given): the sum of the request's int64 values, refusing negative
ones. Meets the Rust `service-adder call` and `client.py` alike."""

import sys

import nerve
import numpy as np


def add(request):
    values = request["value"].to_numpy()
    if (values < 0).any():
        raise ValueError(f"negative values are not accepted ({values[values < 0][0]})")
    return np.array([values.sum()], dtype=np.int64), {"count": len(values)}


name = sys.argv[1] if len(sys.argv) > 1 else "add"
server = nerve.Service(name, add, workers=2)
print(f"serving {name}", flush=True)
sys.stdin.read()  # until stdin closes or the process is killed

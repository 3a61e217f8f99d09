"""Where a received message's time goes on the cold path: p50/p90/p99 per stage, from the stamps
a build with the cargo feature `profile-stages` writes into each message's metadata (see
benches/README.md, "Profiles")."""

import time

import numpy as np
from nerve import Node

STAGES = ["send", "publish+wake", "decode", "gil+dict", "pyarrow import", "metadata", "return", "to_numpy"]

node = Node()
rows = []
for event in node:
    t1 = time.monotonic_ns()
    if event["type"] == "INPUT":
        m = event["metadata"]
        if "_wake" not in m:
            raise SystemExit("no stage stamps in the metadata: nerve was built without `profile-stages`")
        value = event["value"].to_numpy(zero_copy_only=True)
        t2 = time.monotonic_ns()
        sent = int(value[:8].view("<i8")[0])
        rows.append(
            [
                m["timestamp"] - sent,
                m["_wake"] - m["timestamp"],
                m["_decoded"] - m["_wake"],
                m["_pa0"] - m["_decoded"],
                m["_pa1"] - m["_pa0"],
                m["_dict"] - m["_pa1"],
                t1 - m["_dict"],
                t2 - t1,
            ]
        )
a = np.array(rows[10:]) / 1000
for i, name in enumerate(STAGES):
    p50, p90, p99 = np.percentile(a[:, i], [50, 90, 99])
    print(f"{name:15s} p50 {p50:7.1f}  p90 {p90:7.1f}  p99 {p99:7.1f} us")

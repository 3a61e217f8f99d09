"""Checks every array it gets: CRC intact, and per producer process, sequence numbers that only
increase (GAPLESS=1: that go up by exactly one from 0). Prints BAD lines instead of raising, so
that a restart policy cannot hide a finding. With MARKS (a folder), creates the file
`<node id>-<own pid>-<producer pid>` there when it first gets data from a producer process."""

import os
import zlib

from nerve import Node

gapless = os.environ.get("GAPLESS") == "1"
marks = os.environ.get("MARKS")
node = Node()
last: dict[int, int] = {}
received = 0
for event in node:
    if event["type"] == "INPUT":
        meta = event["metadata"]
        data = event["value"].to_numpy(zero_copy_only=True)
        if zlib.crc32(data) != meta["crc"]:
            print(f"BAD crc pid={meta['pid']} seq={meta['seq']}", flush=True)
        if marks and meta["pid"] not in last:
            open(os.path.join(marks, f"{node.id}-{os.getpid()}-{meta['pid']}"), "w").close()
        previous = last.get(meta["pid"], -1)
        if meta["seq"] <= previous or (gapless and meta["seq"] != previous + 1):
            print(f"BAD order pid={meta['pid']} seq={meta['seq']} after {previous}", flush=True)
        last[meta["pid"]] = meta["seq"]
        received += 1
        del data, event
    elif event["type"] == "STOP":
        break
print(f"checked {received} from {len(last)} producer process(es)", flush=True)

"""Applies the newest command; checks the commands come back in scan order."""

from nerve import Node

node = Node()
last = -1
applied = 0
for event in node:
    if event["type"] == "INPUT":
        seq = event["metadata"]["seq"]
        assert seq > last, f"command {seq} came after {last}"
        speed, turn = event["value"].to_numpy()
        last, applied = seq, applied + 1
    elif event["type"] == "INPUT_CLOSED":
        break
    elif event["type"] == "STOP":
        break
print(f"wheels: {applied} commands applied, last for scan {last}")
if applied == 0:
    raise SystemExit("no command reached the wheels")

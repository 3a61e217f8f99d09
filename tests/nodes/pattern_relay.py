"""Sends every array it receives on unchanged, but for every fifth, which it sends on without its
first value (a slice: another array, whose data must not be taken for the whole message's)."""

from nerve import Node

node = Node()
relayed = 0
for event in node:
    if event["type"] != "INPUT":
        continue
    seq = event["metadata"]["seq"]
    if seq % 5 == 0:
        node.send_output("data", event["value"][1:], {"seq": seq, "sliced": True})
    else:
        node.send_output("data", event["value"], {"seq": seq})
    relayed += 1
    del event
print(f"relayed {relayed} arrays, {node.arrays_sent_on} sent on")

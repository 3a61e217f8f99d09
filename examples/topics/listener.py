"""Prints the poses published on `example/pose` until the talker says it is done."""

import nerve

with nerve.Subscriber("example/pose", queue_size=100) as poses:
    for message in poses:
        x, y, theta = message["value"].to_numpy(zero_copy_only=True)  # a view of shared memory
        print(f"pose x={x:.1f} y={y:.1f} theta={theta:.2f} frame={message['metadata']['frame']}", flush=True)
        if message["metadata"].get("last"):
            break

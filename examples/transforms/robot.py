"""Broadcasts the robot's frames: base -> camera once (static), world -> base on every tick."""

import os
import time

import motion
import nerve


def main() -> None:
    node = nerve.Node()
    static = nerve.StaticTransformBroadcaster()
    static.send("base", "camera", *motion.CAMERA_IN_BASE)  # listeners that start later get it too
    moving = nerve.TransformBroadcaster()
    ticks = int(os.environ.get("TICKS", "150"))
    sent = 0
    for event in node:
        if event["type"] == "INPUT":
            stamp = time.time_ns()
            moving.send("world", "base", *motion.base_in_world(stamp), stamp=stamp)
            sent += 1
            if sent == ticks:
                break
        elif event["type"] == "STOP":
            break
    print(f"robot sent {sent} poses")


if __name__ == "__main__":
    main()

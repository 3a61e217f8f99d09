"""Broadcasts a small transform tree for tests/test_tf.py.

Static: base -> camera (0.5 m ahead, 0.2 m up, turned 90 degrees about z) and moon -> lander
(a second tree). Moving: world -> base on a 20 ms grid of stamps from T0, at x = s, y = 0.5 s,
turned 0.2 s radians about z (s the seconds since T0), with world -> marker in the same message.

Usage: tf_broadcaster.py DOMAIN T0_NS COUNT
"""

import math
import sys
import time

import nerve

STEP_NS = 20_000_000


def yaw(angle: float) -> list[float]:
    return [0.0, 0.0, math.sin(angle / 2), math.cos(angle / 2)]


def main() -> None:
    domain, t0, count = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    fixed = nerve.StaticTransformBroadcaster(domain=domain)
    fixed.send("base", "camera", [0.5, 0.0, 0.2], yaw(math.pi / 2))
    fixed.send_many([("moon", "lander", [0.0, 0.0, 1.0], [0, 0, 0, 1])])
    moving = nerve.TransformBroadcaster(domain=domain)
    print("static sent", flush=True)
    for k in range(count):
        s = k * STEP_NS / 1e9
        moving.send_many(
            [("world", "base", [s, 0.5 * s, 0.0], yaw(0.2 * s)), ("world", "marker", [1.0, 2.0, 3.0], [0, 0, 0, 1])],
            stamp=t0 + k * STEP_NS,
        )
        time.sleep(STEP_NS / 1e9)


if __name__ == "__main__":
    main()

"""Looks the camera up in the world, through base, between two broadcasts of the robot."""

import time

import motion
import nerve
import numpy as np


def main() -> None:
    node = nerve.Node()
    buffer = nerve.TransformBuffer()
    give_up = time.monotonic() + 20
    for event in node:
        if event["type"] == "STOP":
            break
        try:
            latest = buffer.lookup("world", "camera")  # the latest time both edges know
            # 10 ms before the newest pose: between two broadcasts, so base is interpolated.
            # While only one pose has come, that time is before it: wait for the next.
            when = latest.stamp - 10_000_000
            camera = buffer.lookup("world", "camera", time=when)
        except nerve.TransformError as e:
            if time.monotonic() > give_up:
                raise SystemExit(f"no transform from world to camera: {e}") from e
            continue
        error = np.abs(camera.translation - motion.camera_in_world(when)).max()
        print(f"camera in world at {when}: {np.round(camera.translation, 4)}, off by {error:.1e} m")
        print(f"frames: {buffer.frames()}")
        if error > 1e-3:  # the chord of the circle between two poses 20 ms apart: ~1e-5 m
            raise SystemExit(f"the interpolated pose is {error} m off")
        break


if __name__ == "__main__":
    main()

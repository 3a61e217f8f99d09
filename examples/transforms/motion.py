"""Where the example robot is at any time: driving a 1 m circle around the world origin at
0.5 rad/s, facing along its path, with a camera 0.2 m ahead of the base and 0.5 m up."""

import math

import numpy as np

CAMERA_IN_BASE = ([0.2, 0.0, 0.5], [0.0, 0.0, 0.0, 1.0])


def yaw(angle: float) -> list[float]:
    """A quaternion (x, y, z, w) turning ``angle`` radians about z."""
    return [0.0, 0.0, math.sin(angle / 2), math.cos(angle / 2)]


def base_in_world(stamp_ns: int) -> tuple[list[float], list[float]]:
    angle = 0.5 * stamp_ns / 1e9
    return [math.cos(angle), math.sin(angle), 0.0], yaw(angle + math.pi / 2)


def camera_in_world(stamp_ns: int) -> np.ndarray:
    """The camera's position in the world."""
    (x, y, _), _ = base_in_world(stamp_ns)
    heading = 0.5 * stamp_ns / 1e9 + math.pi / 2
    ahead, _, up = CAMERA_IN_BASE[0]
    return np.array([x + ahead * math.cos(heading), y + ahead * math.sin(heading), up])

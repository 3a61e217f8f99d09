"""Poses as 4x4 matrices, and their ROS message forms (quaternions x y z w, stamps)."""

import math

import numpy as np


def quaternion_to_matrix(q) -> np.ndarray:
    """The 3x3 rotation of a unit quaternion (x, y, z, w)."""
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def matrix_to_quaternion(r: np.ndarray) -> tuple[float, float, float, float]:
    """The unit quaternion (x, y, z, w) of a 3x3 rotation (Shepperd's method: stable for any
    angle, which the simple trace formula is not near half turns)."""
    trace = r[0, 0] + r[1, 1] + r[2, 2]
    if trace > 0:
        s = 2 * math.sqrt(1 + trace)
        q = ((r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s, s / 4)
    else:
        i = int(np.argmax(np.diag(r)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2 * math.sqrt(1 + r[i, i] - r[j, j] - r[k, k])
        v = [0.0, 0.0, 0.0]
        v[i], v[j], v[k] = s / 4, (r[j, i] + r[i, j]) / s, (r[k, i] + r[i, k]) / s
        q = (*v, (r[k, j] - r[j, k]) / s)
    return tuple(float(c) for c in q)


def pose_matrix(translation, quaternion) -> np.ndarray:
    """A 4x4 pose from a translation and a quaternion (x, y, z, w)."""
    pose = np.eye(4)
    pose[:3, :3] = quaternion_to_matrix(quaternion)
    pose[:3, 3] = translation
    return pose


def pose_message(pose: np.ndarray) -> dict:
    """A 4x4 pose as a `geometry_msgs/Pose`."""
    x, y, z = (float(c) for c in pose[:3, 3])
    qx, qy, qz, qw = matrix_to_quaternion(pose[:3, :3])
    return {"position": {"x": x, "y": y, "z": z}, "orientation": {"x": qx, "y": qy, "z": qz, "w": qw}}


def message_pose(message) -> np.ndarray:
    """A `geometry_msgs/Pose` as a 4x4 pose."""
    p, o = message.position, message.orientation
    return pose_matrix((p.x, p.y, p.z), (o.x, o.y, o.z, o.w))


def yaw_of(pose: np.ndarray) -> float:
    """The heading of a pose's x axis in the world's xy plane, radians."""
    return math.atan2(pose[1, 0], pose[0, 0])


def stamp(ns: int) -> dict:
    """A `builtin_interfaces/Time` of `ns` nanoseconds."""
    return {"sec": ns // 1_000_000_000, "nanosec": ns % 1_000_000_000}


def stamp_ns(header) -> int:
    """A message header's stamp in nanoseconds: how messages of one tick are matched."""
    return header.stamp.sec * 1_000_000_000 + header.stamp.nanosec

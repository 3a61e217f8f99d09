"""Checks what the mapper sends, and fails the run when something is wrong:

* the map only grows (each is the previous one with points added at its end), every point lies
  on a wall, a pillar or the floor of world.py (within 8 times the lidar's noise), and it levels
  off: the later half of the run adds less than half as many points as the earlier half (a
  map that kept every point would add as many);
* the path only grows too, and is continuous: its stamps increase, and no step between two of
  its poses is longer than the robot drives in the time between them;
* each pose is where the map -> base transform puts the base at the pose's stamp, and the last
  pose is the end of the last path (unless the run was stopped).
"""

import math

import nerve
import numpy as np
import world
from mapper import POINT_FIELDS
from nerve.msg import geometry_msgs, sensor_msgs

TOLERANCE = 8 * world.RANGE_NOISE
#: Poses the transform listener may miss at the start (it may join after they were sent).
LATE_POSES = 20


class Check:
    """What has been checked so far; each check raises AssertionError, naming what is wrong."""

    def __init__(self) -> None:
        self.sizes: list[int] = []  # points of each map
        self.points = np.empty((0, 3), np.float32)  # the last map
        self.path = np.empty((0, 3))  # the last path: stamp (s), x, y
        self.longest_step = 0.0
        self.poses = 0  # poses matched with the transform
        self.missed = 0  # poses before the listener's first transform
        self.last_pose: tuple[float, float, float] | None = None

    def on_map(self, value) -> None:
        cloud = sensor_msgs.PointCloud2.from_arrow(value)
        layout = [(f.name, f.offset, f.datatype, f.count) for f in cloud.fields]
        expected = [(f["name"], f["offset"], f["datatype"], f["count"]) for f in POINT_FIELDS]
        assert layout == expected and cloud.point_step == 12, f"a map of fields {layout}, step {cloud.point_step}"
        points = cloud.data.view(np.float32).reshape(-1, 3)
        assert len(points) == cloud.width, f"a map of {len(points)} points says it has {cloud.width}"
        kept = len(self.points)
        assert len(points) >= kept and np.array_equal(points[:kept], self.points), (
            f"map {len(self.sizes)} is not the previous one ({kept} points) with points added"
        )
        far = world.distance_to_surfaces(points[kept:])
        assert not len(far) or far.max() <= TOLERANCE, f"a map point {far.max():.3f} m from every surface"
        self.points = points.copy()
        self.sizes.append(len(points))

    def on_path(self, value) -> None:
        # Read as columns: the path holds every pose so far, ten times a second.
        poses = value.field("poses").flatten()
        stamp = poses.field("header").field("stamp")
        seconds = stamp.field("sec").to_numpy() + stamp.field("nanosec").to_numpy() * 1e-9
        position = poses.field("pose").field("position")
        path = np.stack([seconds, position.field("x").to_numpy(), position.field("y").to_numpy()], axis=1)
        kept = len(self.path)
        assert len(path) >= kept and np.array_equal(path[:kept], self.path), "the path changed what it held"
        pairs = path[max(kept - 1, 0) :]
        dt, step = np.diff(pairs[:, 0]), np.hypot(*np.diff(pairs[:, 1:], axis=0).T)
        assert (dt > 0).all(), "the path's stamps do not increase"
        too_far = step > world.MAX_SPEED * dt + 1e-6
        assert not too_far.any(), f"the path jumps {step[too_far].max():.3f} m in {dt[too_far][0]:.3f} s"
        self.longest_step = max(self.longest_step, step.max(initial=0.0))
        self.path = path

    def on_pose(self, value, transforms: nerve.TransformBuffer) -> None:
        pose = geometry_msgs.PoseStamped.from_arrow(value)
        stamp = pose.header.stamp.sec * 10**9 + pose.header.stamp.nanosec
        position, orientation = pose.pose.position, pose.pose.orientation
        # As the path's columns give it, to compare the two exactly.
        self.last_pose = (pose.header.stamp.sec + pose.header.stamp.nanosec * 1e-9, position.x, position.y)
        try:
            base = transforms.lookup("map", "base", time=stamp, timeout=1.0)
        except nerve.TransformError as e:
            if self.poses or self.missed >= LATE_POSES:
                raise AssertionError(f"no map -> base transform at the pose of {stamp}: {e}") from e
            self.missed += 1
            return
        off = math.dist(base.translation[:2], (position.x, position.y))
        assert off < 1e-6, f"the pose and the map -> base transform are {off:.3g} m apart at {stamp}"
        turned = [orientation.x, orientation.y, orientation.z, orientation.w]
        assert np.allclose(base.rotation, turned, atol=1e-9), f"the pose turns {turned}, the transform {base.rotation}"
        self.poses += 1

    def end(self, stopped: bool) -> None:
        """The checks that need the whole run; a run `stopped` (Ctrl-C) may have sent a last
        pose whose path did not come."""
        assert len(self.sizes) >= 10 and self.poses >= 10, f"{len(self.sizes)} maps, {self.poses} poses checked"
        middle = len(self.sizes) // 2
        early, late = self.sizes[middle] - self.sizes[0], self.sizes[-1] - self.sizes[middle]
        assert 2 * late < early, f"the map does not level off: +{early} points in the first half, +{late} in the second"
        assert stopped or np.array_equal(self.path[-1], self.last_pose), (
            f"the last pose {self.last_pose} is not the end of the last path {self.path[-1]}"
        )


def main() -> None:
    node = nerve.Node()
    transforms = nerve.TransformBuffer()
    check = Check()
    stopped = False
    for event in node:
        if event["type"] == "STOP":
            stopped = True
            break
        if event["type"] != "INPUT":
            continue
        if event["id"] == "map":
            check.on_map(event["value"])
        elif event["id"] == "path":
            check.on_path(event["value"])
        else:
            check.on_pose(event["value"], transforms)
    check.end(stopped)
    print(
        f"monitor: {len(check.sizes)} maps growing from {check.sizes[0]} to {check.sizes[-1]} points, all within "
        f"{TOLERANCE:g} m of a surface; a continuous path of {len(check.path)} poses (longest step "
        f"{check.longest_step:.3f} m); {check.poses} poses on the map -> base transform"
    )


if __name__ == "__main__":
    main()

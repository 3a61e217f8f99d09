"""A SLAM-like mapper: on every tick the simulated robot scans the room (world.py) and the
scan, placed at the robot's pose, grows the map.

Outputs, all in frame `map`: `map` (sensor_msgs/msg/PointCloud2, x y z float32), `pose`
(geometry_msgs/msg/PoseStamped) and `path` (nav_msgs/msg/Path, every pose so far); and the
transforms map -> base (moving) and base -> lidar (static).

It does no scan matching: the pose is the simulated robot's own, and only the scans are noisy
(seeded). The map keeps one point per 10 cm voxel, so it grows while the robot sees new surfaces
and levels off once it has seen the room (about 37 000 points after a lap): a finite world makes
a finite map, as a real one does.
"""

import argparse

import nerve
import numpy as np
import world
from nerve.msg import geometry_msgs, nav_msgs, sensor_msgs

#: Edge of the map's voxels, in m.
VOXEL = 0.1
#: The noise of the scans is seeded: the same poses give the same map.
SEED = 7
#: sensor_msgs/msg/PointField.FLOAT32.
FLOAT32 = 7
POINT_FIELDS = [{"name": n, "offset": 4 * i, "datatype": FLOAT32, "count": 1} for i, n in enumerate("xyz")]


class VoxelMap:
    """The points scanned so far, at most one per voxel: the first point that fell into it.
    Points are only ever appended, so a map is the previous one with new points at its end."""

    def __init__(self, voxel: float) -> None:
        self.voxel = voxel
        self.keys = np.empty(0, dtype=np.int64)  # the occupied voxels, sorted
        self.points = np.empty((0, 3), dtype=np.float32)

    def add(self, points: np.ndarray) -> None:
        """Adds those of `points` (N x 3, map frame) that fall into empty voxels."""
        cells = np.floor(points / self.voxel).astype(np.int64) + (1 << 20)  # 2^21 voxels each way
        keys = (cells[:, 0] << 42) | (cells[:, 1] << 21) | cells[:, 2]
        keys, first = np.unique(keys, return_index=True)
        new = ~np.isin(keys, self.keys, assume_unique=True)
        self.keys = np.insert(self.keys, np.searchsorted(self.keys, keys[new]), keys[new])
        self.points = np.concatenate([self.points, points[first[new]]])


def header(stamp_ns: int) -> dict:
    return {"stamp": {"sec": stamp_ns // 10**9, "nanosec": stamp_ns % 10**9}, "frame_id": "map"}


def cloud(points: np.ndarray, stamp_ns: int) -> sensor_msgs.PointCloud2:
    """The map as a one-row, dense cloud of x, y, z float32 (12 bytes a point)."""
    return sensor_msgs.PointCloud2(
        header=header(stamp_ns),
        height=1,
        width=len(points),
        fields=POINT_FIELDS,
        is_bigendian=False,
        point_step=12,
        row_step=12 * len(points),
        data=points.reshape(-1).view(np.uint8),
        is_dense=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to drive (0: until stopped)")
    args = parser.parse_args()

    node = nerve.Node()
    # Kept while the mapper runs: it sends its transform again to every listener that joins.
    static = nerve.StaticTransformBroadcaster()
    static.send("base", "lidar", [0.0, 0.0, world.LIDAR_HEIGHT], [0.0, 0.0, 0.0, 1.0])
    moving = nerve.TransformBroadcaster()
    rng = np.random.default_rng(SEED)
    voxels = VoxelMap(VOXEL)
    path: list[geometry_msgs.PoseStamped] = []
    start, seconds = None, 0.0
    for event in node:
        if event["type"] == "STOP":
            break
        if event["type"] != "INPUT":
            continue
        stamp = node.now_ns()
        start = start or stamp
        seconds = (stamp - start) / 1e9
        x, y, heading = world.robot_pose(seconds)
        voxels.add(world.lidar_to_map(world.scan(x, y, heading, rng), x, y, heading))
        rotation = world.yaw_quaternion(heading)
        moving.send("map", "base", [x, y, 0.0], rotation, stamp=stamp)
        place = {"position": {"x": x, "y": y}, "orientation": dict(zip("xyzw", rotation, strict=True))}
        pose = geometry_msgs.PoseStamped(header=header(stamp), pose=place)
        path.append(pose)
        node.send_output("pose", pose)
        node.send_output("path", nav_msgs.Path(header=header(stamp), poses=path))
        node.send_output("map", cloud(voxels.points, stamp))
        if args.seconds and seconds >= args.seconds:
            break
    print(f"mapper: {len(path)} scans, a map of {len(voxels.points)} points, a path of {seconds:.1f} s")


if __name__ == "__main__":
    main()

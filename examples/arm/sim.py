"""The simulated workcell: steps the world, renders the camera, applies the controller's joint
targets, and judges the run.

One tick is 50 ms of simulated time. Each tick it sends the arm's `joint_states` and, every
fourth tick, a camera frame (`image`, `depth`, `points`, `camera_info`), then waits for the
controller's `command` for that tick before stepping the physics on. The camera frames' answer
comes back through the detector, the reader and the planner to the controller first, so the
whole dataflow runs in lockstep with the simulation: however slow the machine, what happens
depends on simulated time only, and the run's limits are in simulated time.

It exits 0 once the object labelled `PICK` has been held `LIFT` above the table for `HOLD`,
and 1 if another object is lifted or nothing is picked within `LIMIT`.
"""

import sys
import tempfile
from pathlib import Path

import nerve
import numpy as np
import scene
from nerve.msg import sensor_msgs
from spatial import stamp, stamp_ns
from world import JOINT_NAMES, PHYSICS_HZ, World

TICK_STEPS = 12  # physics steps per tick: 20 ticks a second of simulated time
TICK_NS = TICK_STEPS * 1_000_000_000 // PHYSICS_HZ
CAMERA_EVERY = 4  # ticks: 5 camera frames a second of simulated time
POINT_STRIDE = 2  # the point cloud takes every second pixel of every second row
LIFT, HOLD, LIMIT = 0.05, 1.0, 30.0  # metres above the table; seconds held; seconds in all
WRONG = 0.02  # metres: another object held this high was picked by mistake


class Referee:
    """Decides from the simulation's truth whether the named object was picked, and only it."""

    def __init__(self, world: World, wanted: str):
        self.world, self.wanted = world, wanted
        self.held_since: int | None = None

    def judge(self, now_ns: int) -> tuple[int, str] | None:
        """None while undecided, else the exit status and what happened."""
        for label in self.world.objects:
            height = self.world.height_above_table(label)
            if label != self.wanted and height > WRONG and self.world.held(label):
                return 1, f"sim: FAILED: the arm lifted {label}, not {self.wanted}"
        lifted = self.wanted in self.world.objects and self.world.height_above_table(self.wanted) >= LIFT
        if not (lifted and self.world.held(self.wanted)):
            self.held_since = None
            return None
        self.held_since = now_ns if self.held_since is None else self.held_since
        if now_ns - self.held_since < HOLD * 1e9:
            return None
        others = [label for label in self.world.objects if label != self.wanted]
        moved = [label for label in others if self.world.height_above_table(label) > WRONG]
        if moved:
            return 1, f"sim: FAILED: {', '.join(moved)} left the table with {self.wanted}"
        height = self.world.height_above_table(self.wanted)
        return 0, (
            f"sim: picked {self.wanted}: held {height * 100:.1f} cm above the table for {HOLD:.1f} s "
            f"(simulated time {now_ns / 1e9:.2f} s); {', '.join(others)} still on the table"
        )


def camera_messages(world: World, now_ns: int) -> dict[str, object]:
    """One camera frame: RGB and depth images, the point cloud of the depth, the intrinsics."""
    rgb, depth = world.render()
    header = {"stamp": stamp(now_ns), "frame_id": scene.CAMERA_FRAME}
    height, width = depth.shape
    k = scene.camera_matrix()
    projection = np.hstack([k, np.zeros((3, 1))])
    return {
        "image": sensor_msgs.Image(
            header=header, height=height, width=width, encoding="rgb8", step=width * 3, data=rgb.reshape(-1)
        ),
        "depth": sensor_msgs.Image(
            header=header,
            height=height,
            width=width,
            encoding="32FC1",
            step=width * 4,
            data=depth.view(np.uint8).reshape(-1),
        ),
        "points": point_cloud(header, rgb, depth, k),
        "camera_info": sensor_msgs.CameraInfo(
            header=header,
            height=height,
            width=width,
            distortion_model="plumb_bob",
            d=np.zeros(5),
            k=k.reshape(-1),
            r=np.eye(3).reshape(-1),
            p=projection.reshape(-1),
        ),
    }


def point_cloud(header: dict, rgb: np.ndarray, depth: np.ndarray, k: np.ndarray) -> sensor_msgs.PointCloud2:
    """The depth image as an organised cloud of x, y, z and packed rgb (float32 each, as PCL
    and Foxglove read them), in the camera's optical frame."""
    rows, cols = np.mgrid[0 : depth.shape[0] : POINT_STRIDE, 0 : depth.shape[1] : POINT_STRIDE]
    z = depth[rows, cols]
    points = np.empty((*z.shape, 4), np.float32)
    points[..., 0] = (cols - k[0, 2]) * z / k[0, 0]
    points[..., 1] = (rows - k[1, 2]) * z / k[1, 1]
    points[..., 2] = z
    colour = rgb[rows, cols].astype(np.uint32)
    points[..., 3] = ((colour[..., 0] << 16) | (colour[..., 1] << 8) | colour[..., 2]).view(np.float32)
    fields = [
        sensor_msgs.PointField(name=name, offset=4 * i, datatype=sensor_msgs.PointField.FLOAT32, count=1)
        for i, name in enumerate(("x", "y", "z", "rgb"))
    ]
    return sensor_msgs.PointCloud2(
        header=header,
        height=z.shape[0],
        width=z.shape[1],
        fields=fields,
        is_bigendian=False,
        point_step=16,
        row_step=16 * z.shape[1],
        data=points.view(np.uint8).reshape(-1),
        is_dense=True,
    )


def wait_for_command(node: nerve.Node, now_ns: int) -> dict[str, float] | None:
    """The controller's joint targets for this tick, by joint; None when the run is stopped."""
    for event in node:
        if event["type"] == "STOP":
            return None
        if event["type"] == "INPUT_CLOSED":
            raise SystemExit("sim: the controller stopped before the object was picked")
        if event["type"] == "INPUT":
            command = sensor_msgs.JointState.from_arrow(event["value"])
            if stamp_ns(command.header) != now_ns:
                raise SystemExit(f"sim: a command for {stamp_ns(command.header)} ns came while waiting for {now_ns} ns")
            return dict(zip(command.name, command.position.tolist(), strict=True))
    return None


def run(node: nerve.Node, world: World, referee: Referee) -> int:
    """Ticks until the referee decides or time is up; the exit status."""
    for tick in range(round(LIMIT * 1e9 / TICK_NS)):
        now = tick * TICK_NS
        if node.sim_time:
            node.set_sim_time(now)
        camera = tick % CAMERA_EVERY == 0
        if camera:
            for output, message in camera_messages(world, now).items():
                node.send_output(output, message)
        state = sensor_msgs.JointState(
            header={"stamp": stamp(now)}, name=list(JOINT_NAMES), position=np.array(world.joint_positions())
        )
        node.send_output("joint_states", state, {"camera": camera})
        command = wait_for_command(node, now)
        if command is None:
            return 0
        world.apply(command)
        world.step(TICK_STEPS)
        verdict = referee.judge(now + TICK_NS)
        if verdict is not None:
            status, message = verdict
            print(message, flush=True)
            return status
    heights = ", ".join(f"{label} {world.height_above_table(label) * 100:.1f} cm" for label in world.objects)
    print(f"sim: FAILED: {referee.wanted} not picked within {LIMIT:.0f} s of simulated time ({heights})", flush=True)
    return 1


def main() -> int:
    wanted, seed = scene.pick(), scene.shuffle_seed()
    placements = scene.placements(seed)
    with tempfile.TemporaryDirectory(prefix="arm-sim-") as workdir:
        world = World(placements, Path(workdir))
        node = nerve.Node()
        table = ", ".join(f"{p.label} (tag {p.tag_id})" for p in placements)
        print(f"sim: picking {wanted}; on the table{' (shuffled)' if seed is not None else ''}: {table}", flush=True)
        return run(node, world, Referee(world, wanted))


if __name__ == "__main__":
    sys.exit(main())

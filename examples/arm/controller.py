"""Moves the arm through a grasp of the planner's target: over it, down to it, close, lift, hold.

The hand follows straight lines between those poses; every tick (each `joint_states` the
simulator sends) it solves the arm's inverse kinematics for the hand's pose on the line at that
simulated time, with pybullet's solver on a model of its own (the same Panda URDF, in a DIRECT
client of this process), and answers with the joint targets. The simulator waits for that
answer before it moves on, so the motion depends on simulated time only, however slow the
machine.
"""

import math
from dataclasses import dataclass

import nerve
import numpy as np
import pybullet
import scene
import world
from nerve.msg import arm_msgs, sensor_msgs
from pairing import Pairing
from pybullet_utils.bullet_client import BulletClient
from spatial import message_pose, stamp, stamp_ns, yaw_of

GRASP_LINK = "panda_grasptarget"  # the point between the fingertips
APPROACH_HEIGHT = 0.15  # metres above the grasp point: where the hand turns and comes down from
GRASP_BELOW_TOP = 0.02  # the fingertips close this far below the object's top
FINGER_CLOSED = 0.0  # the fingers' target when grasping: they stop on the object and squeeze


@dataclass(frozen=True)
class Phase:
    """One straight move of the hand, with the gripper's target opening meanwhile."""

    name: str
    seconds: float
    position: tuple[float, float, float]
    yaw: float
    finger: float


def grasp_phases(tag_pose: np.ndarray) -> list[Phase]:
    """The moves that pick the object whose tag is at `tag_pose`. Its centre is found from the
    tag with the objects' model (`scene.TAG_TO_CENTRE`); the fingers close across its width, the
    tag's y axis, so the hand turns to the tag's heading (modulo a half turn, the gripper being
    symmetric: the smaller turn of the wrist)."""
    centre = tag_pose[:3, 3] + tag_pose[:3, 0] * scene.TAG_TO_CENTRE
    grasp = (float(centre[0]), float(centre[1]), float(tag_pose[2, 3] - GRASP_BELOW_TOP))
    above = (grasp[0], grasp[1], grasp[2] + APPROACH_HEIGHT)
    yaw = math.remainder(yaw_of(tag_pose), math.pi)
    return [
        Phase("approach", 2.0, above, yaw, world.FINGER_OPEN),
        Phase("descend", 1.0, grasp, yaw, world.FINGER_OPEN),
        Phase("close", 0.8, grasp, yaw, FINGER_CLOSED),
        Phase("lift", 1.5, above, yaw, FINGER_CLOSED),
    ]


def smoothstep(s: float) -> float:
    """0 to 1 with zero speed at both ends, so the arm neither jerks off nor stops hard."""
    s = min(max(s, 0.0), 1.0)
    return s * s * (3 - 2 * s)


class Arm:
    """The Panda's kinematics, on a pybullet model of this process's own."""

    def __init__(self):
        self.client = BulletClient(connection_mode=pybullet.DIRECT)
        self.body = world.load_arm(self.client)
        indices = world.joint_indices(self.client, self.body)
        self.joints = [indices[name] for name in world.JOINT_NAMES]
        self.hand = indices["panda_grasptarget_hand"]  # a fixed joint's index is its child link's
        movable = [i for i in range(self.client.getNumJoints(self.body)) if self._limits(i)[0] < self._limits(i)[1]]
        self.lower, self.upper = zip(*(self._limits(i) for i in movable), strict=True)
        self.rest = [*world.HOME, world.FINGER_OPEN, world.FINGER_OPEN]

    def _limits(self, joint: int) -> tuple[float, float]:
        info = self.client.getJointInfo(self.body, joint)
        return info[8], info[9]

    def hand_pose(self, positions: list[float]) -> tuple[np.ndarray, float]:
        """Where the point between the fingertips is, and the hand's heading, for these joints."""
        self._set(positions)
        state = self.client.getLinkState(self.body, self.hand, computeForwardKinematics=True)
        heading = self.client.getEulerFromQuaternion(state[5])[2]
        return np.array(state[4]), heading

    def solve(self, positions: list[float], target: np.ndarray, yaw: float) -> list[float]:
        """Arm joint angles that put the hand at `target`, pointing down and turned to `yaw`,
        starting from `positions` and kept near the home posture (the solver's null space)."""
        self._set(positions)
        solution = self.client.calculateInverseKinematics(
            self.body,
            self.hand,
            target.tolist(),
            self.client.getQuaternionFromEuler((math.pi, 0.0, yaw)),
            lowerLimits=self.lower,
            upperLimits=self.upper,
            jointRanges=[u - lo for lo, u in zip(self.lower, self.upper, strict=True)],
            restPoses=self.rest,
            maxNumIterations=100,
            residualThreshold=1e-5,
        )
        return list(solution[: len(world.ARM_JOINTS)])

    def _set(self, positions: list[float]) -> None:
        for index, angle in zip(self.joints, positions, strict=True):
            self.client.resetJointState(self.body, index, angle)


class Controller:
    """Holds the arm at home until a target comes, then runs the grasp's phases in simulated time."""

    def __init__(self):
        self.arm = Arm()
        self.phases: list[Phase] = []
        self.phase, self.phase_start_ns = 0, 0
        self.start: tuple[np.ndarray, float] | None = None  # where the current phase started

    def target(self, tag_pose: np.ndarray, now_ns: int, positions: list[float]) -> None:
        """Plans the grasp of the object whose tag is at `tag_pose`, starting now."""
        self.phases = grasp_phases(tag_pose)
        self.phase, self.phase_start_ns = 0, now_ns
        self.start = self.arm.hand_pose(positions)
        print(f"controller: grasping the object of tag {tag_pose[:3, 3].round(3).tolist()}", flush=True)

    @property
    def planned(self) -> bool:
        return bool(self.phases)

    def command(self, now_ns: int, positions: list[float]) -> list[float]:
        """The joint targets (`world.JOINT_NAMES` order) for simulated time `now_ns`."""
        if not self.phases:
            return [*world.HOME, world.FINGER_OPEN, world.FINGER_OPEN]
        phase = self._current(now_ns)
        s = smoothstep((now_ns - self.phase_start_ns) / 1e9 / phase.seconds)
        start_position, start_yaw = self.start
        position = start_position + s * (np.array(phase.position) - start_position)
        yaw = start_yaw + s * math.remainder(phase.yaw - start_yaw, 2 * math.pi)
        return [*self.arm.solve(positions, position, yaw), phase.finger, phase.finger]

    def _current(self, now_ns: int) -> Phase:
        """The phase under way at `now_ns`, moving on from one whose time is up (the last one,
        the lift, then holds its pose until the simulation ends)."""
        phase = self.phases[self.phase]
        while now_ns - self.phase_start_ns >= phase.seconds * 1e9 and self.phase + 1 < len(self.phases):
            self.start = (np.array(phase.position), phase.yaw)
            self.phase_start_ns += round(phase.seconds * 1e9)
            self.phase += 1
            phase = self.phases[self.phase]
            print(f"controller: {phase.name}", flush=True)
        return phase


def ready_tick(event: dict, camera_ticks: Pairing) -> tuple[int, list[float], object] | None:
    """The tick this input completes: its simulated time, the arm's joint positions and, on a
    camera tick, the planner's answer to that frame. None while a camera tick waits for its
    other half: the simulator waits for the planner's answer too."""
    if event["id"] == "joint_states":
        state = sensor_msgs.JointState.from_arrow(event["value"])
        now, positions = stamp_ns(state.header), state.position.tolist()
        if not event["metadata"].get("camera"):
            return now, positions, None
        tick = camera_ticks.add("joint_states", now, positions)
    else:
        target = arm_msgs.Target.from_arrow(event["value"])
        now = stamp_ns(target.header)
        tick = camera_ticks.add("target", now, target)
    return None if tick is None else (now, tick["joint_states"], tick["target"])


def main() -> None:
    controller = Controller()
    node = nerve.Node()
    camera_ticks = Pairing("joint_states", "target")
    for event in node:
        if event["type"] == "STOP":
            break
        ready = ready_tick(event, camera_ticks) if event["type"] == "INPUT" else None
        if ready is None:
            continue
        now, positions, target = ready
        if target is not None and target.chosen and not controller.planned:
            controller.target(message_pose(target.tag.pose), now, positions)
        command = sensor_msgs.JointState(
            header={"stamp": stamp(now)},
            name=list(world.JOINT_NAMES),
            position=np.array(controller.command(now, positions)),
        )
        node.send_output("command", command)


if __name__ == "__main__":
    main()

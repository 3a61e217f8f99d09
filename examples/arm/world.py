"""The simulated workcell in pybullet (DIRECT: no window, CPU rendering): the Franka Panda and the
table of `pybullet_data`, and the tagged boxes of `scene.placements`. It knows the truth
(where every object is), so it is also the referee of a run."""

import math
from pathlib import Path

import cv2
import numpy as np
import pybullet
import pybullet_data
import scene
from pybullet_utils.bullet_client import BulletClient

PHYSICS_HZ = 240  # pybullet's default step, the one its contact model is tuned for
ARM_JOINTS = tuple(f"panda_joint{i}" for i in range(1, 8))
FINGER_JOINTS = ("panda_finger_joint1", "panda_finger_joint2")
JOINT_NAMES = ARM_JOINTS + FINGER_JOINTS
HOME = (0.0, -0.6, 0.0, -2.4, 0.0, 1.8, math.pi / 4)  # the hand high and back, out of the camera's view
FINGER_OPEN = 0.04  # metres per finger: the gripper's widest
GRASP_FORCE = 20.0  # newtons per finger, the URDF's effort limit
OBJECT_MASS = 0.1  # kilograms


def load_arm(client: BulletClient) -> int:
    """The Panda of `pybullet_data`, bolted to the table at `scene.ARM_BASE`."""
    client.setAdditionalSearchPath(pybullet_data.getDataPath())
    return client.loadURDF("franka_panda/panda.urdf", scene.ARM_BASE, useFixedBase=True)


def joint_indices(client: BulletClient, body: int) -> dict[str, int]:
    """pybullet's joint index of every joint of `body`, by the URDF's name."""
    return {client.getJointInfo(body, i)[1].decode(): i for i in range(client.getNumJoints(body))}


def box_mesh(path: Path) -> None:
    """Writes a box of the objects' size as an OBJ mesh whose top face shows the whole texture
    (the sticker, `x` to the right) and whose sides show its white top-left corner."""
    lx, wy, hz = scene.BOX_LENGTH / 2, scene.BOX_WIDTH / 2, scene.BOX_HEIGHT / 2
    corners = [(x, y, z) for z in (-hz, hz) for y in (-wy, wy) for x in (-lx, lx)]
    faces = [  # each face counter-clockwise seen from outside, by corner number (1-based)
        (5, 6, 8, 7),  # top: z = +h
        (1, 3, 4, 2),  # bottom
        (1, 2, 6, 5),  # y = -w
        (3, 7, 8, 4),  # y = +w
        (1, 5, 7, 3),  # x = -l
        (2, 4, 8, 6),  # x = +l
    ]
    uv_top = {5: (0, 0), 6: (1, 0), 8: (1, 1), 7: (0, 1)}
    lines = [f"v {x} {y} {z}" for x, y, z in corners]
    lines += [f"vt {u} {v}" for u, v in uv_top.values()] + ["vt 0.001 0.999"]
    top_uv_index = {corner: i + 1 for i, corner in enumerate(uv_top)}
    for face in faces:
        uvs = [top_uv_index[c] if face == faces[0] else 5 for c in face]
        lines.append("f " + " ".join(f"{c}/{t}" for c, t in zip(face, uvs, strict=True)))
    path.write_text("\n".join(lines) + "\n")


class World:
    """The physics and the camera of one run."""

    def __init__(self, placements: list[scene.Placement], workdir: Path):
        self.client = BulletClient(connection_mode=pybullet.DIRECT)
        self.client.setTimeStep(1 / PHYSICS_HZ)
        self.client.setGravity(0, 0, -9.81)
        self.client.setAdditionalSearchPath(pybullet_data.getDataPath())
        self.client.loadURDF("table/table.urdf")
        self.arm = load_arm(self.client)
        indices = joint_indices(self.client, self.arm)
        self.joints = [indices[name] for name in JOINT_NAMES]
        for index, angle in zip(self.joints, (*HOME, FINGER_OPEN, FINGER_OPEN), strict=True):
            self.client.resetJointState(self.arm, index, angle)
        self.apply(dict(zip(JOINT_NAMES, (*HOME, FINGER_OPEN, FINGER_OPEN), strict=True)))
        self._couple_fingers()
        self.objects = {p.label: self._add_object(p, workdir) for p in placements}
        self.view = self.client.computeViewMatrix(scene.CAMERA_EYE, (*scene.CAMERA_EYE[:2], scene.TABLE_TOP), (1, 0, 0))
        self.projection = self.client.computeProjectionMatrixFOV(
            scene.CAMERA_FOV_DEG, scene.CAMERA_WIDTH / scene.CAMERA_HEIGHT, scene.CAMERA_NEAR, scene.CAMERA_FAR
        )

    def _couple_fingers(self) -> None:
        """Makes the fingers move as one, as the real gripper's mechanism does: driven apart,
        each by its own motor, a held object would drift towards the weaker one."""
        left, right = self.joints[-2:]
        gear = self.client.createConstraint(
            self.arm, left, self.arm, right, pybullet.JOINT_GEAR, (1, 0, 0), (0, 0, 0), (0, 0, 0)
        )
        self.client.changeConstraint(gear, gearRatio=-1, erp=0.1, maxForce=50)
        for finger in (left, right):
            self.client.changeDynamics(self.arm, finger, lateralFriction=1.5)

    def _add_object(self, placement: scene.Placement, workdir: Path) -> int:
        """A box with its sticker printed on top, standing on the table as `placement` says."""
        mesh, texture = workdir / "box.obj", workdir / f"sticker-{placement.tag_id}.png"
        if not mesh.exists():
            box_mesh(mesh)
        # OpenCV writes BGR; the sticker is RGB.
        cv2.imwrite(str(texture), cv2.cvtColor(scene.sticker(placement.tag_id, placement.label), cv2.COLOR_RGB2BGR))
        half = (scene.BOX_LENGTH / 2, scene.BOX_WIDTH / 2, scene.BOX_HEIGHT / 2)
        body = self.client.createMultiBody(
            baseMass=OBJECT_MASS,
            baseCollisionShapeIndex=self.client.createCollisionShape(pybullet.GEOM_BOX, halfExtents=half),
            baseVisualShapeIndex=self.client.createVisualShape(pybullet.GEOM_MESH, fileName=str(mesh)),
            basePosition=(placement.x, placement.y, scene.TABLE_TOP + half[2]),
            baseOrientation=self.client.getQuaternionFromEuler((0, 0, placement.yaw)),
        )
        self.client.changeVisualShape(body, -1, textureUniqueId=self.client.loadTexture(str(texture)))
        self.client.changeDynamics(body, -1, lateralFriction=1.0)
        return body

    def apply(self, targets: dict[str, float]) -> None:
        """Drives each named joint towards its target angle (or finger opening), with the
        URDF's effort limits: a closing gripper squeezes with `GRASP_FORCE`."""
        for name, target in targets.items():
            index = self.joints[JOINT_NAMES.index(name)]
            force = GRASP_FORCE if name in FINGER_JOINTS else self.client.getJointInfo(self.arm, index)[10]
            self.client.setJointMotorControl2(self.arm, index, pybullet.POSITION_CONTROL, target, force=force)

    def step(self, steps: int) -> None:
        for _ in range(steps):
            self.client.stepSimulation()

    def joint_positions(self) -> list[float]:
        """The angles (and finger openings) of `JOINT_NAMES`, in that order."""
        return [state[0] for state in self.client.getJointStates(self.arm, self.joints)]

    def render(self) -> tuple[np.ndarray, np.ndarray]:
        """The camera's RGB image (HxWx3 uint8) and depth (HxW float32, metres along the optical
        axis, as a depth camera gives it)."""
        _, _, rgba, zbuffer, _ = self.client.getCameraImage(
            scene.CAMERA_WIDTH,
            scene.CAMERA_HEIGHT,
            self.view,
            self.projection,
            renderer=pybullet.ER_TINY_RENDERER,
            flags=pybullet.ER_NO_SEGMENTATION_MASK,
        )
        rgb = np.asarray(rgba, np.uint8).reshape(scene.CAMERA_HEIGHT, scene.CAMERA_WIDTH, 4)[..., :3]
        near, far = scene.CAMERA_NEAR, scene.CAMERA_FAR
        zbuffer = np.asarray(zbuffer, np.float32).reshape(scene.CAMERA_HEIGHT, scene.CAMERA_WIDTH)
        depth = far * near / (far - (far - near) * zbuffer)
        return np.ascontiguousarray(rgb), depth.astype(np.float32)

    def object_position(self, label: str) -> np.ndarray:
        return np.array(self.client.getBasePositionAndOrientation(self.objects[label])[0])

    def height_above_table(self, label: str) -> float:
        """How far the object's centre is above where it stood."""
        return float(self.object_position(label)[2] - scene.TABLE_TOP - scene.BOX_HEIGHT / 2)

    def held(self, label: str) -> bool:
        """Whether both fingers touch the object."""
        fingers = self.joints[-2:]
        touching = {c[3] for c in self.client.getContactPoints(self.arm, self.objects[label])}
        return all(f in touching for f in fingers)

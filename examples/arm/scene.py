"""The workcell every node agrees on: where the table, the arm and the camera stand, what the
objects are, and how their stickers are printed.

The simulator builds the world from it; the other nodes take from it only what a real cell's
configuration would give them (the arm's base, the camera's mounting, the objects' model: where
the grasp point lies from the tag), never where the objects are or which is which: that they
learn from the camera.
"""

import math
import os
import random
from dataclasses import dataclass

import cv2
import numpy as np

TABLE_TOP = 0.625  # metres: the top of pybullet_data's table/table.urdf
ARM_BASE = (-0.5, 0.0, TABLE_TOP)  # the Panda stands on the table, facing +x

# A camera 0.55 m above the table looking straight down; the image's up is the world's +x, so
# the arm comes in from the bottom of the image.
CAMERA_EYE = (0.0, 0.0, TABLE_TOP + 0.55)
CAMERA_WIDTH, CAMERA_HEIGHT, CAMERA_FOV_DEG = 640, 480, 45.0  # vertical field of view
CAMERA_NEAR, CAMERA_FAR = 0.1, 2.0
CAMERA_FRAME = "camera_optical"  # x right, y down, z forward: ROS's optical frame
# The optical frame's axes in the world: columns x (image right), y (image down), z (forward).
CAMERA_AXES = np.array([[0.0, -1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, -1.0]]).T

# Every object is a box: `length` along its tag's x axis (tag at one end, label at the other),
# `width` along the tag's y axis (the gripper closes across it), `height` up.
BOX_LENGTH, BOX_WIDTH, BOX_HEIGHT = 0.14, 0.05, 0.05
TAG_SIDE = 0.04  # the black square of the ArUco tag (DICT_4X4_50), centred across the width
TAG_DICTIONARY = cv2.aruco.DICT_4X4_50
# The tag sits at one end of the top face: the box's centre is this far along the tag's x axis.
TAG_TO_CENTRE = BOX_LENGTH / 2 - BOX_WIDTH / 2
# The label is printed after the tag, reading along its x axis: this rectangle of the top face,
# in the tag's frame (x along the box, y across it), metres.
LABEL_X, LABEL_Y = (BOX_WIDTH / 2, BOX_LENGTH - BOX_WIDTH / 2 - 0.005), (-0.02, 0.02)
STICKER_PX_PER_M = 8000  # resolution of the printed top face (8 px per mm)

LABELS = ("APPLE", "BANANA", "LEMON", "ORANGE")
SLOTS_Y = (-0.18, -0.06, 0.06, 0.18)  # the objects stand in a row across the table, at x = 0
DEFAULT_PICK = "banana"


@dataclass(frozen=True)
class Placement:
    """One object on the table: its label, its tag, where its centre is and how it is turned."""

    label: str
    tag_id: int
    x: float
    y: float
    yaw: float  # radians, of the box's length (the tag's x axis) from the world's x axis


def placements(shuffle: int | None) -> list[Placement]:
    """The objects of a run. Without `shuffle` they stand in `LABELS` order with tags 0..3, tag
    end towards the arm; with a seed, labels, tags, slots and turns are drawn from it, so a
    run is still repeatable."""
    if shuffle is None:
        return [Placement(label, i, 0.0, y, 0.0) for i, (label, y) in enumerate(zip(LABELS, SLOTS_Y, strict=True))]
    rng = random.Random(shuffle)
    labels, tags = rng.sample(LABELS, len(LABELS)), rng.sample(range(10), len(LABELS))
    return [
        Placement(label, tag, rng.uniform(-0.03, 0.03), y + rng.uniform(-0.01, 0.01), rng.uniform(-0.5, 0.5))
        for label, tag, y in zip(labels, tags, SLOTS_Y, strict=True)
    ]


def pick() -> str:
    """The label the user asked for (`PICK`, any case), as printed on the stickers."""
    return os.environ.get("PICK", DEFAULT_PICK).strip().upper()


def shuffle_seed() -> int | None:
    """`SHUFFLE=<seed>` rearranges the table; unset, the objects stand in their default row."""
    seed = os.environ.get("SHUFFLE", "").strip()
    return int(seed) if seed else None


def camera_matrix() -> np.ndarray:
    """The pinhole intrinsics (K) of the rendered camera: square pixels, centred."""
    focal = (CAMERA_HEIGHT / 2) / math.tan(math.radians(CAMERA_FOV_DEG) / 2)
    return np.array([[focal, 0, (CAMERA_WIDTH - 1) / 2], [0, focal, (CAMERA_HEIGHT - 1) / 2], [0, 0, 1]])


def camera_in_world() -> np.ndarray:
    """The camera's mounting: its optical frame's pose in the world (4x4), as calibrated."""
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = CAMERA_AXES, CAMERA_EYE
    return pose


def sticker(tag_id: int, label: str) -> np.ndarray:
    """The printed top face of a box (RGB): the tag at one end, the label after it. Drawn as seen
    from above with the tag's x axis to the right, so the tag reads as OpenCV generates it."""
    px = STICKER_PX_PER_M
    face = np.full((round(BOX_WIDTH * px), round(BOX_LENGTH * px), 3), 255, np.uint8)
    side = round(TAG_SIDE * px)
    tag = cv2.aruco.generateImageMarker(cv2.aruco.getPredefinedDictionary(TAG_DICTIONARY), tag_id, side)
    top = (face.shape[0] - side) // 2
    left = round(BOX_WIDTH * px / 2) - side // 2
    face[top : top + side, left : left + side] = tag[..., None]
    _print_label(face, label, left + side // 2)
    return face


def _print_label(face: np.ndarray, label: str, tag_centre_px: int) -> None:
    """Writes `label` as large as fits in the label rectangle, centred in it."""
    px = STICKER_PX_PER_M
    x0, x1 = tag_centre_px + round(LABEL_X[0] * px), tag_centre_px + round(LABEL_X[1] * px)
    height = round((LABEL_Y[1] - LABEL_Y[0]) * px)
    font = cv2.FONT_HERSHEY_DUPLEX
    (w, h), _ = cv2.getTextSize(label, font, 1.0, 1)
    scale = min(0.9 * (x1 - x0) / w, 0.6 * height / h)
    thickness = round(2.5 * scale)  # strokes about as heavy as a bold print face
    (w, h), _ = cv2.getTextSize(label, font, scale, thickness)
    origin = (x0 + (x1 - x0 - w) // 2, (face.shape[0] + h) // 2)
    cv2.putText(face, label, origin, font, scale, (0, 0, 0), thickness, cv2.LINE_AA)

"""Reads the label printed beside each tag: the neural-network stage, on ONNX Runtime.

For each tag not read yet, the label's rectangle of the sticker (`scene.LABEL_X`, `LABEL_Y`,
in the tag's plane) is cut out of the camera image and straightened with the tag's homography,
so the text is upright and the same size however the object is turned; rapidocr's PP-OCRv4
text detector and recogniser (ONNX models inside its wheel) read it. A label read with
confidence is kept for that tag: stickers do not change.

`--yolo MODEL.onnx` labels tags with a YOLO-format object detector instead (`yolo.py`): each
tag gets the class of the best box around it, for a model trained on your objects.
"""

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import cv2
import nerve
import numpy as np
import scene
from nerve.msg import arm_msgs, sensor_msgs
from pairing import Pairing
from rapidocr_onnxruntime import RapidOCR
from spatial import stamp_ns
from yolo import Detection, YoloModel

MIN_SCORE = 0.8  # a label read with less confidence is read again on the next frame
CROP_PX_PER_M = 4000  # the straightened label: 4 px per mm, text about 90 px high

_HALF = scene.TAG_SIDE / 2
# The tag's corners in its plane (x along the object, y across it), metres, in OpenCV's order.
TAG_CORNERS = np.array([[-_HALF, _HALF], [_HALF, _HALF], [_HALF, -_HALF], [-_HALF, -_HALF]], np.float32)


class Labeller(Protocol):
    def __call__(self, rgb: np.ndarray, tags: list) -> dict[int, tuple[str, float]]:
        """Labels and confidences, by tag id, of the tags it could read."""
        ...


def label_crop(rgb: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """The label's rectangle beside the tag with these image corners, straightened: rows down
    the tag's -y, columns along its x, as the text was printed."""
    tag_to_image = cv2.getPerspectiveTransform(TAG_CORNERS, corners.reshape(4, 2).astype(np.float32))
    (x0, x1), (y0, y1) = scene.LABEL_X, scene.LABEL_Y
    k = CROP_PX_PER_M
    tag_to_crop = np.array([[k, 0, -x0 * k], [0, -k, y1 * k], [0, 0, 1]])
    size = (round((x1 - x0) * k), round((y1 - y0) * k))
    crop_to_image = tag_to_image @ np.linalg.inv(tag_to_crop)
    return cv2.warpPerspective(rgb, crop_to_image, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)


class TextReader:
    """rapidocr's detector and recogniser on each tag's straightened label."""

    def __init__(self):
        # One thread per model: the machine's other cores run the simulation and the rest. The
        # crop is small: no need to scale it up to rapidocr's default 736 pixels first.
        threads = {"intra_op_num_threads": 1, "inter_op_num_threads": 1}
        self.ocr = RapidOCR(**threads, det_limit_type="max", det_limit_side_len=480)

    def __call__(self, rgb: np.ndarray, tags: list) -> dict[int, tuple[str, float]]:
        read = {}
        for tag in tags:
            # The crop is upright already: no need for the classifier of upside-down text.
            lines, _ = self.ocr(label_crop(rgb, tag.corners), use_cls=False)
            if lines:
                _, text, score = max(lines, key=lambda line: line[2])
                read[tag.id] = (text.strip().upper(), float(score))
        return read


class ObjectClasses:
    """An object detector's classes (a `yolo.YoloModel`): each tag takes the class of the best
    box around it."""

    def __init__(self, model: Callable[[np.ndarray], list[Detection]]):
        self.model = model

    def __call__(self, rgb: np.ndarray, tags: list) -> dict[int, tuple[str, float]]:
        detections = self.model(rgb)
        read = {}
        for tag in tags:
            x, y = tag.corners.reshape(4, 2).mean(axis=0)
            around = [d for d in detections if d.contains(x, y)]
            if around:
                best = max(around, key=lambda d: d.score)
                read[tag.id] = (best.name.upper(), best.score)
        return read


class Reader:
    """Labels each frame's tags, reading only those it has no confident label for yet."""

    def __init__(self, labeller: Labeller):
        self.labeller = labeller
        self.known: dict[int, tuple[str, float]] = {}

    def label(self, rgb: np.ndarray, tags: list) -> list:
        unread = [tag for tag in tags if tag.id not in self.known]
        for tag_id, (text, score) in self.labeller(rgb, unread).items() if unread else ():
            if score >= MIN_SCORE:
                self.known[tag_id] = (text, score)
                print(f"reader: tag {tag_id} reads {text!r} ({score:.2f})", flush=True)
        for tag in tags:
            tag.label, tag.label_score = self.known.get(tag.id, ("", 0.0))
        return tags


def labeller_from_args() -> Labeller:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--yolo", type=Path, help="label tags with this YOLO-format ONNX model instead of reading text")
    parser.add_argument("--names", type=Path, help="the YOLO model's class names, one a line (else its metadata's)")
    args = parser.parse_args()
    if args.yolo is None:
        return TextReader()
    return ObjectClasses(YoloModel(args.yolo, args.names.read_text().split() if args.names else None))


def main() -> None:
    reader = Reader(labeller_from_args())
    node = nerve.Node()
    frames = Pairing("image", "tags")
    for event in node:
        if event["type"] == "STOP":
            break
        if event["type"] != "INPUT":
            continue
        message_type = sensor_msgs.Image if event["id"] == "image" else arm_msgs.TagArray
        message = message_type.from_arrow(event["value"])
        frame = frames.add(event["id"], stamp_ns(message.header), message)
        if frame is None:
            continue
        image, seen = frame["image"], frame["tags"]
        rgb = image.data.reshape(image.height, image.width, 3)
        tags = reader.label(rgb, list(seen.tags))
        node.send_output("objects", arm_msgs.TagArray(header=seen.header, tags=tags))


if __name__ == "__main__":
    main()

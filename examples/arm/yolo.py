"""Object detection with a YOLO-format ONNX model on ONNX Runtime: letterbox the frame, run the
model, decode its boxes, suppress overlaps.

Takes the two output layouts YOLO exporters write: Ultralytics' YOLOv8/v11 (1 x (4 + classes) x
boxes: centre x, centre y, width, height, then a score per class) and YOLOv5's (1 x boxes x
(5 + classes): the same with an objectness score before the classes). Class names come from the
model's metadata (Ultralytics stores `names` there) or from a file, one name a line.
"""

import ast
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import onnxruntime

DEFAULT_SIZE = 640  # the input side for a model whose input size is dynamic
PAD = 114  # the grey YOLO pads letterboxed images with


@dataclass(frozen=True)
class Letterbox:
    """How a frame was fitted into the model's input: scaled, then padded on both sides."""

    scale: float
    pad_x: float
    pad_y: float

    def to_frame(self, boxes: np.ndarray) -> np.ndarray:
        """Boxes (x0, y0, x1, y1) in the model's input back in the frame's pixels."""
        return (boxes - [self.pad_x, self.pad_y, self.pad_x, self.pad_y]) / self.scale


@dataclass(frozen=True)
class Detection:
    name: str
    score: float
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 in the frame's pixels

    def contains(self, x: float, y: float) -> bool:
        x0, y0, x1, y1 = self.box
        return x0 <= x <= x1 and y0 <= y <= y1


def letterbox(rgb: np.ndarray, height: int, width: int) -> tuple[np.ndarray, Letterbox]:
    """The frame scaled to fit `height` x `width` without distortion and centred on grey, as the
    NCHW float tensor (0 to 1) YOLO models take."""
    scale = min(height / rgb.shape[0], width / rgb.shape[1])
    resized = cv2.resize(
        rgb, (round(rgb.shape[1] * scale), round(rgb.shape[0] * scale)), interpolation=cv2.INTER_LINEAR
    )
    pad_x, pad_y = (width - resized.shape[1]) / 2, (height - resized.shape[0]) / 2
    canvas = np.full((height, width, 3), PAD, np.uint8)
    top, left = int(pad_y), int(pad_x)
    canvas[top : top + resized.shape[0], left : left + resized.shape[1]] = resized
    tensor = canvas.transpose(2, 0, 1)[None].astype(np.float32) / 255.0
    return tensor, Letterbox(scale, left, top)


def decode(output: np.ndarray, classes: int, min_score: float, max_overlap: float) -> tuple[np.ndarray, ...]:
    """Boxes (x0, y0, x1, y1, in the model's input), scores and class numbers of one image's
    output, best first, overlapping boxes of one class reduced to the best of them."""
    rows = output[0]
    if rows.shape[0] == 4 + classes and rows.shape[1] != 5 + classes:
        rows = rows.T  # YOLOv8's layout: one column per box
    if rows.shape[1] == 4 + classes:
        class_scores = rows[:, 4:]
    elif rows.shape[1] == 5 + classes:
        class_scores = rows[:, 5:] * rows[:, 4:5]  # YOLOv5: objectness times class score
    else:
        raise ValueError(
            f"a YOLO output of {classes} classes has rows of {4 + classes} or {5 + classes} values, not {rows.shape}"
        )
    numbers = class_scores.argmax(axis=1)
    scores = class_scores[np.arange(len(rows)), numbers]
    keep = scores >= min_score
    centre, size = rows[keep, :2], rows[keep, 2:4]
    boxes = np.hstack([centre - size / 2, centre + size / 2])
    kept = suppress(boxes, scores[keep], numbers[keep], max_overlap)
    return boxes[kept], scores[keep][kept], numbers[keep][kept]


def suppress(boxes: np.ndarray, scores: np.ndarray, classes: np.ndarray, max_overlap: float) -> np.ndarray:
    """Greedy non-maximum suppression within each class: the indices of the boxes kept, best
    first. Boxes of different classes never suppress each other (shifted apart by class)."""
    shifted = boxes + (classes[:, None] * (boxes.max(initial=0) + 1))
    order = np.argsort(-scores, kind="stable")
    kept = []
    while order.size:
        best, rest = order[0], order[1:]
        kept.append(best)
        order = rest[iou(shifted[best], shifted[rest]) <= max_overlap]
    return np.array(kept, dtype=np.int64)


def iou(box: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Intersection over union of one box (x0, y0, x1, y1) with each of `others`."""
    top_left = np.maximum(box[:2], others[:, :2])
    bottom_right = np.minimum(box[2:], others[:, 2:])
    inter = np.prod(np.clip(bottom_right - top_left, 0, None), axis=1)
    area = np.prod(box[2:] - box[:2])
    areas = np.prod(others[:, 2:] - others[:, :2], axis=1)
    return inter / (area + areas - inter)


def metadata_names(session: onnxruntime.InferenceSession) -> list[str] | None:
    """The class names an Ultralytics export keeps in the model's metadata (`{0: 'person', …}`)."""
    text = session.get_modelmeta().custom_metadata_map.get("names")
    if text is None:
        return None
    names = ast.literal_eval(text)
    return [names[i] for i in sorted(names)]


class YoloModel:
    """A YOLO-format detector loaded from an ONNX file; call it on RGB frames."""

    def __init__(self, path: Path, names: list[str] | None = None, min_score: float = 0.25, max_overlap: float = 0.45):
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # one core: the simulation and the other nodes share the rest
        self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        model_input = self.session.get_inputs()[0]
        self.input_name = model_input.name
        self.height, self.width = (d if isinstance(d, int) else DEFAULT_SIZE for d in model_input.shape[2:4])
        self.names = names or metadata_names(self.session)
        if not self.names:
            raise ValueError(f"{path}: no class names in the model's metadata; give them in a file (--names)")
        self.min_score, self.max_overlap = min_score, max_overlap

    def run(self, rgb: np.ndarray) -> tuple[np.ndarray, Letterbox]:
        """The model's first output for the letterboxed frame, and how the frame was fitted."""
        tensor, fitted = letterbox(rgb, self.height, self.width)
        return self.session.run(None, {self.input_name: tensor})[0], fitted

    def __call__(self, rgb: np.ndarray) -> list[Detection]:
        output, fitted = self.run(rgb)
        boxes, scores, numbers = decode(output, len(self.names), self.min_score, self.max_overlap)
        return [
            Detection(self.names[n], float(s), tuple(float(c) for c in box))
            for box, s, n in zip(fitted.to_frame(boxes), scores, numbers, strict=True)
        ]

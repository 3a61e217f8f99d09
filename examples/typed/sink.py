"""Checks that every image's square was found where the camera drew it, by both detectors."""

import os
from collections import Counter

from common import SIDE, square_at
from nerve import Node
from nerve.msg import detection_msgs


def main() -> None:
    expected = int(os.environ.get("EXPECTED_FRAMES", "0"))
    node = Node()
    checked: Counter[str] = Counter()
    for event in node:
        if event["type"] == "STOP":
            break
        if event["type"] != "INPUT":
            continue
        found = detection_msgs.DetectionArray.from_arrow(event["value"])
        frame = int(found.header.frame_id.rsplit("/", 1)[1])
        (box,) = found.detections
        where = f"{event['id']} detector, frame {frame}"
        assert (box.x, box.y) == square_at(frame), f"{where}: square found at {(box.x, box.y)}"
        assert (box.width, box.height) == (SIDE, SIDE) and box.label == "square", f"{where}: {box}"
        checked[event["id"]] += 1
    print(f"sink checked {checked['python']} detections from Python and {checked['rust']} from Rust")
    if expected and checked != Counter(python=expected, rust=expected):
        raise SystemExit(f"expected {expected} detections from each detector, got {dict(checked)}")


if __name__ == "__main__":
    main()

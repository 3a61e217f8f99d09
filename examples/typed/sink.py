"""Checks that every image's square was found where the camera drew it."""

import os

from common import SIDE, square_at
from nerve import Node
from nerve.msg import detection_msgs


def main() -> None:
    expected = int(os.environ.get("EXPECTED_FRAMES", "0"))
    node = Node()
    checked = 0
    for event in node:
        if event["type"] == "STOP":
            break
        if event["type"] != "INPUT":
            continue
        found = detection_msgs.DetectionArray.from_arrow(event["value"])
        frame = int(found.header.frame_id.rsplit("/", 1)[1])
        (box,) = found.detections
        assert (box.x, box.y) == square_at(frame), f"frame {frame}: square found at {(box.x, box.y)}"
        assert (box.width, box.height) == (SIDE, SIDE) and box.label == "square"
        checked += 1
    print(f"sink checked {checked} detections")
    if expected and checked != expected:
        raise SystemExit(f"expected {expected} detections, got {checked}")


if __name__ == "__main__":
    main()

"""Reads what the C++ nodes send with Python's nerve.msg: the images (the square where the camera
drew it) and the outlines, typed the same in both languages."""

import os

import numpy as np
from nerve import Node
from nerve.msg import geometry_msgs, sensor_msgs

HEIGHT, WIDTH, SIDE = 480, 640, 40  # as common.hpp


def square_at(frame: int) -> tuple[int, int]:
    """The square's top-left corner (x, y) in frame number ``frame`` (as common.hpp)."""
    return (frame * 8) % (WIDTH - SIDE), (frame * 5) % (HEIGHT - SIDE)


def main() -> None:
    expected = int(os.environ.get("EXPECTED_FRAMES", "0"))
    node = Node()
    images = outlines = 0
    for event in node:
        if event["type"] == "STOP":
            break
        if event["type"] != "INPUT":
            continue
        if event["id"] == "image":
            image = sensor_msgs.Image.from_arrow(event["value"])
            frame = int(image.header.frame_id.rsplit("/", 1)[1])
            pixels = image.data.reshape(image.height, image.width, 3)
            rows, cols = np.nonzero(pixels[..., 0] > 128)
            assert (int(cols.min()), int(rows.min())) == square_at(frame), f"image {frame}: square misplaced"
            images += 1
        else:
            outline = geometry_msgs.PolygonStamped.from_arrow(event["value"])
            frame = int(outline.header.frame_id.rsplit("/", 1)[1])
            x, y = square_at(frame)
            corners = [(p.x, p.y) for p in outline.polygon.points]
            assert corners == [(x, y), (x + SIDE - 1, y), (x + SIDE - 1, y + SIDE - 1), (x, y + SIDE - 1)], corners
            outlines += 1
    print(f"check read {images} images and {outlines} outlines from C++")
    if expected and (images, outlines) != (expected, expected):
        raise SystemExit(f"expected {expected} of each")


if __name__ == "__main__":
    main()

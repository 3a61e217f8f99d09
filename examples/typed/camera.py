"""A synthetic camera: a dark frame with one bright square, sent as sensor_msgs/msg/Image."""

import argparse

import numpy as np
from common import HEIGHT, SIDE, WIDTH, square_at
from nerve import Node
from nerve.msg import sensor_msgs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--frames", type=int, default=0, help="stop after this many frames (0: run until stopped)")
    args = parser.parse_args()

    node = Node()
    frame = 0
    for event in node:
        if event["type"] == "STOP":
            break
        if event["type"] != "INPUT":
            continue
        pixels = np.zeros((HEIGHT, WIDTH, 3), dtype=np.uint8)
        x, y = square_at(frame)
        pixels[y : y + SIDE, x : x + SIDE] = 255
        now = node.now_ns()
        header = {"stamp": {"sec": now // 10**9, "nanosec": now % 10**9}, "frame_id": f"camera/{frame}"}
        image = sensor_msgs.Image(
            header=header, height=HEIGHT, width=WIDTH, encoding="rgb8", step=WIDTH * 3, data=pixels
        )
        node.send_output("image", image)
        frame += 1
        if frame == args.frames:
            break
    print(f"camera sent {frame} images")


if __name__ == "__main__":
    main()

"""A synthetic camera: on every tick, renders a moving gradient straight into shared memory."""

import argparse

import numpy as np
from nerve import Node

HEIGHT, WIDTH = 480, 640


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--frames", type=int, default=0, help="stop after this many frames (0: run until stopped)")
    args = parser.parse_args()

    node = Node()
    rows = np.arange(HEIGHT, dtype=np.uint16)[:, None]
    cols = np.arange(WIDTH, dtype=np.uint16)[None, :]
    frame = 0
    for event in node:
        if event["type"] == "STOP":
            break
        if event["type"] != "INPUT":
            continue
        meta = {"frame": frame, "height": HEIGHT, "width": WIDTH, "encoding": "rgb8"}
        # Loan the block and draw into it: the image is written once, where readers will read it.
        with node.send_output_raw("image", HEIGHT * WIDTH * 3, meta) as sample:
            image = np.frombuffer(sample, dtype=np.uint8).reshape(HEIGHT, WIDTH, 3)
            image[..., 0] = (rows + frame) % 256
            image[..., 1] = (cols + frame) % 256
            image[..., 2] = frame % 256
            del image  # the send refuses while a view of the sample is open
        frame += 1
        if frame == args.frames:
            break
    print(f"camera sent {frame} frames")


if __name__ == "__main__":
    main()

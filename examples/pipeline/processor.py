"""Converts each RGB image to grayscale, reading the image in place from shared memory."""

import numpy as np
from nerve import Node

WEIGHTS = np.array([0.299, 0.587, 0.114], dtype=np.float32)


def main() -> None:
    node = Node()
    processed = 0
    for event in node:
        if event["type"] == "INPUT":
            meta = event["metadata"]
            image = event["value"].to_numpy(zero_copy_only=True).reshape(meta["height"], meta["width"], 3)
            gray = (image @ WEIGHTS).astype(np.uint8)
            # A 2-D array travels with its shape (Arrow's fixed-shape tensor).
            node.send_output("gray", gray, {**meta, "encoding": "mono8", "checksum": int(image.sum())})
            processed += 1
        elif event["type"] == "STOP":
            break
    print(f"processor converted {processed} frames")


if __name__ == "__main__":
    main()

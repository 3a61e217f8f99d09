"""Checks that every grayscale frame arrives, in order, and matches its source image."""

import logging
import os
import time

import numpy as np
from nerve import Node


def main() -> None:
    expected = int(os.environ.get("EXPECTED_FRAMES", "0"))
    node = Node()
    next_frame = 0
    latest_image = None
    started = time.monotonic()
    for event in node:
        if event["type"] == "INPUT" and event["id"] == "image":
            # queue_size 1: always the newest camera frame, never a stale one.
            latest_image = event["metadata"]["frame"]
        elif event["type"] == "INPUT" and event["id"] == "gray":
            meta = event["metadata"]
            gray = event["value"].to_numpy_ndarray()[0]  # a view of shared memory, shape and all
            assert meta["frame"] == next_frame, f"frame {meta['frame']} arrived, expected {next_frame}"
            assert gray.shape == (meta["height"], meta["width"]), gray.shape
            assert gray.dtype == np.uint8 and meta["checksum"] > 0
            next_frame += 1
            if next_frame % 30 == 0:
                logging.info("%d frames, %.1f fps", next_frame, next_frame / (time.monotonic() - started))
        elif event["type"] == "INPUT_CLOSED":
            print(f"input {event['id']} closed")
        elif event["type"] == "STOP":
            break
    print(f"sink checked {next_frame} frames in order (newest camera frame seen: {latest_image})")
    if expected and next_frame != expected:
        raise SystemExit(f"expected {expected} frames, got {next_frame}")


if __name__ == "__main__":
    main()

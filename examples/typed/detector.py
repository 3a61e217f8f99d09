"""Finds the bright square in each sensor_msgs/msg/Image and sends where it is."""

import numpy as np
from nerve import Node
from nerve.msg import detection_msgs, sensor_msgs


def main() -> None:
    node = Node()
    for event in node:
        if event["type"] == "STOP":
            break
        if event["type"] != "INPUT":
            continue
        image = sensor_msgs.Image.from_arrow(event["value"])
        # A view of the camera's block in shared memory: no copy on the way in.
        pixels = image.data.reshape(image.height, image.width, 3)
        rows, cols = np.nonzero(pixels[..., 0] > 128)
        found = []
        if rows.size:
            found.append(
                detection_msgs.Detection(
                    label="square",
                    score=1.0,
                    x=int(cols.min()),
                    y=int(rows.min()),
                    width=int(cols.max() - cols.min() + 1),
                    height=int(rows.max() - rows.min() + 1),
                )
            )
        node.send_output("detections", detection_msgs.DetectionArray(header=image.header, detections=found))


if __name__ == "__main__":
    main()

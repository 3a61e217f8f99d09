"""Benchmark node for the dashboard's cost (the `view` scenario): a camera and a lidar in one
producer, and a consumer that times both.

    view_node.py producer WIDTH HEIGHT POINTS IMAGES RATE_HZ CLOUD_EVERY READY GO
    view_node.py consumer FOLDER

The producer sends IMAGES ``sensor_msgs/msg/Image`` (WIDTH x HEIGHT rgb8) on ``image`` at
RATE_HZ, and a ``sensor_msgs/msg/PointCloud2`` of POINTS points (x, y, z float32 in 16 bytes) on
``cloud`` with every CLOUD_EVERY-th image, half an image period after it, so the two never
queue behind each other. It stamps the first 8 bytes of the message's ``data`` just before it
builds and sends the message (as benches/nodes/types_node.py stamps its typed images). Once its
node is up it creates READY, then waits for GO: the harness opens the dashboard's page
in between, so that every message is sent with the page open.

The consumer reads each message's ``data`` as a numpy view (``Type.from_arrow(value).data``),
reads the stamp from it with ``struct`` and takes the time: FOLDER/image.txt and
FOLDER/cloud.txt get one ``sent received`` line (ns) per message.
"""

import os
import sys
import time

import numpy as np
from node_common import STAMP, paced, view_messages

#: How long the producer waits for GO at most, in seconds: the harness's own waits are shorter.
GO_TIMEOUT = 600


def wait_for(path: str) -> None:
    end = time.monotonic() + GO_TIMEOUT
    while not os.path.exists(path):
        if time.monotonic() > end:
            raise SystemExit(f"{path} did not appear within {GO_TIMEOUT} s")
        time.sleep(0.01)


def producer(width: int, height: int, points: int, images: int, rate_hz: float, cloud_every: int, ready: str, go: str):
    from nerve import Node

    node = Node()
    image_message, cloud_message, image_head, cloud_head = view_messages(width, height, points)
    image_stamp, cloud_stamp = image_head[:8].view("<i8"), cloud_head[:8].view("<i8")
    with open(ready, "w"):
        pass
    wait_for(go)
    # Two ticks per image period: images on the even ones, a cloud on an odd one.
    for tick in paced(2 * images, 2 * rate_hz):
        if tick % 2 == 0:
            image_stamp[0] = time.monotonic_ns()
            node.send_output("image", image_message())
        elif tick % (2 * cloud_every) == 1:
            cloud_stamp[0] = time.monotonic_ns()
            node.send_output("cloud", cloud_message())


def consumer(folder: str) -> None:
    from nerve import Node
    from nerve.msg import sensor_msgs

    types = {"image": sensor_msgs.Image, "cloud": sensor_msgs.PointCloud2}
    stamps: dict[str, list[tuple[int, int]]] = {kind: [] for kind in types}
    node = Node()
    for event in node:
        if event["type"] == "INPUT":
            data = types[event["id"]].from_arrow(event["value"]).data
            sent = STAMP.unpack_from(data)[0]
            stamps[event["id"]].append((sent, time.monotonic_ns()))
            del event, data
        elif event["type"] == "STOP":
            break
    for kind, pairs in stamps.items():
        np.savetxt(os.path.join(folder, f"{kind}.txt"), np.array(pairs, dtype=np.int64).reshape(-1, 2), fmt="%d")


def main() -> None:
    role, args = sys.argv[1], sys.argv[2:]
    if role == "producer":
        width, height, points, images = (int(a) for a in args[:4])
        producer(width, height, points, images, float(args[4]), int(args[5]), args[6], args[7])
    elif role == "consumer":
        consumer(args[0])
    else:
        raise SystemExit(f"unknown role {role}")


if __name__ == "__main__":
    main()

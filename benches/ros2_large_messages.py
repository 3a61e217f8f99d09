"""How many messages of each size a `ros2:` publish bridge gets through to an rclpy subscriber
(Fast DDS over UDP), with this machine's socket buffer settings.

    ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST python -m benches.ros2_large_messages

A nerve node publishes a ``sensor_msgs/Image`` of each size (1920 wide, rgb8) at about 3 Hz
through a reliable bridge (keep last 4); an rclpy subscriber counts what arrives in 6 s. The
counts are printed beside ``net.core.rmem_default``, which is what Fast DDS's UDP socket gets.
Everything stays on loopback: the bridge and rclpy are told so by the variable above.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROWS = (10, 100, 400, 1080)  # 57.6 kB, 576 kB, 2,304 kB, 6,221 kB
WIDTH = 1920

SOURCE = """
    import os
    import numpy as np
    from nerve import Node
    from nerve.msg import sensor_msgs

    rows = int(os.environ["ROWS"])
    node = Node()
    frame = np.zeros(rows * {width} * 3, dtype=np.uint8)
    for event in node:
        if event["type"] == "INPUT":
            image = sensor_msgs.Image(height=rows, width={width}, encoding="rgb8", step={width} * 3, data=frame)
            node.send_output("image", image)
"""

DATAFLOW = """
nodes:
  - id: source
    path: source.py
    inputs: {tick: dora/timer/millis/300}
    outputs: [image]
    output_types: {image: sensor_msgs/Image}
  - id: to_ros
    ros2:
      topic: /bench/image
      message_type: sensor_msgs/Image
      direction: publish
      qos: {reliable: true, keep_last: 4}
    inputs: {image: source/image}
"""

COUNTER = """
import time
import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image

rclpy.init()
node = rclpy.create_node("bench_sink")
got = []
qos = QoSProfile(depth=4, reliability=ReliabilityPolicy.RELIABLE)
node.create_subscription(Image, "/bench/image", lambda m: got.append(1), qos)
while node.count_publishers("/bench/image") == 0:
    rclpy.spin_once(node, timeout_sec=0.1)
end = time.monotonic() + 6
while time.monotonic() < end:
    rclpy.spin_once(node, timeout_sec=0.05)
print(len(got))
"""


def main() -> None:
    if os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE") != "LOCALHOST":
        sys.exit("set ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST: this measurement stays on loopback")
    rmem = Path("/proc/sys/net/core/rmem_default").read_text().strip()
    print(f"net.core.rmem_default = {rmem} bytes")
    print("| message size | received in 6 s (about 20 sent) |\n|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "source.py").write_text(textwrap.dedent(SOURCE.format(width=WIDTH)))
        (work / "dataflow.yml").write_text(DATAFLOW)
        (work / "counter.py").write_text(COUNTER)
        for rows in ROWS:
            env = {**os.environ, "ROWS": str(rows)}
            run = subprocess.Popen(
                [sys.executable, "-m", "nerve", "run", str(work / "dataflow.yml")],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                counted = subprocess.run(
                    [sys.executable, str(work / "counter.py")], capture_output=True, text=True, timeout=120, check=True
                )
            finally:
                run.send_signal(signal.SIGINT)
                run.wait(timeout=60)
            print(f"| {rows * WIDTH * 3 / 1e3:,.1f} kB | {counted.stdout.strip()} |")


if __name__ == "__main__":
    main()

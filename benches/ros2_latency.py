"""One-way latency between rclpy and nerve through `nerve ros2 bridge`, beside rclpy → rclpy and
nerve → nerve, in the same run.

    ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST python -m benches.ros2_latency [--rate HZ] [--sizes 1080p ...]

Each case sends ``sensor_msgs/Image`` messages of 8 B, 1 MiB and a 1080p rgb8 frame at 50 Hz
(``--rate`` and ``--sizes`` choose others) from one process to another. The sender stamps each
message with ``CLOCK_MONOTONIC`` (one clock for every process of the machine) in
``header.stamp`` and numbers it in ``header.frame_id``; the receiver takes the difference on
arrival. The first messages, sent while the graph is still matching, are not counted. Paths:

- ``rclpy → rclpy``: ROS 2 alone (Fast DDS, its default middleware);
- ``rclpy → nerve``: an rclpy publisher, the bridge, a nerve subscriber (Python);
- ``nerve → rclpy``: a nerve publisher (Python), the bridge, an rclpy subscription;
- ``nerve → nerve``: nerve alone (shared memory).

Everything stays on loopback: the bridge and rclpy are told so by the variable above.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

SIZES = {"8 B": (1, 8), "1 MiB": (1, 1 << 20), "1080p": (1080, 1920 * 3)}  # rows, bytes per row
RATE_HZ = 50
WARMUP = 25
COUNT = 250
TOPIC = "bench/image"

COMMON = """
import json, sys, time
ROWS, STEP, WARMUP, COUNT, RATE = (int(a) for a in sys.argv[1:6])
TOPIC = "{topic}"

def stamp():
    now = time.monotonic_ns()
    return now // 1_000_000_000, now % 1_000_000_000

# An rgb8 image when the row holds whole pixels, else one byte per pixel.
WIDTH, ENCODING = (STEP // 3, "rgb8") if STEP % 3 == 0 else (STEP, "mono8")

def report(latencies):
    print(json.dumps(latencies), flush=True)
"""

RCLPY_SEND = """
import array
import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image

rclpy.init()
node = rclpy.create_node("bench_sender")
pub = node.create_publisher(Image, "/" + TOPIC, QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
while pub.get_subscription_count() == 0:
    rclpy.spin_once(node, timeout_sec=0.05)
data = array.array("B", bytes(ROWS * STEP))  # taken as it is (a numpy array is copied element-wise)
start = time.monotonic()
for i in range(WARMUP + COUNT):
    time.sleep(max(0.0, start + i / RATE - time.monotonic()))
    message = Image(height=ROWS, width=WIDTH, encoding=ENCODING, step=STEP)
    message.data = data
    message.header.frame_id = str(i)
    message.header.stamp.sec, message.header.stamp.nanosec = stamp()
    pub.publish(message)
time.sleep(1)
"""

RCLPY_RECEIVE = """
import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image

rclpy.init()
node = rclpy.create_node("bench_receiver")
latencies = []
last = [time.monotonic()]

def on_image(message):
    now = time.monotonic_ns()
    last[0] = time.monotonic()
    if int(message.header.frame_id) >= WARMUP:
        latencies.append(now - message.header.stamp.sec * 1_000_000_000 - message.header.stamp.nanosec)

node.create_subscription(Image, "/" + TOPIC, on_image, QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
print("ready", flush=True)
# Until every counted message came, or none came for 5 s (the rest were lost).
while len(latencies) < COUNT and time.monotonic() - last[0] < 5:
    rclpy.spin_once(node, timeout_sec=0.05)
report(latencies)
"""

NERVE_SEND = """
import numpy as np
import nerve
from nerve.msg import builtin_interfaces, sensor_msgs, std_msgs

pub = nerve.Publisher(TOPIC)
pub.wait_for_subscribers(1)
data = np.zeros(ROWS * STEP, dtype=np.uint8)
start = time.monotonic()
for i in range(WARMUP + COUNT):
    time.sleep(max(0.0, start + i / RATE - time.monotonic()))
    sec, nanosec = stamp()
    header = std_msgs.Header(frame_id=str(i), stamp=builtin_interfaces.Time(sec=sec, nanosec=nanosec))
    pub.send(sensor_msgs.Image(header=header, height=ROWS, width=WIDTH, encoding=ENCODING, step=STEP, data=data))
time.sleep(1)
"""

NERVE_RECEIVE = """
import nerve

sub = nerve.Subscriber(TOPIC, queue_size=10)
print("ready", flush=True)
latencies = []
while len(latencies) < COUNT:
    message = sub.recv(timeout=5)
    now = time.monotonic_ns()
    if message is None:
        break  # the rest were lost
    header = message["value"].field("header")
    stamp = header.field("stamp")
    if int(header.field("frame_id")[0].as_py()) >= WARMUP:
        latencies.append(now - stamp.field("sec")[0].as_py() * 1_000_000_000 - stamp.field("nanosec")[0].as_py())
report(latencies)
"""

PATHS = {
    "rclpy → rclpy": (RCLPY_SEND, RCLPY_RECEIVE, False),
    "rclpy → nerve": (RCLPY_SEND, NERVE_RECEIVE, True),
    "nerve → rclpy": (NERVE_SEND, RCLPY_RECEIVE, True),
    "nerve → nerve": (NERVE_SEND, NERVE_RECEIVE, False),
}


def percentile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1e3


def measure(work: Path, path: str, rows: int, step: int, rate: int) -> list[int]:
    """The counted latencies (ns) of one path and size."""
    send, receive, bridged = PATHS[path]
    common = textwrap.dedent(COMMON.format(topic=TOPIC))
    (work / "send.py").write_text(common + textwrap.dedent(send))
    (work / "receive.py").write_text(common + textwrap.dedent(receive))
    args = [str(a) for a in (rows, step, WARMUP, COUNT, rate)]
    bridge = None
    if bridged:
        bridge = subprocess.Popen(
            [sys.executable, "-m", "nerve", "ros2", "bridge", "--topics", TOPIC],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    receiver = subprocess.Popen([sys.executable, str(work / "receive.py"), *args], stdout=subprocess.PIPE, text=True)
    try:
        assert receiver.stdout is not None
        receiver.stdout.readline()  # ready: the sender waits for it to match
        sender = subprocess.Popen([sys.executable, str(work / "send.py"), *args], stdout=subprocess.DEVNULL)
        out, _ = receiver.communicate(timeout=300)
        sender.wait(timeout=60)
    finally:
        for proc in (receiver, bridge):
            if proc and proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                proc.wait(timeout=60)
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description="rclpy ↔ nerve latency through the ROS 2 bridge")
    parser.add_argument("--rate", type=int, default=RATE_HZ, help="messages per second (default %(default)s)")
    parser.add_argument("--sizes", nargs="+", choices=SIZES, default=list(SIZES), help="message sizes to send")
    options = parser.parse_args()
    if os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE") != "LOCALHOST":
        sys.exit("set ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST: this measurement stays on loopback")
    print(f"{COUNT} messages per case at {options.rate} Hz, one-way latency in µs\n")
    print("| message | path | p50 | p99 | max | received |\n|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        for size in options.sizes:
            rows, step = SIZES[size]
            for path in PATHS:
                got = measure(Path(folder), path, rows, step, options.rate)
                if got:
                    cells = f"{percentile(got, 0.5):,.0f} | {percentile(got, 0.99):,.0f} | {max(got) / 1e3:,.0f}"
                else:
                    cells = "- | - | -"
                print(f"| {size} | {path} | {cells} | {len(got)}/{COUNT} |", flush=True)


if __name__ == "__main__":
    main()

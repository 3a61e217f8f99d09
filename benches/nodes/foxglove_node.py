"""Benchmark node of the `foxglove` scenario: the view scenario's camera and lidar, sent until told
to stop, for a Foxglove client to receive through ``nerve foxglove`` or through foxglove-sdk's
own WebSocket server.

    foxglove_node.py nerve WIDTH HEIGHT POINTS RATE_HZ CLOUD_EVERY READY STOP
    foxglove_node.py encode WIDTH HEIGHT POINTS FOLDER
    foxglove_node.py sdk RATE_HZ CLOUD_EVERY FOLDER IMAGE_TOPIC CLOUD_TOPIC READY STOP

``nerve`` is a dataflow node: it sends a ``sensor_msgs/msg/Image`` (WIDTH x HEIGHT rgb8) on
``image`` at RATE_HZ and a ``sensor_msgs/msg/PointCloud2`` of POINTS points (x, y, z float32 in
16 bytes) on ``cloud`` with every CLOUD_EVERY-th image, half an image period after it, as
benches/nodes/view_node.py does; the bridge, a process of its own, encodes them as CDR for its
client.

``encode`` writes the CDR of the same two messages (``nerve.msg.to_cdr``: the bytes the bridge
sends) into FOLDER/image.cdr and FOLDER/cloud.cdr, and their ``ros2msg`` schemas into
FOLDER/image.msg and FOLDER/cloud.msg, once, before the run.

``sdk`` is foxglove-sdk's server in the producing process: it reads those files, serves on a free
port of 127.0.0.1 and logs the pre-encoded bytes on two ``cdr`` channels, IMAGE_TOPIC and
CLOUD_TOPIC, on the same schedule (``Channel.log``). Nothing is encoded while it runs; the one
copy per message (the Python API takes ``bytes``, and the stamp changes) happens with a client
and without one alike.

Every message carries in the first 16 bytes of its ``data`` the ``CLOCK_MONOTONIC`` stamp taken
just before it is handed over (``send_output``, ``Channel.log``) and its sequence number in its
stream (little-endian int64 each). Both senders create READY just before they send (the node
writes its process id into it, the SDK's process its server's port) and stop at the first tick
after STOP exists (at the latest after an hour).
"""

import os
import struct
import sys
import time

from node_common import paced, view_messages

HEADER = struct.Struct("<qq")  # stamp, sequence number
#: Longest a sender runs, in seconds, if STOP never appears.
LIFETIME = 3600
IMAGE, CLOUD = "sensor_msgs/msg/Image", "sensor_msgs/msg/PointCloud2"
#: The types each schema is made of, in the order of `ros2msg` (the message's own first).
DEPENDS = {
    IMAGE: (IMAGE, "std_msgs/msg/Header", "builtin_interfaces/msg/Time"),
    CLOUD: (CLOUD, "std_msgs/msg/Header", "builtin_interfaces/msg/Time", "sensor_msgs/msg/PointField"),
}
SEPARATOR = "=" * 80
#: What `encode` writes where the stamp goes, to find that place in the CDR.
MARK = 0x6E65727665_666F78


def schedule(rate_hz: float, cloud_every: int, ready: str, stop: str, said: str = ""):
    """Yields "image" or "cloud" on the view scenario's schedule until STOP exists: two ticks per
    image period, images on the even ones, a cloud on an odd one. READY appears (holding `said`)
    just before the first."""
    with open(ready + ".tmp", "w") as f:
        f.write(said)
    os.replace(ready + ".tmp", ready)
    for tick in paced(round(2 * rate_hz * LIFETIME), 2 * rate_hz):
        if os.path.exists(stop):
            return
        if tick % 2 == 0:
            yield "image"
        elif tick % (2 * cloud_every) == 1:
            yield "cloud"


def nerve_sender(width: int, height: int, points: int, rate_hz: float, cloud_every: int, ready: str, stop: str):
    from nerve import Node

    node = Node()
    image_message, cloud_message, image_head, cloud_head = view_messages(width, height, points)
    make = {"image": image_message, "cloud": cloud_message}
    head = {"image": image_head, "cloud": cloud_head}
    seq = {"image": 0, "cloud": 0}
    for stream in schedule(rate_hz, cloud_every, ready, stop, str(os.getpid())):
        HEADER.pack_into(head[stream], 0, time.monotonic_ns(), seq[stream])
        node.send_output(stream, make[stream]())
        seq[stream] += 1


def encode(width: int, height: int, points: int, folder: str) -> None:
    import nerve.msg

    image_message, cloud_message, image_head, cloud_head = view_messages(width, height, points)
    for stream, make, head, name in (
        ("image", image_message, image_head, IMAGE),
        ("cloud", cloud_message, cloud_head, CLOUD),
    ):
        # Where the data's first bytes lie in the CDR: found by a mark written there.
        HEADER.pack_into(head, 0, MARK, MARK)
        cdr = nerve.msg.to_cdr(make(), name)
        offset = cdr.find(HEADER.pack(MARK, MARK))
        if offset < 0 or cdr.find(HEADER.pack(MARK, MARK), offset + 1) >= 0:
            raise SystemExit(f"the {stream}'s data is not found once in its CDR")
        HEADER.pack_into(head, 0, 0, 0)
        with open(os.path.join(folder, f"{stream}.cdr"), "wb") as f:
            f.write(nerve.msg.to_cdr(make(), name))
        with open(os.path.join(folder, f"{stream}.offset"), "w") as f:
            f.write(str(offset))
        with open(os.path.join(folder, f"{stream}.msg"), "w") as f:
            f.write(ros2msg(name))


def ros2msg(name: str) -> str:
    """The `ros2msg` schema of `name` (as MCAP and Foxglove read it): its definition, then each
    type it uses after a separator, from the interface files shipped with nerve."""
    import nerve

    # The installed package's copy, else this repository's.
    installed = os.path.join(os.path.dirname(nerve.__file__), "rust")
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    root = next(
        path
        for base in (installed, here)
        if os.path.isdir(path := os.path.join(base, "crates", "nerve-types", "interfaces"))
    )
    parts = []
    for i, type_name in enumerate(DEPENDS[name]):
        package, kind, short = type_name.split("/")
        with open(os.path.join(root, package, kind, f"{short}.msg")) as f:
            text = f.read().strip()
        parts.append(text if i == 0 else f"{SEPARATOR}\nMSG: {package}/{short}\n{text}")
    return "\n".join(parts) + "\n"


def sdk_sender(rate_hz: float, cloud_every: int, folder: str, topics: tuple[str, str], ready: str, stop: str):
    import foxglove
    from foxglove import Channel, Schema

    context = foxglove.Context()
    server = foxglove.start_server(name="foxglove-sdk", host="127.0.0.1", port=0, context=context)
    channels, payloads, offsets = {}, {}, {}
    for stream, topic, name in (("image", topics[0], IMAGE), ("cloud", topics[1], CLOUD)):
        with open(os.path.join(folder, f"{stream}.cdr"), "rb") as f:
            payloads[stream] = bytearray(f.read())
        with open(os.path.join(folder, f"{stream}.msg"), "rb") as f:
            schema = Schema(name=name, encoding="ros2msg", data=f.read())
        channels[stream] = Channel(topic, schema=schema, message_encoding="cdr", context=context)
        with open(os.path.join(folder, f"{stream}.offset")) as f:
            offsets[stream] = int(f.read())
    seq = {"image": 0, "cloud": 0}
    try:
        for stream in schedule(rate_hz, cloud_every, ready, stop, str(server.port)):
            payload = payloads[stream]
            HEADER.pack_into(payload, offsets[stream], time.monotonic_ns(), seq[stream])
            channels[stream].log(bytes(payload))
            seq[stream] += 1
    finally:
        server.stop()


def main() -> None:
    role, args = sys.argv[1], sys.argv[2:]
    if role == "nerve":
        width, height, points = (int(a) for a in args[:3])
        nerve_sender(width, height, points, float(args[3]), int(args[4]), args[5], args[6])
    elif role == "encode":
        encode(int(args[0]), int(args[1]), int(args[2]), args[3])
    elif role == "sdk":
        sdk_sender(float(args[0]), int(args[1]), args[2], (args[3], args[4]), args[5], args[6])
    else:
        raise SystemExit(f"unknown role {role}")


if __name__ == "__main__":
    main()

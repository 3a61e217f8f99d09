"""`nerve foxglove` and `nerve run --foxglove` against clients no one here wrote.

The Foxglove WebSocket protocol (subprotocol ``foxglove.sdk.v1``) is spoken by the ``websockets``
package, decoded by ``mcap-ros2-support``'s CDR decoder, and compared with the server of the
``foxglove-sdk`` package.
"""

from __future__ import annotations

import json
import os
import queue
import re
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import nerve
import nerve.msg
import numpy as np
import pytest
from conftest import Dataflows, free_port, nerve_cmd, unique_topic, wait_for
from mcap.records import Schema
from mcap_ros2.decoder import DecoderFactory
from nerve.msg import geometry_msgs, sensor_msgs
from websockets.sync.client import ClientConnection, connect

SUBPROTOCOL = "foxglove.sdk.v1"

# Binary opcodes of the protocol, server to client and client to server.
MESSAGE_DATA, TIME, SERVICE_CALL_RESPONSE = 1, 2, 3
CLIENT_MESSAGE_DATA, SERVICE_CALL_REQUEST = 1, 2


class Client:
    """A Foxglove protocol client: JSON ops and binary frames, read by a thread into a queue."""

    def __init__(self, port: int) -> None:
        self.stack = ExitStack()
        self.ws: ClientConnection = self.stack.enter_context(
            connect(f"ws://127.0.0.1:{port}", subprotocols=[SUBPROTOCOL], open_timeout=30)
        )
        assert self.ws.subprotocol == SUBPROTOCOL
        self.inbox: queue.Queue[str | bytes] = queue.Queue()
        self.seen: list[dict[str, Any]] = []  # every JSON op, in order
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    @classmethod
    def once_advertised(cls, port: int, *topics: str) -> Client:
        """A client that connects once the channels of ``topics`` exist.

        The foxglove SDK's server sends a client the advertisement of a channel added while it
        is connected a moment before it records the channel as the client's
        (``advertise_channels`` in its ``connected_client.rs``): a subscription sent at once may
        be refused with ``Unknown channel ID``. The channels that exist when a client connects
        are recorded before its first message is read.
        """
        probe = cls(port)
        try:
            for topic in topics:
                probe.channel(topic)
        finally:
            probe.close()
        return cls(port)

    def _read(self) -> None:
        try:
            for frame in self.ws:
                self.inbox.put(frame)
        except Exception:  # the connection closed: the test ends with it
            pass

    def close(self) -> None:
        self.stack.close()

    def send(self, op: str, **fields: Any) -> None:
        self.ws.send(json.dumps({"op": op, **fields}))

    def next(self, want: Callable[[str | bytes], Any], timeout: float = 30, what: str = "a frame") -> Any:
        """The first frame for which ``want`` returns something (that something); JSON ops read on
        the way are kept in ``seen``."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                ops = [m if m["op"] == "status" else m["op"] for m in self.seen]
                pytest.fail(f"no {what} within {timeout} s; JSON ops seen: {ops}")
            try:
                frame = self.inbox.get(timeout=left)
            except queue.Empty:
                continue
            if isinstance(frame, str):
                self.seen.append(json.loads(frame))
            found = want(frame)
            if found is not None:
                return found

    def op(self, name: str, check: Callable[[dict[str, Any]], bool] = lambda _: True, timeout: float = 30) -> Any:
        def want(frame: str | bytes) -> Any:
            if isinstance(frame, str):
                message = json.loads(frame)
                if message["op"] == name and check(message):
                    return message
            return None

        return self.next(want, timeout, what=f"`{name}`")

    def channel(self, topic: str, timeout: float = 30) -> dict[str, Any]:
        """The channel advertised for ``topic`` (already seen, or the next advertise with it)."""
        for message in self.seen:
            for channel in message.get("channels", []) if message["op"] == "advertise" else []:
                if channel["topic"] == topic:
                    return channel
        found = self.op("advertise", lambda m: any(c["topic"] == topic for c in m["channels"]), timeout)
        return next(c for c in found["channels"] if c["topic"] == topic)

    def message(self, subscription: int, timeout: float = 30) -> bytes:
        """The payload of the next message of ``subscription``."""

        def want(frame: str | bytes) -> bytes | None:
            if isinstance(frame, bytes) and frame[0] == MESSAGE_DATA:
                sub, _stamp = struct.unpack_from("<IQ", frame, 1)
                if sub == subscription:
                    return frame[13:]
            return None

        return self.next(want, timeout, what=f"a message of subscription {subscription}")


@contextmanager
def serving(*args: str) -> Iterator[int]:
    """``nerve foxglove ARGS`` on a free port of 127.0.0.1; yields the port."""
    proc = subprocess.Popen(nerve_cmd("foxglove", "--port", "0", *args), stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        lines = []
        while not (m := re.search(r"ws://127\.0\.0\.1:(\d+)", lines[-1] if lines else "")):
            lines.append(proc.stderr.readline())
            assert lines[-1], "".join(lines)  # the command ended without serving
        # Read on, so that the server never waits on a full pipe.
        threading.Thread(target=lambda: lines.extend(proc.stderr or []), daemon=True).start()
        yield int(m.group(1))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert proc.returncode == 0, "".join(lines)


@pytest.fixture
def bridge() -> Iterator[int]:
    with serving() as port:
        yield port


def subscribers(topic: str, run: str = "-") -> str:
    """The ENDPOINTS cell of ``nerve topic list --verbose`` for ``topic`` of ``run``."""
    out = subprocess.run(nerve_cmd("topic", "list", "--verbose"), capture_output=True, text=True, timeout=60).stdout
    for line in out.splitlines()[1:]:
        cells = line.split(maxsplit=2)
        if cells[:2] == [topic, run]:
            return cells[2]
    return ""


def test_a_topic_is_a_json_channel_that_flows_only_while_subscribed(bridge: int) -> None:
    topic = unique_topic("foxglove")
    code = (
        "import sys, time, numpy as np, nerve\n"
        f"p = nerve.Publisher({topic!r})\n"
        "i = 0\n"
        "while True:\n"
        "    p.send(np.array([i, i + 1], dtype=np.int32), {'i': i}); i += 1; time.sleep(0.02)\n"
    )
    publisher = subprocess.Popen([sys.executable, "-c", code])
    client = Client.once_advertised(bridge, topic)
    try:
        info = client.op("serverInfo")
        assert info["name"] == "nerve"
        assert {"clientPublish", "services", "parameters"} <= set(info["capabilities"])
        assert set(info["supportedEncodings"]) == {"json", "cdr"}
        channel = client.channel(topic)
        assert (channel["encoding"], channel["schemaEncoding"]) == ("json", "jsonschema")
        # Nothing is asked of the topic while no client subscribes: the bridge is no subscriber.
        assert subscribers(topic).startswith("1 publisher") and "0 subscribers" in subscribers(topic)
        client.send("subscribe", subscriptions=[{"id": 7, "channelId": channel["id"]}])
        message = json.loads(client.message(7))
        assert set(message) == {"timestamp", "parameters", "value"}
        assert message["value"] == [message["parameters"]["i"], message["parameters"]["i"] + 1]
        client.send("unsubscribe", subscriptionIds=[7])
        wait_for(lambda: "0 subscribers" in subscribers(topic), what="the bridge to unsubscribe")
        # Gone publisher, gone channel.
        publisher.kill()
        client.op("unadvertise", lambda m: channel["id"] in m["channelIds"])
    finally:
        client.close()
        publisher.kill()
        publisher.communicate(timeout=30)


def test_a_slow_client_loses_the_oldest_messages_and_the_publisher_never_waits() -> None:
    topic = unique_topic("fox-slow")
    sent = 2000
    # 2000 messages of 20000 values each, about 160 MB of JSON: more than the socket buffers
    # and the bridge's queues of 8 hold.
    code = (
        "import sys, numpy as np, nerve\n"
        f"p = nerve.Publisher({topic!r})\n"
        "assert p.wait_for_subscribers(1, timeout=60)\n"
        f"for i in range({sent}):\n"
        "    p.send(np.full(20000, i % 256, dtype=np.uint8), {'i': i})\n"
        "print('sent', flush=True)\n"
        "sys.stdin.read()\n"  # lives on, so that its channel does while the client reads
    )
    publisher = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert publisher.stdout is not None
        with serving("--queue-size", "8") as port:
            Client.once_advertised(port, topic).close()
            # A client that reads nothing while the messages are sent: the websockets connection
            # stops taking frames from the socket once 16 are waiting.
            with connect(f"ws://127.0.0.1:{port}", subprotocols=[SUBPROTOCOL], open_timeout=30) as ws:
                channel = None
                while channel is None:
                    frame = json.loads(ws.recv(timeout=30))
                    if frame["op"] == "advertise":
                        channel = next((c for c in frame["channels"] if c["topic"] == topic), None)
                ws.send(json.dumps({"op": "subscribe", "subscriptions": [{"id": 1, "channelId": channel["id"]}]}))
                # The publisher sends everything while the client does not read.
                assert publisher.stdout.readline().strip() == "sent"
                received = []
                while not received or received[-1] != sent - 1:
                    frame = ws.recv(timeout=30)
                    if isinstance(frame, bytes) and frame[0] == MESSAGE_DATA:
                        received.append(json.loads(frame[13:])["parameters"]["i"])
    finally:
        publisher.kill()
        publisher.communicate(timeout=30)
    # The newest came, in order; the oldest of the backlog were dropped.
    assert received == sorted(received) and len(received) < sent, len(received)


def test_transforms_are_foxglove_frame_transforms() -> None:
    from foxglove.messages import FrameTransform, FrameTransforms, Quaternion, Timestamp, Vector3

    domain = str(7000 + os.getpid() % 1000)  # no other process's transforms
    code = (
        "import time, nerve\n"
        f"moving = nerve.TransformBroadcaster(domain={domain})\n"
        "while True:\n"
        "    moving.send('world', 'base', [1.0, 2.0, 3.0], [0.0, 0.0, 0.6, 0.8], stamp=3_000_000_007)\n"
        "    time.sleep(0.02)\n"
    )
    broadcaster = subprocess.Popen([sys.executable, "-c", code])
    try:
        with serving("--domain", domain) as port:
            client = Client.once_advertised(port, "tf")
            try:
                channel = client.channel("tf")
                assert (channel["encoding"], channel["schemaName"]) == ("protobuf", "foxglove.FrameTransforms")
                client.send("subscribe", subscriptions=[{"id": 3, "channelId": channel["id"]}])
                payload = client.message(3)
            finally:
                client.close()
    finally:
        broadcaster.kill()
        broadcaster.communicate(timeout=30)
    # The bytes the foxglove-sdk package itself encodes for these transforms.
    transform = FrameTransform(
        timestamp=Timestamp(sec=3, nsec=7),
        parent_frame_id="world",
        child_frame_id="base",
        translation=Vector3(x=1.0, y=2.0, z=3.0),
        rotation=Quaternion(x=0.0, y=0.0, z=0.6, w=0.8),
    )
    assert payload == FrameTransforms(transforms=[transform]).encode()


CAMERA = """
    import numpy as np
    from nerve import Node
    from nerve.msg import sensor_msgs

    node = Node()
    speed = node.declare_param("speed", 0.5)
    frame = 0
    while True:
        event = node.next(timeout=0.02)
        if event is not None and event["type"] == "STOP":
            break
        frame += 1
        node.set_sim_time(frame * 1_000_000_000)
        pixels = np.full(8, frame % 256, dtype=np.uint8)
        header = {"frame_id": "camera", "stamp": {"sec": frame, "nanosec": 0}}
        image = sensor_msgs.Image(header=header, height=2, width=4, encoding="mono8", step=4, data=pixels)
        node.send_output("image", image)
        node.send_output("count", np.array([frame]), {"frame": frame})
"""

DATAFLOW = """
    nodes:
      - id: camera
        path: camera.py
        outputs: [image, count]
        output_types:
          image: sensor_msgs/msg/Image
        params:
          speed: 0.5
"""


@pytest.fixture
def camera_run(dataflows: Dataflows) -> Iterator[tuple[str, int]]:
    """A dataflow on simulated time whose camera sends a typed image and an untyped count,
    run by ``nerve run --foxglove PORT``; yields its name and the port."""
    name = f"fox{time.monotonic_ns() % 10**9}"
    port = free_port()
    path = dataflows.write(DATAFLOW, {"camera.py": CAMERA})
    proc = dataflows.start(path, "--name", name, "--sim-time", f"--foxglove={port}")
    try:
        wait_for(lambda: subscribers("camera/image", name) != "", what="the camera to publish")
        yield name, port
    finally:
        subprocess.run(nerve_cmd("stop", name), capture_output=True, timeout=60)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err


def test_a_typed_output_is_cdr_under_its_ros2_schema(camera_run: tuple[str, int]) -> None:
    name, port = camera_run
    client = Client.once_advertised(port, f"~{name}/camera/image", f"~{name}/camera/count")
    try:
        assert "time" in client.op("serverInfo")["capabilities"]
        image = client.channel(f"~{name}/camera/image")
        assert (image["encoding"], image["schemaName"], image["schemaEncoding"]) == (
            "cdr",
            "sensor_msgs/msg/Image",
            "ros2msg",
        )
        count = client.channel(f"~{name}/camera/count")
        assert count["encoding"] == "json"
        client.send(
            "subscribe",
            subscriptions=[{"id": 1, "channelId": image["id"]}, {"id": 2, "channelId": count["id"]}],
        )
        cdr = client.message(1)
        ours = sensor_msgs.Image.from_cdr(cdr)
        assert (ours.height, ours.width, ours.encoding, ours.header.frame_id) == (2, 4, "mono8", "camera")
        assert list(ours.data) == [ours.header.stamp.sec % 256] * 8
        # The schema the channel carries is enough for ROS 2's own decoder, as in Foxglove.
        schema = Schema(id=1, name=image["schemaName"], encoding="ros2msg", data=image["schema"].encode())
        decoded = DecoderFactory().decoder_for("cdr", schema)(cdr)
        assert (decoded.width, decoded.height, bytes(decoded.data)) == (4, 2, bytes(ours.data))
        counted = json.loads(client.message(2))
        assert counted["value"] == [counted["parameters"]["frame"]]
        # The server's time is the run's simulated time, which the camera moves by 1 s a frame.
        stamp = client.next(server_time, what="the server's time")
        assert stamp % 1_000_000_000 == 0 and stamp > 0
    finally:
        client.close()


def server_time(frame: str | bytes) -> int | None:
    """The time a Time frame announces."""
    return struct.unpack_from("<Q", frame, 1)[0] if isinstance(frame, bytes) and frame[0] == TIME else None


def test_nerve_foxglove_follows_the_simulated_time_of_a_run_it_names(camera_run: tuple[str, int]) -> None:
    name, _ = camera_run
    with serving("--sim-time", name) as port:
        client = Client(port)
        try:
            assert "time" in client.op("serverInfo")["capabilities"]
            stamp = client.next(server_time, what="the server's time")
            assert stamp % 1_000_000_000 == 0 and stamp > 0
        finally:
            client.close()


def test_parameters_are_read_and_set(camera_run: tuple[str, int]) -> None:
    _, port = camera_run
    client = Client(port)
    try:
        client.send("getParameters", parameterNames=["camera/speed"], id="get")
        got = client.op("parameterValues", lambda m: m.get("id") == "get")
        assert got["parameters"] == [{"name": "camera/speed", "type": "float64", "value": 0.5}]
        client.send("setParameters", parameters=[{"name": "camera/speed", "value": 2}], id="set")
        set_ = client.op("parameterValues", lambda m: m.get("id") == "set")
        assert set_["parameters"] == [{"name": "camera/speed", "type": "float64", "value": 2.0}]
    finally:
        client.close()


def test_a_client_publishes_json_and_cdr_on_nerve_topics(bridge: int) -> None:
    values_topic, point_topic = unique_topic("fox-json"), unique_topic("fox-cdr")
    values_sub, point_sub = nerve.Subscriber(values_topic), nerve.Subscriber(point_topic)
    client = Client(bridge)
    try:
        client.op("serverInfo")
        client.send(
            "advertise",
            channels=[
                {"id": 1, "topic": values_topic, "encoding": "json", "schemaName": ""},
                {
                    "id": 2,
                    "topic": point_topic,
                    "encoding": "cdr",
                    "schemaName": "geometry_msgs/msg/Point",
                    "schemaEncoding": "ros2msg",
                    "schema": "float64 x\nfloat64 y\nfloat64 z\n",
                },
            ],
        )
        # The bridge's publishers link to the subscribers here before anything is sent.
        wait_for(lambda: values_sub.publisher_count > 0 and point_sub.publisher_count > 0, what="the publishers")
        payload = json.dumps({"value": [1, 2, 3], "parameters": {"k": "v"}}).encode()
        client.ws.send(struct.pack("<BI", CLIENT_MESSAGE_DATA, 1) + payload)
        point = geometry_msgs.Point(x=1.5, y=-2.0, z=0.25)
        client.ws.send(struct.pack("<BI", CLIENT_MESSAGE_DATA, 2) + nerve.msg.to_cdr(point, "geometry_msgs/msg/Point"))
        got = values_sub.recv(30)
        assert got is not None and got["value"].to_pylist() == [1, 2, 3] and got["metadata"]["k"] == "v"
        got = point_sub.recv(30)
        assert got is not None and geometry_msgs.Point.from_arrow(got["value"]) == point
    finally:
        client.close()
        values_sub.close()
        point_sub.close()


def test_a_client_calls_a_service(bridge: int) -> None:
    name = unique_topic("fox-add")
    server = nerve.Service(name, lambda request: np.array([request["value"].to_numpy().sum()]))
    client = Client(bridge)
    try:
        advertised = client.op("advertiseServices", lambda m: any(s["name"] == name for s in m["services"]))
        service = next(s for s in advertised["services"] if s["name"] == name)
        encoding = b"json"
        request = json.dumps({"value": [1, 2, 3]}).encode()
        frame = struct.pack("<BIII", SERVICE_CALL_REQUEST, service["id"], 42, len(encoding)) + encoding + request

        client.ws.send(frame)

        def response(f: str | bytes) -> bytes | None:
            if isinstance(f, bytes) and f[0] == SERVICE_CALL_RESPONSE:
                service_id, call_id, n = struct.unpack_from("<III", f, 1)
                if (service_id, call_id) == (service["id"], 42):
                    assert f[13 : 13 + n] == encoding
                    return f[13 + n :]
            return None

        reply = json.loads(client.next(response, what="the service's response"))
        assert reply["value"] == [6]
    finally:
        client.close()
        server.close()


def handshake_shape(port: int, topic: str) -> tuple[set[str], set[str], set[str]]:
    """The keys of serverInfo, of an advertise message and of the channel for ``topic``."""
    client = Client(port)
    try:
        info = client.op("serverInfo")
        channel = client.channel(topic)
        advertise = next(m for m in client.seen if m["op"] == "advertise")
        return set(info), set(advertise), set(channel)
    finally:
        client.close()


def test_the_handshake_has_the_shape_of_foxglove_sdks_own_server(bridge: int) -> None:
    import foxglove
    from foxglove.websocket import Capability

    topic = unique_topic("fox-ref")
    context = foxglove.Context()
    # The reference serves what ours does: the same capabilities and encodings, a JSON channel.
    reference = foxglove.start_server(
        name="reference",
        host="127.0.0.1",
        port=0,
        capabilities=[Capability.ClientPublish, Capability.Services, Capability.Parameters],
        supported_encodings=["json", "cdr"],
        context=context,
    )
    channel = foxglove.Channel(topic, message_encoding="json", context=context)
    publisher = subprocess.Popen(
        [sys.executable, "-c", f"import time, nerve\np = nerve.Publisher({topic!r})\ntime.sleep(600)"]
    )
    try:
        theirs = handshake_shape(reference.port, topic)
        ours = handshake_shape(bridge, topic)
    finally:
        publisher.kill()
        publisher.communicate(timeout=30)
        channel.close()
        reference.stop()
    assert ours == theirs

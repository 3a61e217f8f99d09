"""ROS 2 interop against real ROS 2: rclpy nodes (Fast DDS, ROS 2's default middleware) in their
own processes exchange topics with a dataflow's `ros2:` bridge nodes.

Every test runs on a host of its own (a network namespace whose only link is a private bridge),
with ROS 2's discovery kept to localhost: no DDS packet can leave the machine, and no other test
run on this machine shares the DDS domain.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import nerve_cmd, ros_start

from testbed.netns import Hosts

pytest.importorskip("rclpy")


def rclpy_node(host: Hosts, tmp_path: Path, code: str) -> subprocess.Popen[str]:
    """Runs ``code`` (a script using rclpy) on the host; it prints one JSON line when done."""
    script = tmp_path / "ros_side.py"
    script.write_text(textwrap.dedent(code))
    return ros_start(host, [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def start_run(host: Hosts, path: Path, merged: bool = False) -> subprocess.Popen[str]:
    """``nerve run path`` on ``host``; ``merged``: its standard error read with its output."""
    err = subprocess.STDOUT if merged else subprocess.PIPE
    return ros_start(host, nerve_cmd("run", str(path)), stdout=subprocess.PIPE, stderr=err)


def stop(run: subprocess.Popen[str], *others: subprocess.Popen[str] | None) -> str:
    """Kills ``others``, stops the dataflow as Ctrl-C would, and returns what it printed."""
    for proc in others:
        if proc:
            proc.kill()
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=60)
    return out + (err or "")


def finish(ros: subprocess.Popen[str], run: subprocess.Popen[str], timeout: float = 120) -> tuple[dict, str]:
    """Waits for the ROS 2 side's JSON line, then stops the dataflow; returns both outputs."""
    try:
        out, err = ros.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        ros.kill()
        out, err = ros.communicate()
    log = stop(run)
    assert ros.returncode is not None and ros.returncode >= 0, f"the ROS 2 side hung:\n{err}\n--- dataflow:\n{log}"
    assert ros.returncode == 0, f"ROS 2 side failed:\n{err}\n--- dataflow:\n{log}"
    assert run.returncode == 0, log
    return json.loads(out.strip().splitlines()[-1]), log


ECHO = """
    from nerve import Node
    from nerve.msg import std_msgs

    node = Node()
    for event in node:
        if event["type"] == "INPUT":
            said = std_msgs.String.from_arrow(event["value"]).data
            node.send_output("reply", std_msgs.String(data="echo: " + said))
"""


def test_strings_cross_both_ways_and_the_bridges_are_ros_2_nodes(ros_host, tmp_path, dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: from_ros
            ros2:
              topic: /chatter
              message_type: std_msgs/String
              qos: {reliable: true, keep_last: 10}
            outputs: [chatter]
          - id: echo
            path: echo.py
            inputs: {chatter: from_ros/chatter}
            outputs: [reply]
            output_types: {reply: std_msgs/msg/String}
          - id: to_ros
            ros2:
              topic: reply
              namespace: /robot
              message_type: std_msgs/msg/String
              direction: publish
              qos: {reliable: true, keep_last: 10}
            inputs: {reply: echo/reply}
        """,
        {"echo.py": ECHO},
    )
    run = start_run(ros_host, path)
    ros = rclpy_node(
        ros_host,
        tmp_path,
        """
        import json, time
        import rclpy
        from std_msgs.msg import String

        rclpy.init()
        node = rclpy.create_node("ros_side")
        talk = node.create_publisher(String, "/chatter", 10)
        heard = []
        node.create_subscription(String, "/robot/reply", lambda m: heard.append(m.data), 10)
        i = 0
        while len(heard) < 5:
            talk.publish(String(data=f"hi {i}"))
            i += 1
            rclpy.spin_once(node, timeout_sec=0.05)
        names = {(n, ns) for n, ns in node.get_node_names_and_namespaces()}
        print(json.dumps({"heard": heard, "nodes": sorted(names)}))
        """,
    )
    result, log = finish(ros, run)
    said = [int(h.removeprefix("echo: hi ")) for h in result["heard"]]
    assert all(h.startswith("echo: hi ") for h in result["heard"]), result
    # Messages sent before the graph matched may be missing; those that arrive are in order.
    assert said == sorted(said) and len(set(said)) == len(said), said
    assert ["from_ros", "/"] in result["nodes"] and ["to_ros", "/robot"] in result["nodes"], result["nodes"]
    assert "ROS 2 reader(s) matched" in log


CHECKER = """
    import hashlib
    from nerve import Node
    from nerve.msg import sensor_msgs, std_msgs

    node = Node()
    for event in node:
        if event["type"] == "INPUT":
            image = sensor_msgs.Image.from_arrow(event["value"])
            digest = hashlib.sha256(image.data.tobytes()).hexdigest()
            node.send_output("digest", std_msgs.String(data=f"{image.header.frame_id} {digest}"))
            # Mirrored, so what comes back is nerve's own full-size image, not an echo.
            pixels = image.data.reshape(image.height, image.width, 3)[:, ::-1].copy()
            mirror = sensor_msgs.Image(
                header=image.header, height=image.height, width=image.width, encoding=image.encoding,
                step=image.step, data=pixels.reshape(-1),
            )
            node.send_output("back", mirror)
"""


def test_images_cross_both_ways_byte_exact(ros_host, tmp_path, dataflows):
    """Full HD from ROS 2, and a mirrored full HD image of each back to it: from nerve, a
    6 MB sample reaches Fast DDS over UDP through its default socket buffer."""
    reliable = "{reliable: true, keep_last: 4}"
    path = dataflows.write(
        f"""
        nodes:
          - id: camera
            ros2:
              topics:
                - {{topic: /camera/image, message_type: sensor_msgs/Image, output: image, qos: {reliable}}}
                - {{topic: /camera/digest, message_type: std_msgs/String, direction: publish, input: digest}}
                - {{topic: /camera/back, message_type: sensor_msgs/Image, direction: publish, input: back}}
              qos: {reliable}
            inputs: {{digest: checker/digest, back: checker/back}}
            outputs: [image]
          - id: checker
            path: checker.py
            inputs: {{image: camera/image}}
            outputs: [digest, back]
            output_types: {{digest: std_msgs/String, back: sensor_msgs/Image}}
        """,
        {"checker.py": CHECKER},
    )
    run = start_run(ros_host, path)
    ros = rclpy_node(
        ros_host,
        tmp_path,
        """
        import hashlib, json
        import numpy as np
        import rclpy
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import Image
        from std_msgs.msg import String

        rclpy.init()
        node = rclpy.create_node("camera_side")
        qos = QoSProfile(depth=4, reliability=ReliabilityPolicy.RELIABLE)
        send = node.create_publisher(Image, "/camera/image", qos)
        digests, back = {}, {}
        node.create_subscription(String, "/camera/digest", lambda m: digests.update([m.data.split()]), qos)
        node.create_subscription(Image, "/camera/back", lambda m: back.update({m.header.frame_id: m}), qos)
        rng = np.random.default_rng(7)
        frames = {f"frame{i}": rng.integers(0, 256, 1080 * 1920 * 3, dtype=np.uint8) for i in range(3)}
        expected = {k: hashlib.sha256(v.tobytes()).hexdigest() for k, v in frames.items()}
        while len(back) < len(frames) or len(digests) < len(frames):
            for name, pixels in frames.items():
                if name not in back or name not in digests:
                    m = Image(height=1080, width=1920, encoding="bgr8", step=1920 * 3, is_bigendian=0)
                    m.header.frame_id = name
                    m.header.stamp.sec = 1700000000
                    m.data = pixels.tobytes()
                    send.publish(m)
                    rclpy.spin_once(node, timeout_sec=0.2)
        mirrors = {k: v.reshape(1080, 1920, 3)[:, ::-1].tobytes() for k, v in frames.items()}
        same = {
            k: back[k].data.tobytes() == mirrors[k]
            and (back[k].height, back[k].width, back[k].encoding, back[k].step, back[k].header.stamp.sec)
            == (1080, 1920, "bgr8", 1920 * 3, 1700000000)
            for k in frames
        }
        print(json.dumps({"digests_match": {k: digests[k] == expected[k] for k in frames}, "back_same": same}))
        """,
    )
    result, _ = finish(ros, run)
    assert all(result["digests_match"].values()), result
    assert all(result["back_same"].values()), result


def test_qos_that_cannot_match_is_reported(ros_host, tmp_path, dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: talker
            path: talker.py
            inputs: {tick: dora/timer/millis/50}
            outputs: [said]
            output_types: {said: std_msgs/String}
          - id: to_ros
            ros2:
              topic: /strict
              message_type: std_msgs/String
              direction: publish
            inputs: {said: talker/said}
        """,
        {
            "talker.py": """
                from nerve import Node
                from nerve.msg import std_msgs

                node = Node()
                for event in node:
                    if event["type"] == "INPUT":
                        node.send_output("said", std_msgs.String(data="best effort"))
            """
        },
    )
    # rclpy's default subscription is reliable; the bridge's default (dora-rs's) is best effort.
    ros = rclpy_node(
        ros_host,
        tmp_path,
        """
        import rclpy
        from std_msgs.msg import String

        rclpy.init()
        node = rclpy.create_node("strict_side")
        node.create_subscription(String, "/strict", lambda m: print("received", flush=True), 10)
        rclpy.spin(node)
        """,
    )
    run = start_run(ros_host, path, merged=True)
    try:
        assert run.stdout is not None
        for line in run.stdout:
            if "cannot match this bridge's writer" in line:
                break
        else:
            pytest.fail("the dataflow ended without reporting the QoS mismatch")
        assert "Reliability" in line and "reliable: true" in line, line
    finally:
        stop(run)
        ros.send_signal(signal.SIGINT)
        ros_out, _ = ros.communicate(timeout=30)
    assert "received" not in ros_out


HANDLER = """
    from nerve import Node
    from nerve.msg import std_srvs

    node = Node()
    for event in node:
        if event["type"] == "INPUT":
            asked = std_srvs.SetBool.Request.from_arrow(event["value"]).data
            answer = std_srvs.SetBool.Response(success=asked, message=f"enabled={asked}")
            node.send_output("reply", answer, event["metadata"])  # the metadata names the request
"""


def test_a_ros_2_client_calls_a_dataflow_that_serves(ros_host, tmp_path, dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: enable
            ros2: {service: /robot/enable, service_type: std_srvs/SetBool, role: server}
            inputs: {reply: handler/reply}
            outputs: [ask]
          - id: handler
            path: handler.py
            inputs: {ask: enable/ask}
            outputs: [reply]
            output_types: {reply: std_srvs/srv/SetBool_Response}
        """,
        {"handler.py": HANDLER},
    )
    run = start_run(ros_host, path)
    ros = rclpy_node(
        ros_host,
        tmp_path,
        """
        import json
        import rclpy
        from std_srvs.srv import SetBool

        rclpy.init()
        node = rclpy.create_node("caller")
        client = node.create_client(SetBool, "/robot/enable")
        while not client.wait_for_service(timeout_sec=1.0):
            pass
        answers = []
        for ask in (True, False, True):
            future = client.call_async(SetBool.Request(data=ask))
            rclpy.spin_until_future_complete(node, future)
            answers.append([future.result().success, future.result().message])
        print(json.dumps({"answers": answers}))
        """,
    )
    result, _ = finish(ros, run)
    assert result["answers"] == [[True, "enabled=True"], [False, "enabled=False"], [True, "enabled=True"]]


CALLER = """
    from nerve import Node
    from nerve.msg import std_srvs

    node = Node()
    asked = 0
    for event in node:
        if event["type"] != "INPUT":
            continue
        if event["id"] == "tick" and asked < 3:
            node.send_output("ask", std_srvs.SetBool.Request(data=asked % 2 == 0), {"n": asked})
            asked += 1
        elif event["id"] == "answer":
            answer = std_srvs.SetBool.Response.from_arrow(event["value"])
            print(f"answer {event['metadata']['n']} {answer.success} {answer.message}", flush=True)
"""


def test_a_dataflow_calls_a_ros_2_server(ros_host, tmp_path, dataflows):
    ros = rclpy_node(
        ros_host,
        tmp_path,
        """
        import rclpy
        from std_srvs.srv import SetBool

        def serve(request, response):
            response.success = not request.data
            response.message = f"got {request.data}"
            return response

        rclpy.init()
        node = rclpy.create_node("server")
        node.create_service(SetBool, "/ros/enable", serve)
        rclpy.spin(node)
        """,
    )
    path = dataflows.write(
        """
        nodes:
          - id: caller
            path: caller.py
            inputs: {tick: dora/timer/millis/20, answer: ros_call/answer}
            outputs: [ask]
            output_types: {ask: std_srvs/srv/SetBool_Request}
          - id: ros_call
            ros2: {service: /ros/enable, service_type: std_srvs/srv/SetBool, role: client}
            inputs: {ask: caller/ask}
            outputs: [answer]
        """,
        {"caller.py": CALLER},
    )
    run = start_run(ros_host, path, merged=True)
    answers = []
    try:
        assert run.stdout is not None
        for line in run.stdout:
            if "answer " in line:
                answers.append(line.split("answer ", 1)[1].strip())
                if len(answers) == 3:
                    break
    finally:
        log = stop(run)
        ros.send_signal(signal.SIGINT)
        ros.communicate(timeout=30)
    # Requests sent before the server matched were held, not lost: every one is answered, in order.
    assert answers == ["0 False got True", "1 True got False", "2 False got True"], log


# The ROS 2 side of the transform tests: no PyPI wheel carries tf2_msgs, so Cyclone DDS (an
# independent DDS implementation) plays it, with ROS 2's type names on ROS 2's topics.
CYCLONE_TF = """
    from dataclasses import dataclass

    import cyclonedds.idl.annotations as annotate
    from cyclonedds.idl import IdlStruct
    from cyclonedds.idl.types import float64, int32, sequence, uint32

    @dataclass
    @annotate.final
    class Time(IdlStruct, typename="builtin_interfaces::msg::dds_::Time_"):
        sec: int32
        nanosec: uint32

    @dataclass
    @annotate.final
    class Header(IdlStruct, typename="std_msgs::msg::dds_::Header_"):
        stamp: Time
        frame_id: str

    @dataclass
    @annotate.final
    class Vector3(IdlStruct, typename="geometry_msgs::msg::dds_::Vector3_"):
        x: float64
        y: float64
        z: float64

    @dataclass
    @annotate.final
    class Quaternion(IdlStruct, typename="geometry_msgs::msg::dds_::Quaternion_"):
        x: float64
        y: float64
        z: float64
        w: float64

    @dataclass
    @annotate.final
    class Transform(IdlStruct, typename="geometry_msgs::msg::dds_::Transform_"):
        translation: Vector3
        rotation: Quaternion

    @dataclass
    @annotate.final
    class TransformStamped(IdlStruct, typename="geometry_msgs::msg::dds_::TransformStamped_"):
        header: Header
        child_frame_id: str
        transform: Transform

    @dataclass
    @annotate.final
    class TFMessage(IdlStruct, typename="tf2_msgs::msg::dds_::TFMessage_"):
        transforms: sequence[TransformStamped]
"""

#: Cyclone DDS on loopback only, finding its peers at the well-known unicast ports.
CYCLONE_CONFIG = (
    "<CycloneDDS><Domain Id='any'><General><Interfaces><NetworkInterface address='127.0.0.1'/></Interfaces>"
    "<AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>auto</ParticipantIndex>"
    "<MaxAutoParticipantIndex>20</MaxAutoParticipantIndex><Peers><Peer address='127.0.0.1'/></Peers>"
    "</Discovery></Domain></CycloneDDS>"
)


def test_transform_trees_join_both_ways(ros_host, tmp_path):
    """A static frame broadcast on ROS 2's /tf_static is looked up from nerve; a moving frame
    nerve broadcasts is read on ROS 2's /tf."""
    bridge = ros_start(ros_host, nerve_cmd("ros2", "bridge"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    ros_script = tmp_path / "ros_tf.py"
    ros_script.write_text(
        textwrap.dedent(CYCLONE_TF)
        + textwrap.dedent(
            """
            import json
            from cyclonedds.core import Policy, Qos
            from cyclonedds.domain import DomainParticipant
            from cyclonedds.pub import DataWriter
            from cyclonedds.sub import DataReader
            from cyclonedds.topic import Topic
            from cyclonedds.util import duration

            dp = DomainParticipant(17)
            cdr = Policy.DataRepresentation(use_cdrv0_representation=True)
            latched = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.Durability.TransientLocal,
                          Policy.History.KeepLast(1), cdr)
            moving = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(100), cdr)
            static = DataWriter(dp, Topic(dp, "rt/tf_static", TFMessage), qos=latched)
            lidar = TransformStamped(Header(Time(0, 0), "base_link"), "lidar",
                                     Transform(Vector3(0.1, 0.0, 0.3), Quaternion(0.0, 0.0, 0.0, 1.0)))
            static.write(TFMessage([lidar]))
            reader = DataReader(dp, Topic(dp, "rt/tf", TFMessage), qos=moving)
            for sample in reader.take_iter():
                t = sample.transforms[0]
                if t.child_frame_id == "odom":
                    print(json.dumps({"parent": t.header.frame_id, "x": t.transform.translation.x,
                                      "sec": t.header.stamp.sec}), flush=True)
                    break
            """
        )
    )
    env = {"CYCLONEDDS_URI": CYCLONE_CONFIG}
    ros = ros_start(
        ros_host,
        ["env", *(f"{k}={v}" for k, v in env.items()), sys.executable, str(ros_script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    nerve_side = tmp_path / "nerve_tf.py"
    nerve_side.write_text(
        textwrap.dedent(
            """
            import json, time
            import nerve

            buffer = nerve.TransformBuffer()
            moving = nerve.TransformBroadcaster()
            lidar = None
            while lidar is None:
                moving.send("map", "odom", [2.5, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], stamp=1_700_000_000_000_000_000)
                try:
                    lidar = buffer.lookup("base_link", "lidar", timeout=0.2)
                except nerve.TransformError:
                    pass
            print(json.dumps({"translation": list(lidar.translation)}), flush=True)
            end = time.monotonic() + 1.0
            while time.monotonic() < end:  # ROS 2's side may still be waiting for odom
                moving.send("map", "odom", [2.5, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], stamp=1_700_000_000_000_000_000)
                time.sleep(0.05)
            """
        )
    )
    here = ros_start(ros_host, [sys.executable, str(nerve_side)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        nerve_out, nerve_err = here.communicate(timeout=120)
        ros_out, ros_err = ros.communicate(timeout=120)
    finally:
        log = stop(bridge, here, ros)
    assert here.returncode == 0, nerve_err + log
    assert ros.returncode == 0, ros_err + log
    assert json.loads(nerve_out.splitlines()[-1]) == {"translation": [0.1, 0.0, 0.3]}
    assert json.loads(ros_out.splitlines()[-1]) == {"parent": "map", "x": 2.5, "sec": 1_700_000_000}
    assert bridge.returncode == 0, log


SINK = """
    from nerve import Node
    from nerve.msg import std_msgs

    node = Node()
    for event in node:
        if event["type"] == "INPUT":
            print("heard", std_msgs.String.from_arrow(event["value"]).data, flush=True)
"""

LISTENING_BRIDGE = """
    nodes:
      - id: from_ros
        ros2:
          topic: /chatter
          message_type: std_msgs/String
          qos: {reliable: true, keep_last: 10}
        outputs: [chatter]
      - id: sink
        path: sink.py
        inputs: {chatter: from_ros/chatter}
"""

TALKER = """
    import sys
    import rclpy
    from std_msgs.msg import String

    rclpy.init()
    node = rclpy.create_node("talker")
    talk = node.create_publisher(String, "/chatter", 10)
    i = 0
    while True:  # until killed
        talk.publish(String(data=f"{sys.argv[1]} {i}"))
        i += 1
        rclpy.spin_once(node, timeout_sec=0.05)
"""


def wait_line(proc: subprocess.Popen[str], wanted: str) -> str:
    """The first line of ``proc``'s output containing ``wanted`` (pytest's timeout bounds it)."""
    assert proc.stdout is not None
    for line in proc.stdout:
        if wanted in line:
            return line
    pytest.fail(f"output ended before a line with {wanted!r}")


def test_a_ros_2_node_that_dies_and_comes_back_is_heard_again(ros_host, tmp_path, dataflows):
    path = dataflows.write(LISTENING_BRIDGE, {"sink.py": SINK})
    talker = tmp_path / "talker.py"
    talker.write_text(textwrap.dedent(TALKER))
    run = start_run(ros_host, path, merged=True)
    first = ros_start(ros_host, [sys.executable, str(talker), "first"])
    second = None
    try:
        wait_line(run, "heard first")
        first.kill()
        first.wait()
        second = ros_start(ros_host, [sys.executable, str(talker), "second"])
        wait_line(run, "heard second")
    finally:
        log = stop(run, first, second)
    assert run.returncode == 0, log


def test_a_malformed_sample_is_reported_and_the_next_one_still_arrives(ros_host, tmp_path, dataflows):
    """A Cyclone DDS writer claims ROS 2's `std_msgs/String` type name for a layout that is
    not one: the bridge names the topic and what is wrong, drops it, and goes on."""
    path = dataflows.write(LISTENING_BRIDGE, {"sink.py": SINK})
    liar = tmp_path / "liar.py"
    liar.write_text(
        textwrap.dedent(
            """
            import time
            from dataclasses import dataclass

            import cyclonedds.idl.annotations as annotate
            from cyclonedds.core import Policy, Qos
            from cyclonedds.domain import DomainParticipant
            from cyclonedds.idl import IdlStruct
            from cyclonedds.idl.types import uint32
            from cyclonedds.pub import DataWriter
            from cyclonedds.topic import Topic
            from cyclonedds.util import duration

            @dataclass
            @annotate.final
            class NotAString(IdlStruct, typename="std_msgs::msg::dds_::String_"):
                length: uint32  # read as a string's length: far past the sample's end

            dp = DomainParticipant(17)
            qos = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(10),
                      Policy.DataRepresentation(use_cdrv0_representation=True))
            writer = DataWriter(dp, Topic(dp, "rt/chatter", NotAString), qos=qos)
            while True:  # until killed
                writer.write(NotAString(1_000_000))
                time.sleep(0.05)
            """
        )
    )
    talker = tmp_path / "talker.py"
    talker.write_text(textwrap.dedent(TALKER))
    run = start_run(ros_host, path, merged=True)
    bad = ros_start(ros_host, ["env", f"CYCLONEDDS_URI={CYCLONE_CONFIG}", sys.executable, str(liar)])
    good = None
    try:
        warning = wait_line(run, "does not decode")
        good = ros_start(ros_host, [sys.executable, str(talker), "fine"])
        wait_line(run, "heard fine")
    finally:
        log = stop(run, bad, good)
    assert "/chatter" in warning and "std_msgs/msg/String" in warning and "a count of 1000000" in warning, warning
    assert run.returncode == 0, log


WORKER = """
    from nerve import Node
    from nerve.msg import test_msgs

    node = Node()
    goals = {}  # goal id -> (order, sequence so far)
    for event in node:
        if event["type"] != "INPUT":
            continue
        if event["id"] == "goal":
            order = test_msgs.Fibonacci.Goal.from_arrow(event["value"]).order
            goals[event["metadata"]["goal_id"]] = (order, [0, 1])
        elif event["id"] == "cancel":
            goal_id = event["metadata"]["goal_id"]
            _, sequence = goals.pop(goal_id)
            result = test_msgs.Fibonacci.Result(sequence=sequence)
            node.send_output("result", result, {"goal_id": goal_id, "goal_status": "canceled"})
        else:  # tick: one step of every goal
            for goal_id, (order, sequence) in list(goals.items()):
                sequence.append(sequence[-1] + sequence[-2])
                node.send_output("feedback", test_msgs.Fibonacci.Feedback(sequence=sequence), {"goal_id": goal_id})
                if len(sequence) > order:
                    del goals[goal_id]
                    node.send_output("result", test_msgs.Fibonacci.Result(sequence=sequence), {"goal_id": goal_id})
"""


def test_a_ros_2_action_client_sends_goals_to_a_dataflow_and_cancels_one(ros_host, tmp_path, dataflows):
    share = Path(sys.prefix) / "share"  # test_msgs' definitions, from its wheel
    path = dataflows.write(
        f"""
        types: [{share}]
        nodes:
          - id: fib
            ros2: {{action: /fibonacci, action_type: test_msgs/Fibonacci, role: server}}
            inputs: {{feedback: worker/feedback, result: worker/result}}
            outputs: [goal, cancel]
          - id: worker
            path: worker.py
            inputs: {{goal: fib/goal, cancel: fib/cancel, tick: dora/timer/millis/20}}
            outputs: [feedback, result]
            output_types: {{feedback: test_msgs/action/Fibonacci_Feedback, result: test_msgs/action/Fibonacci_Result}}
        """,
        {"worker.py": WORKER},
    )
    run = start_run(ros_host, path)
    ros = rclpy_node(
        ros_host,
        tmp_path,
        """
        import json
        import rclpy
        from rclpy.action import ActionClient
        from test_msgs.action import Fibonacci

        rclpy.init()
        node = rclpy.create_node("fib_client")
        client = ActionClient(node, Fibonacci, "/fibonacci")
        while not client.wait_for_server(timeout_sec=1.0):
            pass
        feedback = []
        sent = client.send_goal_async(Fibonacci.Goal(order=6), feedback_callback=lambda f: feedback.append(
            list(f.feedback.sequence)))
        rclpy.spin_until_future_complete(node, sent)
        done = sent.result().get_result_async()
        rclpy.spin_until_future_complete(node, done)
        finished = {"status": done.result().status, "sequence": list(done.result().result.sequence)}

        # A long goal, canceled once its first feedback came.
        first = []
        sent = client.send_goal_async(Fibonacci.Goal(order=10_000), feedback_callback=lambda f: first.append(1))
        rclpy.spin_until_future_complete(node, sent)
        while not first:
            rclpy.spin_once(node, timeout_sec=0.1)
        cancel = sent.result().cancel_goal_async()
        rclpy.spin_until_future_complete(node, cancel)
        done = sent.result().get_result_async()
        rclpy.spin_until_future_complete(node, done)
        canceled = {"accepted": len(cancel.result().goals_canceling), "status": done.result().status}
        print(json.dumps({"finished": finished, "feedback": feedback, "canceled": canceled}))
        """,
    )
    result, _ = finish(ros, run)
    assert result["finished"] == {"status": 4, "sequence": [0, 1, 1, 2, 3, 5, 8]}  # STATUS_SUCCEEDED
    assert result["feedback"][0] == [0, 1, 1] and result["feedback"][-1] == [0, 1, 1, 2, 3, 5, 8]
    assert result["canceled"] == {"accepted": 1, "status": 5}  # STATUS_CANCELED


FIB_SERVER = """
    import time
    import rclpy
    from rclpy.action import ActionServer, CancelResponse, GoalResponse
    from rclpy.executors import MultiThreadedExecutor
    from test_msgs.action import Fibonacci

    rclpy.init()
    node = rclpy.create_node("fib_server")

    def execute(goal):
        sequence = [0, 1]
        for i in range(1, goal.request.order):
            if goal.is_cancel_requested:
                goal.canceled()
                return Fibonacci.Result(sequence=sequence[-3:])
            sequence.append((sequence[i] + sequence[i - 1]) % 1_000_000)
            goal.publish_feedback(Fibonacci.Feedback(sequence=sequence[-3:]))
            time.sleep(0.002)
        goal.succeed()
        return Fibonacci.Result(sequence=sequence)

    ActionServer(
        node, Fibonacci, "/fibonacci", execute_callback=execute,
        goal_callback=lambda goal: GoalResponse.REJECT if goal.order < 0 else GoalResponse.ACCEPT,
        cancel_callback=lambda goal: CancelResponse.ACCEPT,
    )
    executor = MultiThreadedExecutor()
    executor.add_node(node)
    executor.spin()  # until killed
"""

GOAL_CALLER = """
    import json
    import pyarrow as pa
    from nerve import Node
    from nerve.msg import test_msgs

    Goal, Result = test_msgs.Fibonacci.Goal, test_msgs.Fibonacci.Result
    node = Node()
    node.send_output("goal", Goal(order=6), {"name": "short"})
    results, feedback, canceling = {}, [], False
    for event in node:
        if event["type"] != "INPUT":
            continue
        metadata = event["metadata"]
        if event["id"] == "feedback":
            feedback.append(metadata["name"])
            if metadata["name"] == "long" and not canceling:  # canceled once it runs
                canceling = True
                node.send_output("cancel", pa.array([metadata["goal_id"]]))
        elif event["id"] == "result":
            value = event["value"]
            sequence = [int(x) for x in Result.from_arrow(value).sequence] if len(value) else None
            results[metadata["name"]] = [metadata["goal_status"], sequence]
            if metadata["name"] == "short":
                node.send_output("goal", Goal(order=1_000_000), {"name": "long"})
                node.send_output("goal", Goal(order=-1), {"name": "refused"})
            if len(results) == 3:
                summary = {"results": results, "short_feedback": feedback.count("short")}
                print("goal results:", json.dumps(summary), flush=True)
"""


def test_a_dataflow_sends_goals_to_a_ros_2_action_server_and_cancels_one(ros_host, tmp_path, dataflows):
    share = Path(sys.prefix) / "share"  # test_msgs' definitions, from its wheel
    path = dataflows.write(
        f"""
        types: [{share}]
        nodes:
          - id: fib
            ros2: {{action: /fibonacci, action_type: test_msgs/Fibonacci, role: client}}
            inputs: {{goal: caller/goal, cancel: caller/cancel}}
            outputs: [feedback, result]
          - id: caller
            path: caller.py
            inputs: {{feedback: fib/feedback, result: fib/result}}
            outputs: [goal, cancel]
            output_types: {{goal: test_msgs/action/Fibonacci_Goal}}
        """,
        {"caller.py": GOAL_CALLER},
    )
    server_script = tmp_path / "fib_server.py"
    server_script.write_text(textwrap.dedent(FIB_SERVER))
    server = ros_start(ros_host, [sys.executable, str(server_script)])
    run = start_run(ros_host, path, merged=True)
    try:
        line = wait_line(run, "goal results:")
    finally:
        log = stop(run, server)
    result = json.loads(line.split("goal results:", 1)[1])
    assert result["results"]["short"] == ["succeeded", [0, 1, 1, 2, 3, 5, 8]], result
    assert result["short_feedback"] == 5, result  # one per step, each with the goal's parameters
    assert result["results"]["long"][0] == "canceled", result
    assert result["results"]["refused"] == ["rejected", None], result
    assert run.returncode == 0, log


def start_bridge(host: Hosts, *args: str) -> subprocess.Popen[str]:
    """``nerve ros2 bridge args`` on ``host``, its log read with its output."""
    return ros_start(host, nerve_cmd("ros2", "bridge", *args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


TUNED = """
    from nerve import Node

    node = Node()
    node.on_param_change(lambda key, value: f"{key} must be >= 0" if value < 0 else None)
    for event in node:
        if event["type"] == "STOP":
            break
"""


def test_ros_2_reads_and_sets_a_nerve_nodes_parameters_and_a_callback_refuses(ros_host, tmp_path, dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: speed-ctl
            path: tuned.py
            params: {speed: 0.5, pid: {kp: 1.2, ki: 0.1}, mode: cruise}
        """,
        {"tuned.py": TUNED},
    )
    run = start_run(ros_host, path)
    bridge = start_bridge(ros_host)
    ros = rclpy_node(
        ros_host,
        tmp_path,
        """
        import json
        import rclpy
        from rclpy.parameter import Parameter
        from rclpy.parameter_client import AsyncParameterClient

        rclpy.init()
        node = rclpy.create_node("tuner")
        client = AsyncParameterClient(node, "/speed_ctl")
        while not client.wait_for_services(timeout_sec=1.0):
            pass

        def call(future):
            rclpy.spin_until_future_complete(node, future)
            return future.result()

        def value(v):
            return {3: v.double_value, 4: v.string_value}.get(v.type, v.type)

        listed = call(client.list_parameters([], 0)).result
        got = call(client.get_parameters(["speed", "mode", "nope"])).values
        ok = call(client.set_parameters([Parameter("speed", value=1.5)])).results[0]
        refused = call(client.set_parameters([Parameter("speed", value=-1.0)])).results[0]
        wrong = call(client.set_parameters([Parameter("mode", value=3)])).results[0]
        atomic = call(client.set_parameters_atomically(
            [Parameter("pid.kp", value=2.0), Parameter("pid.ki", value=-1.0)])).result
        after = call(client.get_parameters(["speed", "pid.kp"])).values
        types = call(client.get_parameter_types(["speed", "mode"])).types
        print(json.dumps({
            "names": sorted(listed.names), "groups": list(listed.prefixes),
            "got": [value(v) for v in got],
            "ok": ok.successful, "refused": [refused.successful, refused.reason],
            "wrong": [wrong.successful, wrong.reason], "atomic": [atomic.successful, atomic.reason],
            "after": [value(v) for v in after], "types": list(types),
        }))
        """,
    )
    try:
        result, log = finish(ros, run)
    finally:
        log = stop(bridge)
    assert result["names"] == ["mode", "pid.ki", "pid.kp", "speed"], result
    assert result["groups"] == ["pid"]
    assert result["got"] == [0.5, "cruise", 0], result  # 0: PARAMETER_NOT_SET
    assert result["ok"] is True
    assert result["refused"][0] is False and "speed must be >= 0" in result["refused"][1], result
    assert result["wrong"][0] is False and "mode" in result["wrong"][1] and "string" in result["wrong"][1], result
    # All or nothing: kp was set, then put back when ki was refused.
    assert result["atomic"][0] is False and "pid.ki" in result["atomic"][1], result
    assert result["after"] == [1.5, 1.2], result
    assert result["types"] == [3, 4], result
    assert bridge.returncode == 0, log


ROS_TOPICS = """
    import json, sys
    import rclpy
    from geometry_msgs.msg import Twist
    from std_msgs.msg import String

    rclpy.init()
    node = rclpy.create_node("ros_side")
    talk = node.create_publisher(String, "/chatter", 10)
    heard = []
    node.create_subscription(Twist, "/robot/cmd_vel", lambda m: heard.append(m.linear.x), 10)
    i = 0
    # The nerve side sends speeds 0..4 over and over once it heard ROS 2: until one full run.
    while heard[-5:] != [0.0, 1.0, 2.0, 3.0, 4.0]:
        talk.publish(String(data=f"hi {i}"))
        i += 1
        rclpy.spin_once(node, timeout_sec=0.05)
    print(json.dumps({"heard": heard}), flush=True)
"""

NERVE_TOPICS = """
    import json, subprocess, sys
    import nerve
    from nerve.msg import geometry_msgs, std_msgs

    cmd = nerve.Publisher("robot/cmd_vel")
    chatter = nerve.Subscriber("chatter")
    print("listening", flush=True)
    message = chatter.recv()
    said = std_msgs.String.from_arrow(message["value"]).data
    # The ROS 2 talker still runs (it waits for speeds): its topic is listed among nerve's.
    listed = subprocess.run(json.loads(sys.argv[1]), capture_output=True, text=True, check=True).stdout
    # Written to ROS 2 only once a ROS 2 subscription listens: the bridge subscribes then.
    assert cmd.wait_for_subscribers(1)
    print(json.dumps({"said": said, "from_ros2": message["metadata"].get("from_ros2"), "listed": listed}), flush=True)
    # Speeds 0..4 again and again (the first may go out before DDS matched), until the ROS 2
    # side has them all and ends: then the bridge stops listening.
    while cmd.subscriber_count:
        for x in range(5):
            cmd.send(geometry_msgs.Twist(linear=geometry_msgs.Vector3(x=float(x))))
        chatter.recv(timeout=0.1)
    print("unsubscribed", flush=True)
"""


def test_topics_appear_on_both_sides_and_cross_only_while_listened(ros_host, tmp_path):
    bridge = start_bridge(ros_host, "--topics", "chatter", "robot/*")
    nerve_script = tmp_path / "nerve_side.py"
    nerve_script.write_text(textwrap.dedent(NERVE_TOPICS))
    topic_list = json.dumps(nerve_cmd("topic", "list", "-v"))
    here = ros_start(
        ros_host, [sys.executable, str(nerve_script), topic_list], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        wait_line(here, "listening")
        # Nothing listens on ROS 2's side yet: the bridge has not subscribed to nerve's topic.
        before = subprocess.run(ros_host.on(0, nerve_cmd("topic", "list", "-v")), capture_output=True, text=True)
        ros = rclpy_node(ros_host, tmp_path, ROS_TOPICS)
        ros_out, ros_err = ros.communicate(timeout=120)
        assert ros.returncode == 0, ros_err
        spoke = json.loads(wait_line(here, "said"))
        wait_line(here, "unsubscribed")
    finally:
        log = stop(bridge, here)
    assert json.loads(ros_out.splitlines()[-1])["heard"][-5:] == [0.0, 1.0, 2.0, 3.0, 4.0], ros_out
    assert spoke["said"].startswith("hi ") and spoke["from_ros2"] is True, spoke
    cmd_vel = next(line for line in before.stdout.splitlines() if line.startswith("robot/cmd_vel"))
    assert "0 subscribers" in cmd_vel, before.stdout
    chatter = next(line for line in spoke["listed"].splitlines() if line.startswith("chatter"))
    assert "from ROS 2 std_msgs/msg/String" in chatter, spoke["listed"]
    assert bridge.returncode == 0, log

"""nerve.msg against ROS 2 itself: the same values give the same CDR bytes as real rclpy (the
`ros-rclpy` wheels), each side reads the other's bytes, and the classes behave as documented."""

from __future__ import annotations

import importlib
import itertools
import subprocess
import sys

import nerve.msg
import numpy as np
import pyarrow as pa
import pytest
from conftest import REPO
from nerve.msg import geometry_msgs, sensor_msgs, std_srvs, visualization_msgs
from rclpy import serialization  # real ROS 2, from the `ros-rclpy` wheel (the test extra)
from rosidl_parser import definition

# Nested, fixed-array, sequence, string and byte-heavy types of every shipped package with a
# ROS 2 wheel (tf2_msgs has none on PyPI).
TYPES = [
    "builtin_interfaces/msg/Time",
    "builtin_interfaces/msg/Duration",
    "std_msgs/msg/Header",
    "std_msgs/msg/String",
    "std_msgs/msg/ColorRGBA",
    "std_msgs/msg/Float64MultiArray",
    "std_msgs/msg/UInt8MultiArray",
    "geometry_msgs/msg/PoseStamped",
    "geometry_msgs/msg/PoseWithCovarianceStamped",
    "geometry_msgs/msg/TransformStamped",
    "geometry_msgs/msg/PolygonStamped",
    "geometry_msgs/msg/AccelWithCovarianceStamped",
    "sensor_msgs/msg/Image",
    "sensor_msgs/msg/CompressedImage",
    "sensor_msgs/msg/CameraInfo",
    "sensor_msgs/msg/Imu",
    "sensor_msgs/msg/JointState",
    "sensor_msgs/msg/LaserScan",
    "sensor_msgs/msg/PointCloud2",
    "sensor_msgs/msg/NavSatFix",
    "sensor_msgs/msg/BatteryState",
    "nav_msgs/msg/Odometry",
    "nav_msgs/msg/Path",
    "nav_msgs/msg/OccupancyGrid",
    "visualization_msgs/msg/MarkerArray",
    "diagnostic_msgs/msg/DiagnosticArray",
    "action_msgs/msg/GoalStatusArray",
    "unique_identifier_msgs/msg/UUID",
    "std_srvs/srv/SetBool_Request",
    "std_srvs/srv/Trigger_Response",
    # ROS 2's own test types (ros-test-msgs): every primitive, bounded and fixed arrays.
    "test_msgs/msg/Arrays",
    "test_msgs/msg/BasicTypes",
    "test_msgs/msg/BoundedPlainSequences",
    "test_msgs/msg/BoundedSequences",
    "test_msgs/msg/Builtins",
    "test_msgs/msg/Defaults",
    "test_msgs/msg/MultiNested",
    "test_msgs/msg/Strings",
    "test_msgs/msg/UnboundedSequences",
    "test_msgs/msg/WStrings",
    "test_msgs/action/Fibonacci_SendGoal_Request",
]

INTS = {f"int{bits}": (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) for bits in (8, 16, 32, 64)}
INTS |= {f"u{k}": (0, 2 * hi + 1) for k, (_, hi) in INTS.items()}
INTS |= {"octet": (0, 255), "char": (0, 255)}


def ros_class(name: str):
    package, kind, type_name = name.split("/")
    if "_" in type_name and kind in ("srv", "action"):
        stem, *service, part = type_name.split("_")
        interface = getattr(importlib.import_module(f"{package}.{kind}"), stem)
        if service:  # a service of an action's protocol: `Fibonacci_SendGoal_Request`
            interface = getattr(interface.Impl, f"{service[0]}Service")
        return getattr(interface, part)
    return getattr(importlib.import_module(f"{package}.{kind}"), type_name)


class Filler:
    """Gives every field a value of its own, deterministic and exact in float32: the same
    values go into the rclpy message and into nerve's dict."""

    def __init__(self) -> None:
        self.n = itertools.count(1)

    def element(self, t):
        k = next(self.n)
        if isinstance(t, definition.NamespacedType):
            return self.message(ros_class("/".join([*t.namespaces, t.name])))
        if isinstance(t, definition.AbstractGenericString):
            # A wstring gets a character outside the BMP: two UTF-16 units.
            text = f"s{k}é😀" if isinstance(t, definition.AbstractWString) else f"s{k}é"
            bound = getattr(t, "maximum_size", None)
            text = text[:bound] if bound else text
            return text, text
        name = t.typename
        if name == "boolean":
            return (k % 2 == 1, k % 2 == 1)
        if name in ("float", "double"):
            return (k * 0.5 + 0.25,) * 2
        lo, hi = INTS[name]
        # Both ends of the range, each side of zero for signed types.
        value = hi - k % 100 if k % 2 else lo + k % 100
        return (bytes([value]), value) if name == "octet" else (value, value)

    def field(self, t):
        if isinstance(t, definition.AbstractNestedType):
            n = t.size if isinstance(t, definition.Array) else min(3, getattr(t, "maximum_size", 3))
            pairs = [self.element(t.value_type) for _ in range(n)]
            return [p[0] for p in pairs], [p[1] for p in pairs]
        return self.element(t)

    def message(self, cls):
        ros, ours = cls(), {}
        for field, t in zip(cls.get_fields_and_field_types(), cls.SLOT_TYPES, strict=True):
            ros_value, ours[field] = self.field(t)
            setattr(ros, field, ros_value)
        return ros, ours


def plain(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, dict):
        return {k: plain(i) for k, i in v.items()}
    if isinstance(v, list):
        return [plain(i) for i in v]
    return v


@pytest.fixture
def ros_packages(monkeypatch):
    """The ROS 2 packages the test extra installed, found as an installed ROS 2's are."""
    monkeypatch.setenv("AMENT_PREFIX_PATH", sys.prefix)


@pytest.mark.parametrize("name", TYPES)
def test_bytes_equal_real_rclpy(name, ros_packages):
    ros, ours = Filler().message(ros_class(name))
    expected = serialization.serialize_message(ros)
    cls = nerve.msg.message_class(name)
    made = cls(**ours).to_cdr()
    # rmw_fastrtps sizes its buffer by an estimate and leaves what lies past the message's end
    # (and alignment padding) as the allocator left it; nerve writes zeros in padding.
    assert len(made) <= len(expected), (made.hex(), expected.hex())
    differ = [i for i, (a, b) in enumerate(zip(made, expected, strict=False)) if a != b]
    assert all(made[i] == 0 for i in differ), f"bytes differ at {differ}: {made.hex()} vs {expected.hex()}"
    assert serialization.deserialize_message(made, ros_class(name)) == ros
    assert plain(cls.from_cdr(expected).to_dict()) == plain(ours)
    assert nerve.msg.from_cdr(expected, name).equals(cls(**ours).to_arrow())


def test_an_image_from_numpy_is_not_copied_and_comes_back_as_a_view():
    frame = np.random.default_rng(7).integers(0, 255, (480, 640, 3), dtype=np.uint8)
    image = sensor_msgs.Image(height=480, width=640, encoding="rgb8", step=640 * 3, data=frame)
    value = image.to_arrow()
    assert np.shares_memory(value.field("data").flatten().to_numpy(zero_copy_only=True), frame)
    seen = sensor_msgs.Image.from_arrow(value)
    assert np.shares_memory(seen.data, frame) and seen.data.reshape(480, 640, 3).tolist() == frame.tolist()
    assert seen.header.frame_id == "" and seen.encoding == "rgb8"


def test_defaults_nested_dicts_constants_and_services():
    pose = geometry_msgs.PoseStamped(header={"frame_id": "map"}, pose={"position": {"x": 1.5}})
    assert pose.pose.orientation.w == 1.0, "the .msg file's default"
    assert pose.header.stamp.sec == 0 and pose.pose.position.y == 0.0
    assert sensor_msgs.NavSatFix.COVARIANCE_TYPE_KNOWN == 3
    request = std_srvs.SetBool.Request(data=True)
    assert request.TYPE == "std_srvs/srv/SetBool_Request"
    assert std_srvs.SetBool.Response().message == ""
    from nerve.msg.geometry_msgs import Point

    assert Point is geometry_msgs.Point
    assert pa.array(Point(x=1.0)).type == Point.arrow_type(), "pyarrow takes a message as it is"


def test_mistakes_name_the_type_and_the_field():
    with pytest.raises(TypeError, match="no field `heigth`; did you mean `height`"):
        sensor_msgs.Image(heigth=3)
    with pytest.raises(AttributeError, match="did you mean `Image`"):
        _ = sensor_msgs.Imag
    with pytest.raises(AttributeError, match="did you mean `sensor_msgs`"):
        _ = nerve.msg.sensor_msg
    with pytest.raises(TypeError, match=r"sensor_msgs/msg/Image\.height"):
        sensor_msgs.Image(height=-1).to_arrow()
    with pytest.raises(TypeError, match=r"Image\.data"):
        sensor_msgs.Image(data=np.array([300, 1], dtype=np.int64)).to_arrow()
    with pytest.raises(ValueError, match=r"CameraInfo\.k: exactly 9"):
        sensor_msgs.CameraInfo(k=[1.0, 2.0])
    with pytest.raises(TypeError, match=r"PoseStamped\.pose: a geometry_msgs/msg/Pose or a dict"):
        geometry_msgs.PoseStamped(pose=3)
    with pytest.raises(LookupError, match="no_such_msgs/msg/Thing"):
        nerve.msg.type_hash("no_such_msgs/msg/Thing")
    with pytest.raises(ValueError, match="past the end"):
        nerve.msg.from_cdr(b"\x00\x01\x00\x00\x05", "sensor_msgs/msg/Image")


def test_fields_named_like_python_keywords_and_builtins(tmp_path, monkeypatch):
    """A field may be named `type` (visualization_msgs/Marker) or, in a user's package, like a
    Python keyword: it is still a keyword argument, an attribute and a field of the value."""
    folder = tmp_path / "kw_msgs" / "msg"
    folder.mkdir(parents=True)
    (folder / "Odd.msg").write_text("int32 from\nint32 type\nstring unknown\nint8 self\n")
    monkeypatch.setenv("NERVE_TYPES_PATH", str(tmp_path))
    odd = nerve.msg.message_class("kw_msgs/msg/Odd")(**{"from": 1, "type": 2, "unknown": "u", "self": 3})
    assert odd.to_arrow().to_pylist() == [{"from": 1, "type": 2, "unknown": "u", "self": 3}]
    with pytest.raises(TypeError, match="no field `typ`; did you mean `type`"):
        nerve.msg.message_class("kw_msgs/msg/Odd")(typ=2)
    marker = visualization_msgs.Marker(type=visualization_msgs.Marker.SPHERE, ns="n")
    assert visualization_msgs.Marker.from_arrow(marker.to_arrow()).type == visualization_msgs.Marker.SPHERE


def test_a_strided_array_field_is_made_contiguous():
    frame = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)
    half = frame[:, ::2]  # every other column: not contiguous
    image = sensor_msgs.Image(height=4, width=3, encoding="rgb8", step=9, data=half)
    assert sensor_msgs.Image.from_arrow(image.to_arrow()).data.tolist() == half.reshape(-1).tolist()


def test_a_message_read_from_arrow_reads_each_field_once_on_use_and_copies_stand_alone():
    import copy
    import pickle

    sent = visualization_msgs.MarkerArray(markers=[{"ns": "a", "points": [{"x": 1.5}]}, {"ns": "b", "id": 7}])
    value = sent.to_arrow()
    seen = visualization_msgs.MarkerArray.from_arrow(value)
    del value  # the instance keeps what it reads from
    assert [m.ns for m in seen.markers] == ["a", "b"] and seen.markers[0].points[0].x == 1.5
    assert seen.markers is seen.markers, "read once, then an attribute"
    seen.markers[1].id = 8  # set like any attribute, read from Arrow or not
    assert seen.markers[1].id == 8 and seen != sent
    for twin in (copy.deepcopy(seen), pickle.loads(pickle.dumps(seen))):
        assert twin == seen and twin.markers[1].id == 8
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = seen.nope
    image = sensor_msgs.Image.from_arrow(sensor_msgs.Image(header={"frame_id": "cam"}, encoding="rgb8").to_arrow())
    assert copy.copy(image).header.frame_id == "cam"


def test_values_set_after_construction_are_checked_when_sent_and_read_back_checked():
    image = sensor_msgs.Image(height=2, width=1, encoding="mono8", step=1, data=np.array([5, 6], np.uint8))
    image.header = {"frame_id": "cam", "stamp": {"sec": 3, "nanosec": 4}}  # a dict stands for a message
    image.data = [7, 8]  # a list of ints for uint8[]
    seen = sensor_msgs.Image.from_arrow(image.to_arrow())
    assert (seen.header.frame_id, seen.header.stamp.nanosec, seen.data.tolist()) == ("cam", 4, [7, 8])
    assert not seen.data.flags.writeable, "a received message is read-only: others read the same memory"
    image.data = [7, 300]
    with pytest.raises(TypeError, match=r"sensor_msgs/msg/Image\.data\[\]: 300 does not fit"):
        image.to_arrow()
    image.data, image.encoding = [1, 2], 8
    with pytest.raises(TypeError, match=r"Image\.encoding: a str is expected, not int"):
        image.to_arrow()
    info = sensor_msgs.CameraInfo()
    info.k = [1.0]
    with pytest.raises(ValueError, match=r"CameraInfo\.k: exactly 9 elements are expected, not 1"):
        info.to_arrow()
    pose = geometry_msgs.Pose().to_arrow()
    with pytest.raises(TypeError, match=r"sensor_msgs/msg/Image\.from_arrow: the value is a Struct.*position"):
        sensor_msgs.Image.from_arrow(pose)
    with pytest.raises(IndexError, match="row 1 of a value of 1 rows"):
        geometry_msgs.Pose.from_arrow(pose, 1)
    rows = pa.concat_arrays([geometry_msgs.Point(x=float(i)).to_arrow() for i in range(3)])
    assert geometry_msgs.Point.from_arrow(rows, 2).x == 2.0


def test_shipped_stubs_are_current_and_editors_read_them(tmp_path):
    """Each shipped package's stub is what `python -m nerve.msg stubs` writes today, and a type
    checker reading them catches a misspelt field."""
    from nerve.msg._stubs import stub

    shipped = sorted((REPO / "python" / "nerve" / "msg").glob("*.pyi"))
    assert {p.stem for p in shipped} >= {"sensor_msgs", "geometry_msgs", "std_msgs", "std_srvs"}
    for path in shipped:
        assert path.read_text() == stub(path.stem), f"{path.name} is stale: run `python -m nerve.msg stubs`"
    code = tmp_path / "uses.py"
    code.write_text(
        "from nerve.msg import sensor_msgs, std_srvs\n"
        "height: int = sensor_msgs.Image(header={'frame_id': 'cam'}).height\n"
        "flag: bool = std_srvs.SetBool.Request(data=True).data\n"
        "sensor_msgs.Image(heigth=2)\n"
    )
    checked = subprocess.run([sys.executable, "-m", "mypy", str(code)], capture_output=True, text=True, cwd=tmp_path)
    assert checked.stdout.count("error:") == 1, checked.stdout
    assert 'Unexpected keyword argument "heigth" for "Image"; did you mean "height"?' in checked.stdout


PUBLISHER = """
import sys
from nerve import Publisher
from nerve.msg import sensor_msgs

publisher = Publisher(sys.argv[1])
publisher.wait_for_subscribers(1, timeout=30)
publisher.send(sensor_msgs.JointState(header={"frame_id": "arm"}, name=["shoulder", "elbow"], position=[0.5, -1.25]))
"""


def test_a_message_crosses_processes_on_a_topic(tmp_path):
    """Sent as it is by another process, read back with attribute access on this side."""
    from nerve import Subscriber

    topic = f"msg/joints/{tmp_path.name}"
    with Subscriber(topic) as subscriber:
        sender = subprocess.Popen([sys.executable, "-c", PUBLISHER, topic])
        message = subscriber.recv(timeout=60)
        assert sender.wait(timeout=60) == 0
    assert message is not None
    joints = sensor_msgs.JointState.from_arrow(message["value"])
    assert joints.header.frame_id == "arm" and joints.name == ["shoulder", "elbow"]
    assert joints.position.tolist() == [0.5, -1.25] and joints.velocity.size == 0

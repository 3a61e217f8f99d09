"""Message types: the registry's search order, and ROS 2 type hashes equal to ROS 2's own.

ROS 2's interface packages from PyPI (the test extra) install under ``sys.prefix/share`` the
way an installed ROS 2 does under each ``AMENT_PREFIX_PATH`` entry, each type with the ``.json``
description and hash ROS 2's generator wrote.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import nerve_cmd

ROS_SHARE = Path(sys.prefix) / "share"


def nerve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(nerve_cmd(*args), capture_output=True, text=True, timeout=120, env=env, check=False)


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("AMENT_PREFIX_PATH", "NERVE_TYPES_PATH")}
    env.update(extra)
    return env


def shown_hashes(text: str) -> dict[str, str]:
    """`nerve types show`'s hash of each type (the part names of a service or action)."""
    first = text.split()[0]
    hashes = dict(re.findall(r"^(\S+/\S+/\S+)\nhash: (\S+)", text, re.M))
    alone = re.match(r"^\S+  \(.*\)\nhash: (\S+)", text)
    if alone:
        hashes[first] = alone.group(1)
    return hashes


def test_type_hashes_equal_those_ros_2_wrote_for_its_own_packages() -> None:
    """Every hash ROS 2's generator wrote: messages, services and actions, their parts, and the
    types ROS 2 derives from them (a service's `_Event`, an action's `_SendGoal` and the rest)."""
    expected: dict[str, str] = {}
    for kind in ("msg", "srv", "action"):
        for description in ROS_SHARE.glob(f"*/{kind}/*.json"):
            # A few test types are IDL only (keyed DDS types): nerve reads interface files.
            if not description.with_suffix(f".{kind}").exists():
                continue
            for entry in json.loads(description.read_text()).get("type_hashes", []):
                expected[entry["type_name"]] = entry["hash_string"]
    kinds = {t.split("/")[1] for t in expected}
    assert len(expected) >= 250 and kinds == {"msg", "srv", "action"}, (
        f"ROS 2's interface wheels are missing from {ROS_SHARE} (pip install '.[test]')"
    )
    assert "test_msgs/action/Fibonacci_SendGoal_Event" in expected
    env = clean_env(AMENT_PREFIX_PATH=sys.prefix)
    got: dict[str, str] = {}
    for name in sorted(expected):
        if name in got:
            continue
        shown = nerve("types", "show", name, env=env)
        assert shown.returncode == 0, shown.stderr
        assert f"({ROS_SHARE}/" in shown.stdout.splitlines()[0], "read from the installed package"
        got.update(shown_hashes(shown.stdout))
    assert {t: got.get(t) for t in expected} == expected


def test_folders_are_searched_in_order_before_the_shipped_interfaces(tmp_path: Path) -> None:
    def package(root: Path, name: str, definition: str) -> Path:
        (root / name / "msg").mkdir(parents=True)
        (root / name / "msg" / "Reading.msg").write_text(definition)
        return root

    given = package(tmp_path / "given", "probe_msgs", "float64 given\n")
    from_env = package(tmp_path / "env", "probe_msgs", "float64 from_env\n")
    package(tmp_path / "env", "extra_msgs", "std_msgs/Header header\nuint8[] data\n")
    prefix = tmp_path / "prefix"
    package(prefix / "share", "std_msgs", "")
    (prefix / "share" / "std_msgs" / "msg" / "Reading.msg").rename(prefix / "share" / "std_msgs" / "msg" / "Empty.msg")

    env = clean_env(NERVE_TYPES_PATH=str(from_env), AMENT_PREFIX_PATH=str(prefix))
    first = nerve("types", "--types", str(given), "show", "probe_msgs/Reading", env=env)
    assert first.returncode == 0, first.stderr
    assert "  float64 given" in first.stdout
    second = nerve("types", "show", "probe_msgs/msg/Reading", env=env)
    assert "  float64 from_env" in second.stdout, second.stdout + second.stderr
    listed = nerve("types", "list", env=env).stdout
    assert re.search(rf"^std_msgs/msg/Empty\s+{re.escape(str(prefix))}/share/std_msgs/msg/Empty.msg$", listed, re.M)
    assert re.search(r"^std_msgs/msg/String\s+shipped with nerve$", listed, re.M)
    extra = nerve("types", "show", "extra_msgs/Reading", env=env)
    assert 'arrow: Struct("header": non-null Struct("stamp"' in extra.stdout, extra.stderr
    assert '"data": non-null List(non-null UInt8))' in extra.stdout


def test_an_unknown_type_or_a_broken_file_is_named(tmp_path: Path) -> None:
    broken = tmp_path / "my_msgs" / "msg"
    broken.mkdir(parents=True)
    (broken / "Pose.msg").write_text("geometry_msgs/Point position\nfloat64 yaw 1.5.0\n")
    (broken / "Track.msg").write_text("my_msgs/Missing target\n")
    env = clean_env()
    bad = nerve("types", "--types", str(tmp_path), "show", "my_msgs/Pose", env=env)
    assert bad.returncode != 0
    assert f"{broken / 'Pose.msg'}:2: default of `yaw`: `1.5.0` is not a float64" in bad.stderr
    missing = nerve("types", "--types", str(tmp_path), "show", "my_msgs/Track", env=env)
    assert "unknown type `my_msgs/msg/Missing` (the type of my_msgs/msg/Track.target)" in missing.stderr
    assert str(tmp_path) in missing.stderr
    name = nerve("types", "show", "Image", env=env)
    assert "`Image` is not a type name" in name.stderr


def test_rust_code_is_written_for_a_users_package_and_a_wrong_name_is_named(tmp_path: Path) -> None:
    package = tmp_path / "my_msgs" / "msg"
    package.mkdir(parents=True)
    (package / "Track.msg").write_text("uint8 LOST=3\nstd_msgs/Header header\nfloat64[] speeds\nint32 type 2\n")
    out = tmp_path / "my_msgs.rs"
    made = nerve("types", "--types", str(tmp_path), "rust", "my_msgs", "--out", str(out), env=clean_env())
    assert made.returncode == 0, made.stderr
    code = out.read_text()
    # The shipped Header is nerve_node's; the user's sequence of numbers a shared-memory view.
    assert "pub header: ::nerve_node::msg::std_msgs::msg::Header," in code
    assert "pub speeds: rt::Seq<f64>," in code
    assert "pub r#type: i32," in code and "r#type: 2_i32," in code
    assert "pub const LOST: u8 = 3_u8;" in code
    assert 'const TYPE_NAME: &\'static str = "my_msgs/msg/Track";' in code
    typo = nerve("types", "--types", str(tmp_path), "rust", "my_msg", env=clean_env())
    assert typo.returncode != 0 and "no package `my_msg` defines any type; did you mean `my_msgs`?" in typo.stderr


TYPED_DATAFLOW = """
types: [interfaces]
nodes:
  - id: camera
    path: camera.py
    outputs: [image]
    output_types: {image: std/media/v1/Image}
  - id: viewer
    path: viewer.py
    inputs: {image: camera/image}
    input_types: {image: sensor_msgs/msg/Image}
"""

CAMERA = """
import numpy as np
import pyarrow as pa
import nerve

time = pa.struct([("sec", pa.int32()), ("nanosec", pa.uint32())])
header = pa.struct([("stamp", time), ("frame_id", pa.string())])
image = pa.struct([
    ("header", header), ("height", pa.uint32()), ("width", pa.uint32()), ("encoding", pa.string()),
    ("is_bigendian", pa.uint8()), ("step", pa.uint32()), ("data", pa.list_(pa.uint8())),
])
node = nerve.Node()
try:
    node.send_output("image", pa.array([1.0, 2.0]))
except TypeError as e:
    print("refused:", e)
frame = {
    "header": {"stamp": {"sec": 7, "nanosec": 9}, "frame_id": "camera"},
    "height": 4, "width": 6, "encoding": "rgb8", "is_bigendian": 0, "step": 18,
    "data": np.arange(72, dtype=np.uint8),
}
node.send_output("image", pa.array([frame], type=image))
"""

VIEWER = """
import numpy as np
import nerve

node = nerve.Node()
for event in node:
    if event["type"] != "INPUT":
        continue
    value = event["value"]
    pixels = value.field("data").values.to_numpy(zero_copy_only=True)
    assert np.array_equal(pixels, np.arange(72, dtype=np.uint8)), pixels
    print("first message:", value.field("encoding")[0], value.field("header")[0]["frame_id"], pixels.size)
    break
"""


def test_a_typed_image_travels_and_a_value_of_another_type_is_refused(dataflows, tmp_path: Path) -> None:
    path = dataflows.write(TYPED_DATAFLOW, {"camera.py": CAMERA, "viewer.py": VIEWER})
    (path.parent / "interfaces").mkdir()
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    (refused,) = run.node_lines("camera")
    assert refused.startswith("refused: output `image` is declared `std/media/v1/Image`, whose Arrow type is Struct(")
    assert refused.endswith("this value is Float64: nothing was sent")
    # The refused value never arrived: the image is the first message.
    assert run.node_lines("viewer") == ["first message: rgb8 camera 72"]


def test_validate_refuses_an_edge_whose_ends_disagree(dataflows) -> None:
    path = dataflows.write(
        TYPED_DATAFLOW.replace("sensor_msgs/msg/Image}", "sensor_msgs/msg/CompressedImage}"),
        {"camera.py": "", "viewer.py": ""},
    )
    (path.parent / "interfaces").mkdir()
    checked = nerve("validate", str(path))
    assert checked.returncode != 0
    assert (
        f"{path}:10:" in checked.stderr
        and "node `viewer` reads `camera/image` as `sensor_msgs/msg/CompressedImage`, "
        "but node `camera` declares it `sensor_msgs/msg/Image` (line 6)"
        in checked.stderr
    ), checked.stderr

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
PARTS = re.compile(r"_(Request|Response|Goal|Result|Feedback)$")


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
    expected: dict[str, str] = {}
    for kind in ("msg", "srv", "action"):
        for description in ROS_SHARE.glob(f"*/{kind}/*.json"):
            for entry in json.loads(description.read_text()).get("type_hashes", []):
                expected[entry["type_name"]] = entry["hash_string"]
    # Messages, and the request/response/goal/result/feedback of services and actions.
    wanted = {t: h for t, h in expected.items() if t.split("/")[1] == "msg" or PARTS.search(t)}
    assert len(wanted) >= 100, f"ROS 2's interface wheels are missing from {ROS_SHARE} (pip install '.[test]')"
    env = clean_env(AMENT_PREFIX_PATH=sys.prefix)
    got: dict[str, str] = {}
    for stem in sorted({PARTS.sub("", t) for t in wanted}):
        shown = nerve("types", "show", stem, env=env)
        assert shown.returncode == 0, shown.stderr
        assert f"({ROS_SHARE}/" in shown.stdout.splitlines()[0], "read from the installed package"
        got.update(shown_hashes(shown.stdout))
    assert {t: got.get(t) for t in wanted} == wanted


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

"""The transform tree across real processes: a broadcaster process publishes a moving
world -> base and a static base -> camera; a listener process started later looks the camera
up in the world between two stamps and gets the interpolated pose."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import time

import nerve
import numpy as np
import pytest
from conftest import NODES, nerve_cmd

T0 = 1_700_000_000_000_000_000


def unique_domain() -> int:
    """A domain no other test uses, so parallel tests never hear each other's frames."""
    return 1000 + time.monotonic_ns() % 1_000_000


def here(argv: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def on_host(hosts, number: int):
    return lambda argv: hosts.popen(number, argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def broadcaster(domain: int, count: int = 3000, popen=here) -> subprocess.Popen[str]:
    proc = popen([sys.executable, str(NODES / "tf_broadcaster.py"), str(domain), str(T0), str(count)])
    # The static transforms are out before the listener exists: it must get them anyway.
    assert proc.stdout and proc.stdout.readline().strip() == "static sent", proc.stderr and proc.stderr.read()
    return proc


def expected_camera(when: int) -> tuple[np.ndarray, np.ndarray]:
    """world -> camera at ``when`` as tests/nodes/tf_broadcaster.py moves base."""
    s = (when - T0) / 1e9
    theta = 0.2 * s
    translation = np.array([s + 0.5 * math.cos(theta), 0.5 * s + 0.5 * math.sin(theta), 0.2])
    angle = theta + math.pi / 2
    return translation, np.array([0.0, 0.0, math.sin(angle / 2), math.cos(angle / 2)])


def check_report(report: dict) -> None:
    when = report["time"]
    assert report["stamp"] == when
    assert when % 20_000_000 == 7_000_000  # between two stamps, not on one
    translation, rotation = expected_camera(when)
    np.testing.assert_allclose(report["translation"], translation, atol=1e-9)
    np.testing.assert_allclose(report["rotation"], rotation, atol=1e-9)
    np.testing.assert_allclose(report["camera_origin"], translation, atol=1e-9)
    assert report["frames"] == ["base", "camera", "lander", "marker", "moon", "world"]
    assert report["unknown"].startswith("unknown frame `nowhere` (known frames: base, camera,"), report
    assert "frames `camera` and `lander` are not connected" in report["disconnected"], report
    assert "tree of `world`" in report["disconnected"] and "tree of `moon`" in report["disconnected"], report
    assert "would extrapolate into the past on `world` -> `base`" in report["past"], report
    assert "would extrapolate into the future on `world` -> `base`" in report["future"], report
    assert re.search(r"transforms available from 17000000\d\d\.\d{9} s to ", report["future"]), report


def run_listener(domain: int, popen=here) -> dict:
    listener = popen([sys.executable, str(NODES / "tf_listener.py"), str(domain)])
    out, err = listener.communicate(timeout=120)
    assert listener.returncode == 0, err
    return json.loads(out)


def stop(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.wait()


def test_a_late_listener_looks_up_across_three_frames_with_interpolation() -> None:
    domain = unique_domain()
    sender = broadcaster(domain)
    try:
        check_report(run_listener(domain))
    finally:
        stop(sender)


def test_a_listener_on_another_host_gets_the_same_answer(hosts) -> None:
    domain = unique_domain()
    sender = broadcaster(domain, popen=on_host(hosts, 1))
    try:
        check_report(run_listener(domain, popen=on_host(hosts, 0)))
    finally:
        stop(sender)


def test_tf_tree_and_echo_print_the_frames() -> None:
    domain = unique_domain()
    sender = broadcaster(domain)
    try:
        tree = subprocess.run(
            nerve_cmd("tf", "tree", "--listen", "1", "--domain", str(domain)),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert tree.returncode == 0, tree.stderr
        lines = tree.stdout.splitlines()
        assert lines[:2] == ["moon", "└── lander  (static)"], tree.stdout
        assert lines[2] == "world", tree.stdout
        moving = r"\(moving, 50\.0 Hz, latest 17000000\d\d\.\d{2}0000000 s\)"
        assert re.fullmatch(f"├── base  {moving}", lines[3]), tree.stdout
        assert lines[4] == "│   └── camera  (static)", tree.stdout
        assert re.fullmatch(f"└── marker  {moving}", lines[5]) and len(lines) == 6, tree.stdout
        echo = subprocess.run(
            nerve_cmd("tf", "echo", "base", "camera", "--count", "1", "--domain", str(domain)),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert echo.returncode == 0, echo.stderr
        assert "translation: [0.500000, 0.000000, 0.200000]" in echo.stdout, echo.stdout
        assert "rotation: [0.000000, 0.000000, 0.707107, 0.707107]" in echo.stdout, echo.stdout
    finally:
        stop(sender)
    quiet = subprocess.run(
        nerve_cmd("tf", "tree", "--listen", "0.2", "--domain", str(unique_domain())),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert quiet.returncode == 1 and "no transform heard" in quiet.stderr


def test_in_one_process_bad_input_is_refused_clearly() -> None:
    domain = unique_domain()
    buffer = nerve.TransformBuffer(domain=domain)
    moving = nerve.TransformBroadcaster(domain=domain)
    with pytest.raises(ValueError, match="rotation of `a` -> `b` must be 4 numbers"):
        moving.send("a", "b", [0, 0, 0], [0, 0, 1])
    with pytest.raises(nerve.TransformError, match="not a usable quaternion"):
        moving.send("a", "b", [0, 0, 0], [0, 0, 0, 0])
    moving.send_many([("a", "b", [1, 0, 0], [0, 0, 0, 1], 100), ("a", "b", [3, 0, 0], [0, 0, 0, 1], 300)])
    t = buffer.lookup("a", "b", time=250, timeout=10)
    np.testing.assert_allclose(t.translation, [2.5, 0, 0])
    np.testing.assert_allclose(t.inverse().apply([[2.5, 0, 0], [3.5, 1, 0]]), [[0, 0, 0], [1, 1, 0]])
    np.testing.assert_allclose(t.matrix()[:3, 3], [2.5, 0, 0])
    with pytest.raises(nerve.TransformError, match="extrapolate into the future"):
        buffer.lookup("a", "b", time=301)
    with pytest.raises(nerve.TransformError, match="unknown frame `c`"):
        buffer.lookup("a", "c", timeout=0.2)
    assert issubclass(nerve.TransformError, nerve.NerveError)

"""The types scenario: a typed image beside plain bytes, the consumers' zero-copy check, and the
CDR rows (nerve's and rclpy's, or why rclpy's could not run)."""

import numpy as np
import pyarrow as pa
import pytest

from benches import impl_types
from benches.model import Case
from benches.report import render

IMAGE = "sensor_msgs/msg/Image"


@pytest.mark.timeout(240)
def test_typed_and_plain_consumers_get_views_of_shared_memory_and_the_report_has_every_row(tmp_path, monkeypatch):
    """Both latency cases run for real (a small image, 30 messages); each consumer counts the
    messages whose numpy view was the received shared memory itself, and every one must be. The
    CDR cases run for a moment each; the report has a latency row per implementation, the
    typed-minus-plain line and a CDR row per implementation and message."""
    monkeypatch.setattr(impl_types, "CODEC_SECONDS", 0.05)
    latency = Case("types", 1920 * 3 * 4, 30, rate_hz=100.0, message=IMAGE)
    codecs = [
        Case("types", 1920 * 3 * 2, 3, rate_hz=0, message=IMAGE, codec=True),
        Case("types", 16 * 100, 3, rate_hz=0, message="sensor_msgs/msg/PointCloud2", codec=True),
    ]
    results = []
    for impl in impl_types.IMPLEMENTATIONS:
        for case in [latency, *codecs]:
            if impl.supports(case):
                results.append(impl.run(case, tmp_path / "work"))
    assert len(results) == 6
    assert not [s.error for s in results if s.error], [s.error for s in results]
    for s in results[:2]:
        assert len(s.sent_ns) == 30, (s.implementation, len(s.sent_ns))
        assert s.views == s.messages == 30, f"{s.implementation}: {s.views} of {s.messages} were views"
        assert s.steps_us and s.steps_us["send"] > 0 and s.steps_us["read"] > 0, s.steps_us
    for s in results[2:]:
        assert s.cdr["cdr_bytes"] > s.case.size and len(s.cdr["encode_ns"]) >= 3 and len(s.cdr["decode_ns"]) >= 3
    report = tmp_path / "benchmarks.md"
    render(results, "test", report, tmp_path / "img")
    text = report.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    for name in ("nerve typed (Image)", "nerve plain (uint8 array)"):
        row = next(line for line in rows if line.startswith(f"| {name} | 23,040 B @ 100 Hz |"))
        assert "numpy views of the received shared memory: 30 of 30 messages" in row, row
    assert "Typed minus plain: 23,040 B: p50 " in text
    for name in ("nerve.msg to_cdr, from_cdr", "rclpy serialize, deserialize"):
        for message in ("Image 1920x2 rgb8", "PointCloud2, 100 points"):
            assert any(line.startswith(f"| {name} | {message}") for line in rows), (name, message, rows)


def test_a_copy_or_memory_outside_shared_memory_is_not_counted_as_a_view(monkeypatch):
    """The consumers' check must be able to fail: a numpy copy of the received array is not a
    view of it, and a view of ordinary memory is not shared memory."""
    monkeypatch.syspath_prepend(str(impl_types.NODE.parent))
    import types_node

    shm = types_node.SharedMemory()
    value = pa.array(np.arange(64, dtype=np.uint8))
    assert not types_node.is_view(value.to_numpy(zero_copy_only=True), value, "plain", shm), "not in /dev/shm"
    shm.holds = lambda address, size: True  # as if the array were in shared memory
    assert types_node.is_view(value.to_numpy(zero_copy_only=True), value, "plain", shm)
    assert not types_node.is_view(value.to_numpy(zero_copy_only=True).copy(), value, "plain", shm), "a copy"
    from nerve.msg import sensor_msgs

    image = sensor_msgs.Image(height=2, width=4, encoding="rgb8", step=12, data=np.ones(24, dtype=np.uint8))
    typed = image.to_arrow()
    assert types_node.is_view(sensor_msgs.Image.from_arrow(typed).data, typed, "typed", shm)
    assert not types_node.is_view(np.array(sensor_msgs.Image.from_arrow(typed).data), typed, "typed", shm)


def test_rclpy_rows_say_why_when_rclpy_is_not_importable(tmp_path, monkeypatch):
    """Where rclpy cannot be imported the codec process reports that instead of failing."""
    fake = tmp_path / "no-rclpy" / "rclpy"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no ROS 2 here')\n")
    monkeypatch.setenv("PYTHONPATH", str(fake.parent))
    monkeypatch.setattr(impl_types, "CODEC_SECONDS", 0.01)
    rclpy = next(i for i in impl_types.IMPLEMENTATIONS if getattr(i, "impl", None) == "rclpy")
    s = rclpy.run(Case("types", 1920 * 3, 2, rate_hz=0, message=IMAGE, codec=True), tmp_path / "work")
    assert s.error and "rclpy is not importable" in s.error and "no ROS 2 here" in s.error, s.error
    report = tmp_path / "benchmarks.md"
    render([s], "test", report, tmp_path / "img")
    assert "| rclpy serialize, deserialize | Image 1920x1 rgb8" in report.read_text()
    assert "could not run: rclpy is not importable" in report.read_text()

"""The view scenario: the graph run without a viewer and with `nerve view` and an emulated page
open on it, the page's frames, and the report's rows and comparison."""

import re

import pytest

from benches import impl_view
from benches.model import Samples
from benches.report import render
from benches.scenarios import cases


@pytest.mark.timeout(180)
def test_the_page_gets_the_image_and_the_report_compares_the_graph_with_and_without_the_viewer(tmp_path):
    """The quick cases run for real, each implementation once for both streams. Every message
    arrives; with the viewer, the page got the camera's channel as images (RGBA of the right
    size, else the page fails the run) and the cloud's as points (as many as the header says),
    and the viewer used CPU. The report has a row per implementation and stream, the page's
    count and the p50 comparison."""
    quick = cases("view", quick=True)
    results = [impl.run(case, tmp_path / "work") for case in quick for impl in impl_view.IMPLEMENTATIONS]
    assert not [s.error for s in results if s.error], [s.error for s in results]
    for s in results:
        assert len(s.sent_ns) == s.case.count, (s.implementation, s.case.key, len(s.sent_ns))
    image, cloud = (next(s for s in results if s.viewer and s.case == case) for case in quick)
    assert set(image.viewer["frames"]) == {"image"} and image.viewer["frames"]["image"] > 0, image.viewer
    assert set(cloud.viewer["frames"]) == {"points"} and cloud.viewer["frames"]["points"] > 0, cloud.viewer
    assert image.viewer["cpu_ns"] > 0 and image.viewer["seconds"] > 0 and image.viewer["graph_polls"] > 0
    assert not [s for s in results if s.implementation == "nerve without viewer" and s.viewer]
    # The raw samples keep what the viewer did (`--render` rebuilds the report from them).
    assert Samples.load(image.save(tmp_path / "raw")).viewer == image.viewer

    report = tmp_path / "benchmarks.md"
    render(results, "test", report, tmp_path / "img")
    text = report.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    for name in ("nerve without viewer", "nerve with viewer"):
        for stream in ("Image 640x480 rgb8 @ 30 Hz", "PointCloud2, 100,000 points @ 10 Hz"):
            assert any(line.startswith(f"| {name} | {stream} |") for line in rows), (name, stream, rows)
    frames = image.viewer["frames"]["image"]
    shown = f"the page showed {frames} of {image.case.count} ({frames} as image)"
    assert any(line.startswith("| nerve with viewer | Image") and shown in line for line in rows), rows
    compared = r"p50 without the viewer → with it: \**Image 640x480 rgb8 [\d.,]+ → [\d.,]+ µs \([+-][\d.]+%\)"
    assert re.search(compared, text), text
    assert "The `nerve view` process (one of its own) used " in text

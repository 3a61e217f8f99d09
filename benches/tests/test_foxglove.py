"""The foxglove scenario: `nerve foxglove` and foxglove-sdk's own server forwarding the same
streams to one Foxglove client, the CPU each used with the client and without one, and the
report's rows and comparison."""

import re

import pytest

from benches import impl_foxglove
from benches.model import WARMUP, Samples
from benches.report import render
from benches.scenarios import cases

pytest.importorskip("foxglove", reason="the foxglove scenario compares with the foxglove-sdk package")


@pytest.mark.timeout(300)
def test_both_servers_forward_both_streams_and_the_report_compares_their_cpu_per_mb(tmp_path):
    """The quick cases run for real, each server once for both streams. The client received
    messages of both channels from both servers, of the same CDR sizes, and every byte it counted
    in its window is one of those messages; each measured process used CPU with the client. The
    report has a row per server and stream, and the table of CPU per MB forwarded."""
    quick = cases("foxglove", quick=True)
    results = [impl.run(case, tmp_path / "work") for case in quick for impl in impl_foxglove.IMPLEMENTATIONS]
    assert not [s.error for s in results if s.error], [s.error for s in results]
    image_case = quick[0]
    figures = {}
    for s in results:
        # The stream's messages arrived, past the warm-up the window waits for (the sequence
        # numbers' gaps, if any, are the report's to say).
        assert len(s.sent_ns) > WARMUP and s.lost is not None, (s.implementation, s.case.key, len(s.sent_ns))
        f = s.foxglove
        assert f is not None, s.implementation
        assert f["messages"]["image"] >= image_case.count and f["messages"]["cloud"] > 0, f["messages"]
        assert f["bytes"] == sum(n * f["sizes"][kind] for kind, n in f["messages"].items()), f
        assert f["cpu_ns"] > 0 and f["seconds"] > 0 and f["idle_seconds"] > 0, f
        figures[s.implementation] = f
    assert set(figures) == {"nerve foxglove", "foxglove-sdk server"}, set(figures)
    # The same bytes from both: nerve's CDR of each message, which the SDK's process logged.
    nerve, sdk = figures["nerve foxglove"], figures["foxglove-sdk server"]
    assert nerve["sizes"] == sdk["sizes"] and nerve["sizes"]["image"] > 640 * 480 * 3, nerve["sizes"]
    # The raw samples keep the figures (`--render` rebuilds the report from them).
    assert Samples.load(results[0].save(tmp_path / "raw")).foxglove == results[0].foxglove

    report = tmp_path / "benchmarks.md"
    render(results, "test", report, tmp_path / "img")
    text = report.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    for name in ("nerve foxglove", "foxglove-sdk server"):
        for stream in ("Image 640x480 rgb8 @ 30 Hz", "PointCloud2, 100,000 points @ 10 Hz"):
            line = next((x for x in rows if x.startswith(f"| {name} | {stream} |")), None)
            assert line is not None and "the client received" in line, (name, stream, rows)
        # Its CPU per MB (the difference of two windows: a number, whatever its sign on a busy
        # machine), CPU % with the client and without, MB/s, and the windows' messages.
        figures_row = rf"^\| {name} \| -?[\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d,]+ clouds, [\d,]+ images \|"
        assert re.search(figures_row, text, re.MULTILINE), rows
    assert re.search(r"`nerve foxglove` used -?[\d.]+ ms of CPU per MB forwarded, -?[\d.]+ times", text), text

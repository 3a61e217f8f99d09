"""The viewer-soak scenario: the SLAM example run with `nerve view` and an emulated page open on
it, sampled from /proc, and the report's section on it."""

import re
import shutil

import numpy as np
import pytest

from benches import impl_viewer_soak
from benches.model import Case, Samples
from benches.report import render
from benches.scenarios import cases

MIB = 1024  # KiB


def section(report) -> str:
    """The viewer-soak section of a report."""
    text = report.read_text()
    return text[text.index("## The dashboard over a long run") :]


def synthetic(seconds: float = 120.0) -> dict:
    """A run's `viewer` as the harness records it, every 2 s: the viewer at 5% of a core, its
    private memory flat at 40 MiB and its shared memory growing by 1 MiB a minute; the page at
    2% of a core for the first half and 4% for the second (the middle window, 54 to 64 s, 2.8%), flat at 30 MiB."""
    t = np.arange(0.0, seconds + 1, 2.0)
    page_cpu = np.where(t <= seconds / 2, 0.02 * t, 0.02 * seconds / 2 + 0.04 * (t - seconds / 2)) * 1e9
    series = {
        "seconds": t,
        "view_cpu_ns": 0.05e9 * t,
        "view_rss_kib": 40 * MIB + (2 + t / 60) * MIB,
        "view_shmem_kib": (2 + t / 60) * MIB,
        "page_cpu_ns": page_cpu,
        "page_rss_kib": np.full_like(t, 30 * MIB),
        "page_shmem_kib": np.zeros_like(t),
        "map_points": np.minimum(1000 * t, 37_000),
        "run_shm_kib": 20 * MIB + t / 60 * MIB,
    }
    return {
        "series": {key: [int(v) if key != "seconds" else float(v) for v in values] for key, values in series.items()},
        "frames": {"map": {"points": 590}, "path": {"points": 591}, "pose": {"numbers": 592}, "tf": {"tree": 121}},
        "graph_polls": 121,
        "transforms": ["map → base", "base → lidar"],
        "mapper": "mapper: 1200 scans",
        "monitor": "monitor: 1200 maps",
        "cpu_ns": 6_000_000_000,
        "page_cpu_ns": 3_600_000_000,
        "seconds": seconds,
    }


def cells(text: str, process: str) -> list[str]:
    line = next(x for x in text.splitlines() if x.startswith(f"| {process}"))
    return [c.strip() for c in line.strip("|").split("|")]


def test_the_section_gives_cpu_and_rss_at_start_middle_and_end_and_which_memory_grows(tmp_path):
    """From the samples alone: CPU per window from the CPU times, RSS as the window's mean, the
    slopes after the warm-up, with the viewer's growth (all of it shared memory) in bold and its
    private memory flat; what the page showed and the nodes' last words; no latency table."""
    case = cases("viewer-soak", quick=True)[0]
    samples = Samples("nerve view", case, viewer=synthetic())
    report = tmp_path / "benchmarks.md"
    render([samples], "test", report, tmp_path / "img")
    text = section(report)
    assert "| p50 |" not in text, text
    view = cells(text, "`nerve view`")
    assert view[1:4] == ["5.0", "5.0", "5.0"], view
    # Mean RSS over the first, middle and last 6 samples of 61: 42 MiB plus the shared memory then.
    assert view[4:7] == ["42.1", "43.0", "43.9"], view
    assert view[7:] == ["**+1.00 (growing)**", "+0.00 (flat)"], view
    page = cells(text, "the page")
    assert page[1:4] == ["2.0", "2.8", "4.0"] and page[4:7] == ["30.0"] * 3, page
    assert page[7:] == ["+0.00 (flat)", "+0.00 (flat)"], page
    assert "for 60 s, " in text, text
    shown = "The page showed 590 of `map` (points), 591 of `path` (points), 592 of `pose` (numbers), 121 of `tf` (tree)"
    assert shown in text and "map → base, base → lidar at the end" in text, text
    assert "grew from 0 to 37,000 points" in text and "from 20.0 to 22.0 MiB" in text, text
    assert '"mapper: 1200 scans"' in text and '"monitor: 1200 maps"' in text, text


def test_a_run_that_failed_says_why_in_the_section(tmp_path):
    samples = Samples("nerve view", cases("viewer-soak", quick=False)[0], error="nerve run failed: monitor: boom")
    report = tmp_path / "benchmarks.md"
    render([samples], "test", report, tmp_path / "img")
    text = section(report)
    assert "for 10 minutes, " in text, text
    assert "**nerve view could not run: nerve run failed: monitor: boom**" in text, text


@pytest.mark.timeout(240)
def test_the_example_runs_with_the_page_open_and_is_sampled(tmp_path):
    """A short soak for real: every sample taken, the page got every channel and the transform
    tree, the monitor's checks passed, and the report has both processes' rows."""
    case = Case("viewer-soak", 0, 0, rate_hz=0, seconds=12.0)
    samples = impl_viewer_soak.IMPLEMENTATIONS[0].run(case, tmp_path / "work")
    assert samples.error is None, samples.error
    v = samples.viewer
    assert set(v["series"]) == set(impl_viewer_soak.COLUMNS), v["series"].keys()
    assert len(v["series"]["seconds"]) == 7, v["series"]["seconds"]
    kinds = {"map": "points", "path": "points", "pose": "numbers", "tf": "tree"}
    assert all(v["frames"][channel][kind] > 0 for channel, kind in kinds.items()), v["frames"]
    assert {"map → base", "base → lidar"} <= set(v["transforms"]), v["transforms"]
    assert v["monitor"].startswith("monitor: ") and v["mapper"].startswith("mapper: "), (v["monitor"], v["mapper"])
    points = v["series"]["map_points"]
    assert 0 < points[0] < points[-1], points
    assert v["series"]["view_cpu_ns"][-1] > v["series"]["view_cpu_ns"][0], v["series"]
    assert Samples.load(samples.save(tmp_path / "raw")).viewer == v
    report = tmp_path / "benchmarks.md"
    render([samples], "test", report, tmp_path / "img")
    text = section(report)
    assert cells(text, "`nerve view`")[0] and cells(text, "the page")[0], text


@pytest.mark.timeout(240)
def test_a_run_whose_monitor_fails_says_why(tmp_path, monkeypatch):
    """The example's monitor finding a map point off every surface (its tolerance set to 0 in a
    copy) fails the run, and the error names the monitor's reason."""
    example = tmp_path / "slam"
    shutil.copytree(impl_viewer_soak.SLAM, example, ignore=shutil.ignore_patterns("__pycache__"))
    monitor = example / "monitor.py"
    strict, found = re.subn(r"(?m)^TOLERANCE = .*$", "TOLERANCE = 0.0", monitor.read_text())
    assert found == 1
    monitor.write_text(strict)
    monkeypatch.setattr(impl_viewer_soak, "SLAM", example)
    samples = impl_viewer_soak.IMPLEMENTATIONS[0].run(Case("viewer-soak", 0, 0, seconds=4.0), tmp_path / "work")
    assert samples.error and "monitor: AssertionError: a map point" in samples.error, samples.error

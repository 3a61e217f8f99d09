"""The walker scenario: which implementations run its cases, the dataflow each nerve run gets, how
AVI's results are read, and the report's section (none of it needs root)."""

import os
import sys
from pathlib import Path

import pytest
import yaml

from benches import impl_walker
from benches.__main__ import implementations, runs_case
from benches.model import Samples
from benches.report import render
from benches.scenarios import cases

WALKER = Path(__file__).resolve().parent.parent.parent / "examples" / "walker"


def test_each_mapping_is_a_case_that_nerve_and_zeromq_run_and_nothing_else():
    impls = implementations(None, baseline=sys.executable)
    for quick, seconds in ((True, 5), (False, 20)):
        planned = cases("walker", quick)
        assert [(c.mapping, c.seconds) for c in planned] == [(m, seconds) for m in (1, 2, 3)]
        for case in planned:
            assert [i for i in impls if runs_case(i, case)] == list(impl_walker.IMPLEMENTATIONS), case.key


def test_without_root_each_implementation_s_row_says_why_and_where_the_modules_would_run(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    case = cases("walker", quick=True)[2]
    for impl in impl_walker.IMPLEMENTATIONS:
        samples = impl.run(case, tmp_path)
        assert samples.error == "needs root (network namespaces)", (impl.NAME, samples.error)
        assert samples.note == "board 1 (host 0): avi; board 2 (host 1): loc, pt, hm, ltp, stp, bc, hc"


def test_nerve_runs_the_examples_dataflow_with_the_run_s_length_and_results_file(tmp_path):
    """The copy names examples/walker/module.py wherever the suite runs, and changes nothing else
    but the environment: every module keeps its label and its `realtime:`."""
    case = cases("walker", quick=True)[1]
    copy = yaml.safe_load(impl_walker.dataflow(case, tmp_path).read_text())
    original = yaml.safe_load((WALKER / "dataflow.yml").read_text())
    assert copy["env"] == {"WALKER_SECONDS": "5", "WALKER_RESULTS": str(tmp_path / "avi.json")}
    assert [node["path"] for node in copy["nodes"]] == [str(WALKER / "module.py")] * 8
    for ours, theirs in zip(copy["nodes"], original["nodes"], strict=True):
        assert {**ours, "path": theirs["path"]} == theirs
        assert ours["deploy"] == {"labels": {ours["id"]: "true"}} and ours["realtime"]["lock_memory"], ours


def test_avi_s_latencies_and_losses_come_from_its_results_file(tmp_path):
    """What examples/walker's Latencies.save writes; a run whose AVI wrote nothing fails, saying so."""
    results = tmp_path / "avi.json"
    results.write_text('{"latency_ns": {"pose": [1000, 3000], "heatmap": [2000]}, "lost": 4}')
    samples = Samples("nerve", cases("walker", quick=True)[0])
    impl_walker.take_avi(samples, results)
    assert sorted(samples.latencies_us()) == [1.0, 2.0, 3.0] and samples.lost == 4
    with pytest.raises(RuntimeError, match="AVI wrote no results"):
        impl_walker.take_avi(samples, tmp_path / "missing.json")


def test_the_report_gives_each_mapping_the_papers_figures_over_the_runs_and_says_where_modules_ran(tmp_path):
    """Three runs: the messages and losses of all of them, the worst message as max, the median
    run's mean; a run that failed is counted and its reason given; a mapping whose runs all
    failed says why. The raw samples keep AVI's latencies and losses (`--render`)."""
    one, two = cases("walker", quick=True)[:2]
    results = []
    for run, (base_us, lost) in enumerate(((100, 0), (300, 2), (200, 0))):
        s = Samples("nerve", two, run=run, note=impl_walker.placement(2), lost=lost)
        # 100 messages at base_us, one of them ten times slower: mean 1.09 * base_us.
        s.by_topic_ns = {"pose": [base_us * 1000] * 79 + [base_us * 10_000], "heatmap": [base_us * 1000] * 20}
        results.append(s)
    failed = Samples("zeromq (pyzmq)", two, run=0, note=impl_walker.placement(2), error="failed: ['pt: 0 of 2']")
    zmq = Samples("zeromq (pyzmq)", two, run=1, note=impl_walker.placement(2), lost=0)
    zmq.by_topic_ns = {"pose": [50_000] * 10}
    root = "needs root (network namespaces)"
    results += [failed, zmq, Samples("nerve", one, note=impl_walker.placement(1), error=root)]
    saved = [Samples.load(s.save(tmp_path / "raw")) for s in results]
    assert saved[1].by_topic_ns == results[1].by_topic_ns and saved[1].lost == 2

    report = tmp_path / "benchmarks.md"
    render(saved, "test", report, tmp_path / "img")
    text = report.read_text()
    assert "mapping 2: board 1 (host 0): hm, ltp, avi; board 2 (host 1): loc, pt, stp, bc, hc" in text, text
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines() if line.startswith("| ")]
    assert [r[:2] for r in rows[1:]] == [["1", "nerve"], ["2", "nerve"], ["2", "zeromq (pyzmq)"]], rows
    assert rows[1][2:] == ["-", "-", "-", "-", "-", "-", f"could not run: {root}"], rows[1]
    assert rows[2][2:5] == ["300", "3,000", "218.0"] and rows[2][7] == "**2**", rows[2]
    assert "mean by topic heatmap 200.0, pose 222.5" in rows[2][8] and "3 runs, mean 109.0 to 327.0" in rows[2][8]
    assert rows[3][2:4] == ["10", "50.0"] and rows[3][7] == "0", rows[3]
    assert "**1 of 2 runs could not run: failed: ['pt: 0 of 2']**" in rows[3][8], rows[3]

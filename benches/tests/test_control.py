"""The control-loop scenario: which implementations run its case, the dataflow each nerve run gets
from the example, the robot's record in the samples, and the report's section (none of it needs
root); then short real runs of the loop."""

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from benches import impl_control, native_nodes
from benches.__main__ import implementations, runs_case
from benches.model import WARMUP, Samples
from benches.peers import venv
from benches.report import render
from benches.scenarios import cases

EXAMPLE = Path(__file__).resolve().parent.parent.parent / "examples" / "force-control"


def test_the_loop_is_one_case_that_nerve_realtime_nerve_and_zeromq_run_and_nothing_else():
    """60 s of the loop (5 s with --quick), one reading per period; no peer, baseline build or
    plain nerve implementation takes part."""
    impls = implementations(None, baseline="/usr/bin/python3")
    for quick, seconds in ((True, 5.0), (False, 60.0)):
        (case,) = cases("control-loop", quick)
        assert (case.seconds, case.rate_hz, case.count, case.size) == (seconds, 1000.0, seconds * 1000, 24)
        assert [i for i in impls if runs_case(i, case)] == list(impl_control.IMPLEMENTATIONS), case.key
    assert [i.NAME for i in impl_control.IMPLEMENTATIONS] == ["nerve", "nerve (realtime)", "zeromq (ipc)"]


@pytest.mark.parametrize("realtime", [False, True])
def test_nerve_runs_the_examples_own_dataflow(tmp_path, realtime):
    """The copy differs from examples/force-control/dataflow.yml only where a run must: the
    suite's build of the robot, the run's length and record after the example's own args, the
    controller's absolute path, and `realtime:` on both nodes for the realtime implementation.
    The keep-latest queues stay as the example has them."""
    (case,) = cases("control-loop", quick=True)
    ours = yaml.safe_load(impl_control.dataflow(case, tmp_path, realtime))
    example = yaml.safe_load((EXAMPLE / "dataflow.yml").read_text())
    for mine, theirs in zip(ours["nodes"], example["nodes"], strict=True):
        assert ("realtime" in mine) == realtime, mine
        if realtime:
            assert mine.pop("realtime") == {"priority": 80, "policy": "fifo", "lock_memory": True}
        if mine["id"] == "robot":
            assert "build" not in mine and mine.pop("path") == str(native_nodes.FORCE_ROBOT)
            assert mine.pop("args") == f"{theirs['args']} --seconds 5 --record {tmp_path / 'loop.txt'}"
            del theirs["build"], theirs["path"], theirs["args"]
        else:
            assert mine.pop("path") == str(EXAMPLE / theirs.pop("path"))
        assert mine == theirs


def loop_samples(name: str, round_trip_us: float, run: int = 0, cycles: int = 110) -> Samples:
    """A run of `cycles` readings at 1 kHz, each answered after `round_trip_us` but for two: one
    never answered, one answered after 900 µs. One reading is sent 300 µs late (its period and
    the next are 300 µs off); two answers missed their deadline, one of them in the warm-up."""
    (case,) = cases("control-loop", quick=True)
    sent = [c * 1_000_000 + (300_000 if c == 50 else 0) for c in range(cycles)]
    round_trips = [int(round_trip_us * 1000)] * cycles
    round_trips[60], round_trips[70] = -1, 900_000
    missed = [0] * cycles
    missed[3] = missed[60] = 1
    s = Samples(name, case, run=run)
    s.control = {"sent_ns": sent, "round_trip_ns": round_trips, "missed": missed}
    return s


def section(results: list[Samples], tmp_path: Path) -> list[str]:
    """The rows of the report's control-loop section."""
    report = tmp_path / "benchmarks.md"
    render(results, "test", report, tmp_path / "img")
    text = report.read_text().split("## ORC's force loop")[1]
    assert "| implementation | cycles | round trip p50 | p99 | p99.9 | max | period jitter p99 | max |" in text
    return [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| implementation")]


def test_report_aggregates_the_runs_as_the_suite_does(tmp_path):
    """Per implementation: the cycles of all runs after each one's warm-up, the median of the runs'
    round-trip p50, the worst round trip of all, the worst period, the missed deadlines of all
    runs and their share, the readings never answered and the spread of the p50s."""
    runs = [loop_samples("nerve", us, run) for run, us in enumerate((50.0, 70.0, 60.0))]
    (row,) = section(runs, tmp_path)
    cells = [c.strip() for c in row.strip("|").split("|")]
    cycles = 3 * (110 - WARMUP)
    assert cells[:2] == ["nerve", f"{cycles}"], cells
    assert cells[2] == "60.0" and cells[5] == "900.0", cells  # median p50, worst round trip
    assert cells[7] == "300.0", cells  # the worst period's jitter, µs
    assert cells[8] == f"3 ({100 * 3 / cycles:.2f}%)", cells  # one missed per run after the warm-up
    assert "3 readings never answered" in cells[9] and "3 runs, round trip p50 50.0 to 70.0" in cells[9], cells


def test_report_says_why_a_run_could_not_run(tmp_path):
    """A failed run's reason is in its implementation's row: in bold beside the others' figures,
    or in place of the figures when no run ran; the notes say how each implementation ran."""
    failed = replace(loop_samples("nerve (realtime)", 40.0, run=1), control=None, error="nerve run failed: [refused]")
    failed.note = "both nodes realtime"
    ok = loop_samples("nerve (realtime)", 40.0)
    ok.note = failed.note
    zmq = Samples("zeromq (ipc)", ok.case, error="the ZeroMQ robot was not built")
    rows = section([ok, failed, zmq], tmp_path)
    realtime = next(r for r in rows if r.startswith("| nerve (realtime) | 100 |"))
    assert "**1 of 2 runs could not run: nerve run failed: [refused]**" in realtime, realtime
    assert "both nodes realtime" in realtime, realtime
    zmq_row = next(r for r in rows if r.startswith("| zeromq (ipc) | - |"))
    assert "could not run: the ZeroMQ robot was not built" in zmq_row, zmq_row


def test_the_robots_record_is_read_into_the_samples_and_kept_by_save_and_load(tmp_path):
    """A run without its record says so instead of stopping the suite."""
    (tmp_path / "loop.txt").write_text("1000 -1 1\n2000100 55000 0\n")
    (case,) = cases("control-loop", quick=True)
    s = impl_control.take_record(Samples("nerve", case), tmp_path)
    assert s.error is None and s.control == {"sent_ns": [1000, 2000100], "round_trip_ns": [-1, 55000], "missed": [1, 0]}
    assert Samples.load(s.save(tmp_path / "raw")).control == s.control
    missing = impl_control.take_record(Samples("nerve", case), tmp_path / "elsewhere")
    assert missing.control is None and missing.error.startswith("the robot's record: "), missing.error


def short_run(impl, tmp_path: Path) -> Samples:
    """One second of the loop with `impl`, the robots built first (into the target folder)."""
    native_nodes.build_control_loop()
    (case,) = cases("control-loop", quick=True)
    return impl.run(replace(case, seconds=1.0, count=1000), tmp_path)


def assert_a_whole_record(s: Samples) -> None:
    """The run succeeded (the controller brought the force to its setpoint) and every period has
    its reading, sent in order; how many answers came in time is the machine's, not checked."""
    assert s.error is None, s.error
    assert [len(s.control[k]) for k in ("sent_ns", "round_trip_ns", "missed")] == [s.case.count] * 3
    assert s.control["sent_ns"] == sorted(s.control["sent_ns"])
    assert set(s.control["missed"]) <= {0, 1} and min(s.control["round_trip_ns"]) >= -1


@pytest.mark.timeout(300)  # builds the robots
def test_a_short_loop_over_nerve(tmp_path):
    assert_a_whole_record(short_run(impl_control.IMPLEMENTATIONS[0], tmp_path))


@pytest.mark.timeout(300)
@pytest.mark.skipif(not venv.STAMP.exists(), reason="no peers' venv (pyzmq): python -m benches.peers.venv")
def test_a_short_loop_over_zeromq(tmp_path):
    assert_a_whole_record(short_run(impl_control.IMPLEMENTATIONS[2], tmp_path))

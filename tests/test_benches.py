"""The benchmark suite runs end to end (a short version; timings are not asserted here)."""

import itertools
import json
import mmap
import os
import struct
import subprocess
import sys
import threading
import time

import pytest
from conftest import REPO

from benches.impl_floor import _consume
from benches.model import WARMUP


@pytest.mark.timeout(1200)  # the quick suite: ~3 min here, and a 900 s bound of its own
def test_quick_benchmark_produces_samples_for_every_case(tmp_path):
    report = tmp_path / "benchmarks.md"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benches",
            "--quick",
            "--messages",
            "70",
            "--scenarios",
            "latency-size,fan-out,round-trip,cpu,throughput,cpu-latency,topics,lan",
            "--out",
            str(tmp_path / "raw"),
            "--report",
            str(report),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    files = sorted((tmp_path / "raw").glob("*.json"))
    assert files, "no raw samples written"
    for f in files:
        data = json.loads(f.read_text())
        assert data["error"] is None, f"{f.name}: {data['error']}"
        assert data["rtt_ns"] or data["received_ns"], f"{f.name}: no samples"
        if data["case"]["scenario"] == "latency-size":
            assert data["case"]["count"] == 70, f.name  # --messages, not --quick's 60
        if data["case"]["scenario"] == "cpu":
            # CPU time covers the messages after the warm-up, on both ends.
            assert data["producer_cpu_messages"] == data["case"]["count"] - WARMUP, f.name
            if data["implementation"].startswith("floor"):
                # Its reader starts counting at the first wake past the warm-up, which may have
                # taken two messages at once.
                assert 0 < data["consumer_cpu_messages"] <= data["case"]["count"] - WARMUP, f.name
            else:
                assert data["consumer_cpu_messages"] == data["case"]["count"] - WARMUP, f.name
            assert data["producer_cpu_ns"] > 0 and data["consumer_cpu_ns"] > 0, f.name
    text = report.read_text()
    assert "| nerve | 8 B @ 50 Hz |" in text and "| floor (eventfd + shm) | 1 MiB @ 50 Hz |" in text
    floor_fan_out = next(x for x in text.splitlines() if x.startswith("| floor (eventfd + shm) | 8 B @ 50 Hz, 1→8 |"))
    assert "spread p50" in floor_fan_out and "slowest reader p50" in floor_fan_out, floor_fan_out
    assert "producer " in next(x for x in text.splitlines() if x.startswith("| nerve | 32 MiB @ 50 Hz, loan |"))
    # The floor's CPU per message stands beside each size's: what waking a Python reader costs.
    floor_cpu = next(x for x in text.splitlines() if x.startswith("| floor (eventfd + shm) | 4 MiB @ 50 Hz, loan |"))
    assert "producer " in floor_cpu and "consumer " in floor_cpu, floor_cpu
    for transport in ("process", "host", "network"):
        assert f"| nerve topics ({transport}) | 4 MiB @ 50 Hz |" in text
    for way in ("nerve cluster", "zenoh (plain, Rust)"):
        assert f"| {way} | 4 MiB @ 20 Hz |" in text, text
    assert "| zenoh (plain, Rust) | 1 MiB @ 20 Hz, 1→4 |" in text
    # Idle CPUs kept polling: nerve's nodes ask for it, the harness holds it for the floor.
    polling = text.split("## Opt-in idle CPUs that poll")[1].split("\n## ")[0]
    assert "| floor (eventfd + shm) | 8 B @ 50 Hz |" in polling, polling
    assert "spread p50" in next(x for x in polling.splitlines() if x.startswith("| nerve | 4 MiB @ 50 Hz, 1→4 |"))
    (yml,) = (tmp_path / "raw" / "work" / "run0").glob("nerve--cpu-latency-8B-*/dataflow.yml")
    assert yml.read_text().count("realtime: {cpu_latency_us: 0}") == 2, yml.read_text()


def test_repeated_runs_are_reported_as_medians_with_the_worst_max(tmp_path):
    """With --repeat, a row quotes each percentile as the median of the runs' own and the worst
    message of all runs as its max; the raw samples of each run are kept apart."""
    from benches.model import Case, Samples
    from benches.report import render

    case = Case("latency-size", 8, 110)
    runs = []
    for run, base_us in enumerate((100, 300, 200)):
        s = Samples("nerve", case, run=run)
        # 10 warm-up messages (left out), then 100 at base_us, the last of them base_us * 10.
        lat_us = [5000] * 10 + [base_us] * 99 + [base_us * 10]
        s.sent_ns = list(range(0, 110 * 1000, 1000))
        s.received_ns = [t + int(u * 1000) for t, u in zip(s.sent_ns, lat_us, strict=True)]
        s.consumer = [0] * 110
        assert s.save(tmp_path).name == f"nerve--{case.key}--{run}.json"
        runs.append(s)
    report = tmp_path / "benchmarks.md"
    render([Samples.load(p) for p in sorted(tmp_path.glob("*.json"))], "test", report, tmp_path / "img")
    text = report.read_text()
    assert "Every case ran 3 times" in text, text
    line = next(x for x in text.splitlines() if x.startswith("| nerve | 8 B @ 50 Hz |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[2:5] == ["300", "200.0", "200.0"], line  # n of all runs; median p50, p90
    assert cells[7] == "3,000", line  # max: the worst of all runs, not a median
    assert "3 runs, p50 100.0 to 300.0" in cells[8], line


def test_floor_reader_woken_once_for_two_stamps_does_not_wait_for_a_third(tmp_path):
    """A producer that catches up signals twice before its reader runs: one eventfd read takes
    both signals, and the reader must count them (it used to wait forever for one more)."""
    efd = os.eventfd(0)
    shm = mmap.mmap(-1, mmap.PAGESIZE)
    struct.pack_into("<q", shm, 0, 42)
    os.eventfd_write(efd, 1)
    os.eventfd_write(efd, 1)
    out = tmp_path / "c0.txt"
    reader = threading.Thread(target=_consume, args=(efd, shm, 2, out), daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive(), "the reader still waits for a signal that will never come"
    lines = out.read_text().splitlines()
    assert len(lines) == 1 and lines[0].split()[0] == "42", lines


def test_paced_producers_share_a_grid_and_stay_until_the_schedule_ends(monkeypatch):
    """Producer i of n sends i/n of a period after the grid's period starts, and its loop ends
    only well after its last send: a producer that exits at once burns CPU on teardown while
    the other producers' last messages are on their way (docs/performance.md)."""
    monkeypatch.syspath_prepend(str(REPO / "benches" / "nodes"))
    from node_common import LINGER_NS, paced

    period = 10_000_000  # 100 Hz
    sends = []
    for _ in paced(3, 100.0, (1, 4)):
        sends.append(time.monotonic_ns())
    ended = time.monotonic_ns()
    assert len(sends) == 3
    # Sleeps end at or after their deadline: each send lies just past its grid point.
    phases = [(t - period // 4) % period for t in sends]
    assert all(p < period // 2 for p in phases), phases
    assert ended - sends[-1] >= LINGER_NS - 1_000_000, (ended - sends[-1]) / 1e6


def test_implementations_take_turns_in_orders_that_vary_from_round_to_round():
    from benches.__main__ import in_turn

    impls = ["nerve", "topics", "lan", "floor", "dora-rs", "iceoryx2", "zenoh", "zeromq", "cyclonedds"]
    rounds = [in_turn(impls, t) for t in range(40)]
    assert all(sorted(r) == sorted(impls) for r in rounds), "every round runs every implementation once"
    assert in_turn(impls, 7) == rounds[7], "a rerun runs the same order"
    # What ran just before nerve, the previous round's last run when nerve opens a round.
    before = {(r if r.index("nerve") else p)[r.index("nerve") - 1] for p, r in itertools.pairwise(rounds)}
    assert len(before) >= 5, f"nerve ran right after only {sorted(before)}"

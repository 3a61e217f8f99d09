"""The benchmark suite runs end to end as a command (a short version; timings are not asserted
here). The suite's own statistics and harness are tested in benches/tests/."""

import json
import re
import subprocess
import sys

import pytest
from conftest import REPO


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
    text = report.read_text()
    # What the report says of itself: where, when, on what and how it was measured.
    header = dict(re.findall(r"^- \*\*(\w+):\*\* (.+)$", text, re.MULTILINE))
    assert {"Machine", "Date", "Code", "Command"} <= set(header), header
    assert "?" not in (header["Date"], header["Code"]), header
    assert header["Command"].startswith("`python -m benches --quick"), header
    # The first messages of each run that the report says it leaves out.
    warmup = int(re.search(r"the first\s+(\d+) messages of each run are left out", text)[1])
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
            assert data["producer_cpu_messages"] == data["case"]["count"] - warmup, f.name
            if data["implementation"].startswith("floor"):
                # Its reader starts counting at the first wake past the warm-up, which may have
                # taken two messages at once.
                assert 0 < data["consumer_cpu_messages"] <= data["case"]["count"] - warmup, f.name
            else:
                assert data["consumer_cpu_messages"] == data["case"]["count"] - warmup, f.name
            assert data["producer_cpu_ns"] > 0 and data["consumer_cpu_ns"] > 0, f.name
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

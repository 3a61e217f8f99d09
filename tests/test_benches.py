"""The benchmark suite runs end to end (a short version; timings are not asserted here)."""

import json
import subprocess
import sys

from conftest import REPO


def test_quick_benchmark_produces_samples_for_every_case(tmp_path):
    report = tmp_path / "benchmarks.md"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benches",
            "--quick",
            "--scenarios",
            "latency-size,fan-out,round-trip,throughput,topics,lan",
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
    text = report.read_text()
    assert "| nerve | 8 B @ 50 Hz |" in text and "floor (eventfd + shm)" in text
    for transport in ("process", "host", "network"):
        assert f"| nerve topics ({transport}) | 4 MiB @ 50 Hz |" in text
    for way in ("nerve cluster", "zenoh (plain, Rust)"):
        assert f"| {way} | 4 MiB @ 20 Hz |" in text, text
    assert "| zenoh (plain, Rust) | 1 MiB @ 20 Hz, 1→4 |" in text

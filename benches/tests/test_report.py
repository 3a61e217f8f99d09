"""The report: statistics over repeated runs."""

from benches.model import Case, Samples
from benches.report import render


def test_repeated_runs_are_reported_as_medians_with_the_worst_max(tmp_path):
    """With --repeat, a row quotes each percentile as the median of the runs' own and the worst
    message of all runs as its max; the raw samples of each run are kept apart."""
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

"""The cpp scenario: nerve's C++ node (benches/cpp-node) beside its Rust and Python nodes, the
implementations that take turns in each of its cases, and the report's comparisons."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from benches import impl_cpp, impl_nerve, native_nodes
from benches.__main__ import implementations, runs_case
from benches.impl_baseline import Baseline
from benches.model import WARMUP, Case, Samples
from benches.report import render
from benches.scenarios import cases

ROOT = Path(__file__).resolve().parent.parent.parent


def test_each_case_runs_c_plus_plus_beside_what_it_names_and_nothing_else():
    """A `rust` case runs C++ → C++ and Rust → Rust, a `python` case the two mixed pairs and
    Python → Python: no peer, floor or baseline build takes part, and nerve's Python-only
    implementation does not run the case a second time."""
    impls = implementations(None, baseline=sys.executable)
    assert any(isinstance(i, Baseline) for i in impls)
    for case in cases("cpp", quick=False):
        ran = {i.lang for i in impls if runs_case(i, case) and i in impl_cpp.IMPLEMENTATIONS}
        others = [i for i in impls if runs_case(i, case) and i not in impl_cpp.IMPLEMENTATIONS]
        assert not others, (case.key, others)
        expected = {"cpp", "rust"} if case.lang == "rust" else {"python", "cpp-python", "python-cpp"}
        assert ran == expected, (case.key, ran)
    names = {impl_nerve.implementation(Case("cpp", 8, 1, lang=i.lang)) for i in impl_cpp.IMPLEMENTATIONS}
    assert names == {"nerve", "nerve (c++)", "nerve (rust)", "nerve (c++ → python)", "nerve (python → c++)"}


def samples(lang: str, size: int, p50_us: float, consumer_cpu_us: float, run: int = 0) -> Samples:
    """30 messages of a case at `p50_us` each (after the warm-up), with that consumer CPU time."""
    s = Samples(impl_nerve.implementation(Case("cpp", size, 30, lang=lang)), Case("cpp", size, 30, lang=lang), run=run)
    s.sent_ns = list(range(0, 30_000_000, 1_000_000))
    s.received_ns = [t + int(p50_us * 1000) for t in s.sent_ns]
    s.consumer = [0] * 30
    s.consumer_cpu_messages = 30 - WARMUP
    s.consumer_cpu_ns = int(consumer_cpu_us * 1000) * s.consumer_cpu_messages
    return s


def test_report_compares_c_plus_plus_with_rust_and_python_in_the_same_case(tmp_path):
    """The C++ section gives C++ minus Rust at each size (bold beyond the 1 µs target), the
    consumers' CPU per message at the smallest and largest size, and the mixed pairs minus
    Python → Python."""
    results = [
        samples("cpp", 8, 10.5, 3.0),
        samples("rust", 8, 10.0, 2.5),
        samples("cpp", 64 << 20, 14.0, 3.5),
        samples("rust", 64 << 20, 12.0, 2.75),
        samples("python", 8, 40.0, 20.0),
        samples("cpp-python", 8, 35.0, 20.0),
        samples("python-cpp", 8, 30.0, 3.0),
    ]
    report = tmp_path / "benchmarks.md"
    render(results, "test", report, tmp_path / "img")
    text = report.read_text()
    section = text.split("## C++ nodes")[1]
    assert "C++ → C++ minus Rust → Rust, p50: 8 B +0.5 µs, **64 MiB +2.0 µs**" in section, section
    assert "C++ 3.00 µs at 8 B, 3.50 µs at 64 MiB; Rust 2.50 µs at 8 B, 2.75 µs at 64 MiB" in section, section
    assert "C++ → Python 8 B -5.0 µs; Python → C++ 8 B -10.0 µs" in section, section
    row = next(x for x in section.splitlines() if x.startswith("| nerve (python → c++) | 8 B @ 50 Hz |"))
    assert "consumer 3.00 µs/msg" in row, row


@pytest.mark.timeout(300)  # builds the C++ node (and the Rust node, when cargo has not yet)
def test_quick_cpp_scenario_runs_every_case_with_the_compiled_nodes(tmp_path):
    """`--quick --scenarios cpp` builds the C++ node into the target folder and runs every case:
    every consumer, C++'s too, got every message and counted its CPU time after the warm-up."""
    raw, report = tmp_path / "raw", tmp_path / "benchmarks.md"
    argv = [sys.executable, "-m", "benches", "--quick", "--messages", "30", "--scenarios", "cpp"]
    result = subprocess.run(
        [*argv, "--out", str(raw), "--report", str(report)], cwd=ROOT, capture_output=True, text=True, timeout=280
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert native_nodes.CPP_NODE.is_file(), native_nodes.CPP_NODE
    assert not (native_nodes.CPP_SOURCE / "CMakeCache.txt").exists(), "built into the source tree"
    ran = [Samples.load(p) for p in sorted(raw.glob("*.json"))]
    langs = {s.case.lang for s in ran}
    assert langs == {"cpp", "rust", "python", "cpp-python", "python-cpp"}, langs
    for s in ran:
        assert s.error is None, (s.implementation, s.case.key, s.error)
        assert len(s.sent_ns) == s.case.count, (s.implementation, s.case.key, len(s.sent_ns))
        assert s.consumer_cpu_messages == s.case.count - WARMUP, (s.implementation, s.case.key)
        assert s.consumer_cpu_ns and s.consumer_cpu_ns > 0, (s.implementation, s.case.key)
    yml = next((raw / "work" / "run0").glob("nerve--cpp-8B-50Hz-1x1-cpp-python/dataflow.yml")).read_text()
    assert f"path: {native_nodes.CPP_NODE}\n" in yml and f"path: {impl_nerve.PY_NODE}\n" in yml, yml
    text = report.read_text()
    for row in ("| nerve (c++) | 64 MiB @ 50 Hz |", "| nerve (rust) | 8 B unpaced |", "| nerve (python → c++) |"):
        assert row in text, row
    # Whether 8 B is within the target (plain) or beyond it (bold) is the machine's to say.
    assert re.search(r"C\+\+ → C\+\+ minus Rust → Rust, p50: (\*\*)?8 B [+-]", text), text
    for said in ("Consumer CPU per message", "Unpaced: C++"):
        assert said in text, said
    assert "One end in C++ minus Python → Python, p50: C++ → Python 8 B" in text

"""nerve's benchmark suite.

    python -m benches                      # every scenario, nerve only, full length
    python -m benches --quick              # short runs (smoke check)
    python -m benches --scenarios latency-size,fan-out
    python -m benches --peers              # the same cases on the peers, side by side
    python -m benches --peers iceoryx2,dora-rs   # on some of them
    python -m benches --repeat 5           # every case 5 times; tables quote the medians
    python -m benches --messages 3000      # ten times the messages per case: steadier tails

Raw samples go to benches/results/<time>/, the tables to docs/benchmarks.md and the plots to
docs/img/. Don't compile anything while it runs: the machine has two cores.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benches import (
    cpu_latency,
    impl_control,
    impl_cpp,
    impl_floor,
    impl_foxglove,
    impl_lan,
    impl_nerve,
    impl_topics,
    impl_types,
    impl_view,
    impl_viewer_soak,
    impl_walker,
    native_nodes,
)
from benches.impl_baseline import Baseline
from benches.model import WARMUP, Case, Samples
from benches.scenarios import ONE_RUN, SCENARIOS, cases

ROOT = Path(__file__).resolve().parent.parent
#: Scenarios only implementations of their own run.
OWN_SCENARIOS = {
    "topics": (impl_topics,),
    "lan": (impl_lan,),
    "types": impl_types.IMPLEMENTATIONS,
    "cpp": impl_cpp.IMPLEMENTATIONS,
    "view": impl_view.IMPLEMENTATIONS,
    "foxglove": impl_foxglove.IMPLEMENTATIONS,
    "walker": impl_walker.IMPLEMENTATIONS,
    "control-loop": impl_control.IMPLEMENTATIONS,
    "viewer-soak": impl_viewer_soak.IMPLEMENTATIONS,
}


def stress(case: Case) -> subprocess.Popen[bytes] | None:
    """Loads every core for a worst-case measurement (Debian package `stress-ng`)."""
    if not case.stress:
        return None
    exe = shutil.which("stress-ng")
    if not exe:
        raise SystemExit("the worst-case scenario needs stress-ng: apt-get install stress-ng")
    return subprocess.Popen([exe, "--cpu", "0", "--cpu-method", "matrixprod", "--quiet"])


def cpu_latency_held(case: Case, impl) -> contextlib.AbstractContextManager[None]:
    """For a cpu-latency case, the machine setting nerve's nodes ask for in their YAML, held by
    the harness while any other implementation runs: the same idle CPUs for everyone."""
    return cpu_latency.held() if case.cpu_latency and impl is not impl_nerve else contextlib.nullcontext()


def in_turn(impls: list, turn: int) -> list:
    """`impls` in the order of round `turn`: shuffled, with the round's number as the seed (the
    same order on every rerun). What a run leaves behind (processes exiting, memory given back)
    can slow the next one; with one fixed order, or the same order rotated, the same
    implementation would always run right after the same one: nerve's case of each size right
    after the previous case's Cyclone DDS run, the heaviest of all."""
    order = list(impls)
    random.Random(turn).shuffle(order)
    return order


def implementations(peers: str | None, baseline: str | None = None) -> list:
    """nerve's own, another build of nerve (`baseline`: its environment's interpreter), and the
    peers named in `peers` ("all" for every one; None for none)."""
    impls = [impl_nerve, impl_topics, impl_lan, impl_floor, *impl_types.IMPLEMENTATIONS, *impl_cpp.IMPLEMENTATIONS]
    impls += [*impl_view.IMPLEMENTATIONS, *impl_foxglove.IMPLEMENTATIONS]
    impls += [*impl_walker.IMPLEMENTATIONS, *impl_control.IMPLEMENTATIONS]
    impls += impl_viewer_soak.IMPLEMENTATIONS
    if baseline:
        impls.append(Baseline(baseline))
    if peers:
        from benches.peers import available

        impls += available(None if peers == "all" else peers.split(","))
    return impls


def runs_case(impl, case: Case) -> bool:
    """Whether `impl` takes part in `case`."""
    if isinstance(impl, Baseline):
        return impl.supports(case)
    # The topic, LAN, types, cpp, view, foxglove, walker, control-loop and viewer-soak scenarios have
    # implementations of their own; the peers are compared with nerve in every other scenario, in
    # its Python cases.
    own = OWN_SCENARIOS.get(case.scenario)
    if own is not None:
        return impl in own and impl.supports(case)
    if any(impl in mine for mine in OWN_SCENARIOS.values()):
        return False
    if case.lang != "python" and impl is not impl_nerve:
        return False
    return impl.supports(case)


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benches", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="short runs")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma-separated subset")
    parser.add_argument(
        "--peers",
        nargs="?",
        const="all",
        metavar="NAMES",
        help="also run the peers (installed into benches/.venv-peers): all of them, or those named, "
        "comma-separated (dora-rs, iceoryx2, zenoh, zeromq, cyclonedds)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="runs of every case, implementations taking turns (in an order shuffled for every round); "
        "tables quote the median of the runs' "
        "percentiles (default: 3, 1 with --quick)",
    )
    parser.add_argument(
        "--messages",
        type=int,
        default=None,
        help="messages per case at a fixed rate (default: 300, 60 with --quick); more for steadier "
        "p99 and p99.9 (the unpaced and worst-case scenarios keep their own counts)",
    )
    parser.add_argument(
        "--baseline",
        metavar="PYTHON",
        help="also run another build of nerve, installed in the environment of this interpreter, "
        "taking turns with this one (before/after a change; Python cases)",
    )
    parser.add_argument("--out", type=Path, default=None, help="folder for raw samples")
    parser.add_argument("--report", type=Path, default=ROOT / "docs" / "benchmarks.md")
    parser.add_argument("--render", type=Path, metavar="DIR", help="only rebuild the report from DIR's raw samples")
    args = parser.parse_args()
    repeat = args.repeat if args.repeat is not None else 1 if args.quick else 3
    if repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.messages is not None and args.messages <= 2 * WARMUP:
        parser.error(f"--messages must be more than {2 * WARMUP} (the first {WARMUP} of each run are left out)")
    from benches.report import render

    if args.render:
        saved = [Samples.load(p) for p in sorted(args.render.glob("*.json"))]
        command, date, code = (recorded(args.render, name) for name in ("command", "date", "code"))
        render(saved, command, args.report, args.report.parent / "img", date=date, code=code)
        print(f"report: {args.report}")
        return

    command = "python -m benches " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    out = args.out or ROOT / "benches" / "results" / time.strftime("%Y%m%d-%H%M%S")
    work = out / "work"
    out.mkdir(parents=True, exist_ok=True)
    (out / "command.txt").write_text(command + "\n")
    (out / "code.txt").write_text(code_version() + "\n")
    began = time.gmtime()
    planned = [c for s in args.scenarios.split(",") for c in cases(s, args.quick, args.messages)]
    # The cpp scenario's `rust` cases run the Rust node beside the C++ one.
    if any(c.lang == "rust" for c in planned):
        native_nodes.build_rust()
    if any(c.scenario == "cpp" for c in planned):
        native_nodes.build_cpp()
    if any(c.scenario == "control-loop" for c in planned):
        native_nodes.build_control_loop()
    results: list[Samples] = []
    impls = implementations(args.peers, args.baseline)
    turn = 0
    for scenario in args.scenarios.split(","):
        for case in cases(scenario, args.quick, args.messages):
            load = stress(case)
            runs = 1 if scenario in ONE_RUN else repeat
            try:
                # Implementations take turns within each round, so a slow spell of the machine
                # does not fall on one of them only.
                for run in range(runs):
                    round_ = in_turn(impls, turn)
                    turn += 1
                    for impl in round_:
                        if not runs_case(impl, case):
                            continue
                        started = time.monotonic()
                        with cpu_latency_held(case, impl):
                            samples = impl.run(case, work / f"run{run}")
                        samples.run = run
                        samples.save(out)
                        results.append(samples)
                        count = f"{len(samples.latencies_us())} samples"
                        if samples.cdr:
                            count = f"{len(samples.cdr['encode_ns'])} encodes"
                        if samples.control:
                            count = f"{len(samples.control['sent_ns'])} cycles"
                        if samples.viewer and "series" in samples.viewer:
                            count = f"{len(samples.viewer['series']['seconds'])} samples of the viewer"
                        status = samples.error or count
                        print(
                            f"{case.key:45s} {samples.implementation:28s} run {run + 1}/{runs} {status} "
                            f"({time.monotonic() - started:.0f} s)",
                            flush=True,
                        )
            finally:
                if load:
                    load.terminate()
                    load.wait()
    (out / "date.txt").write_text(span(began, time.gmtime()) + "\n")
    date, code = recorded(out, "date"), recorded(out, "code")
    render(results, command, args.report, args.report.parent / "img", date=date, code=code)
    print(f"report: {args.report}; raw samples: {out}")


def code_version() -> str:
    """The commit the suite runs on, `-dirty` with uncommitted changes: what a report measured."""
    try:
        git = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True)
    except OSError:
        return "?"
    return git.stdout.strip() or "?"


def span(start: time.struct_time, end: time.struct_time) -> str:
    """When a run went on, in UTC: `2026-11-25 11:52 to 13:28 UTC`."""
    until = "%H:%M" if start[:3] == end[:3] else "%Y-%m-%d %H:%M"
    return f"{time.strftime('%Y-%m-%d %H:%M', start)} to {time.strftime(until, end)} UTC"


def recorded(out: Path, name: str) -> str:
    """What a run wrote into `out`/`name`.txt about itself ("?" for runs made before it did)."""
    path = out / f"{name}.txt"
    return path.read_text().strip() if path.exists() else "?"


if __name__ == "__main__":
    main()

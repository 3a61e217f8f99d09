"""Statistics, the Markdown report (docs/benchmarks.md) and the plots (docs/img/)."""

from __future__ import annotations

import os
import platform
import subprocess
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

from benches.impl_walker import workload
from benches.model import WARMUP, Case, Samples
from benches.scenarios import VIEW_POINT_STEP, VIEW_WIDTH


def percentiles(lat_us: np.ndarray) -> dict[str, float]:
    return {
        "p50": float(np.percentile(lat_us, 50)),
        "p90": float(np.percentile(lat_us, 90)),
        "p99": float(np.percentile(lat_us, 99)),
        "p99.9": float(np.percentile(lat_us, 99.9)),
        "max": float(lat_us.max()),
    }


def measured(s: Samples) -> np.ndarray:
    lat = s.latencies_us()
    per_consumer = max(1, s.case.consumers * s.case.producers)
    return lat[WARMUP * per_consumer :] if len(lat) > 2 * WARMUP * per_consumer else lat


def spread_us(s: Samples) -> np.ndarray:
    """Per message, the gap between its first and last subscriber to receive it."""
    by_stamp: dict[int, list[int]] = defaultdict(list)
    for sent, received in zip(s.sent_ns, s.received_ns, strict=True):
        by_stamp[sent].append(received)
    gaps = [max(r) - min(r) for r in by_stamp.values() if len(r) == s.case.consumers]
    return np.asarray(gaps[WARMUP:], dtype=np.float64) / 1000.0


def slowest_reader_p50_us(s: Samples) -> float | None:
    """The highest of the subscribers' own p50s (each after its first messages): a fan-out
    target holds for every subscriber, not for all of them pooled."""
    lat, reader = s.latencies_us(), np.asarray(s.consumer)
    p50s = [
        float(np.percentile(mine[WARMUP:], 50))
        for i in range(s.case.consumers)
        if len(mine := lat[reader == i]) > WARMUP
    ]
    return max(p50s, default=None)


def fmt(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 1000:
        return f"{x:,.0f}"
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def human_size(n: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000} MB"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000} kB"
    return f"{n} B"


def group(results: list[Samples]) -> list[list[Samples]]:
    """The runs of each (implementation, case), in the order they first appear."""
    runs: dict[tuple[str, str], list[Samples]] = {}
    for s in results:
        runs.setdefault((s.implementation, s.case.key), []).append(s)
    return [sorted(r, key=lambda s: s.run) for r in runs.values()]


def median_of(values: list[float]) -> float | None:
    return float(np.median(values)) if values else None


def median_cpu_us(runs: list[Samples], per_message: Callable[[Samples], float | None]) -> float | None:
    """The median over the runs that ran of one end's CPU time per message (`per_message`:
    `Samples.producer_cpu_us_per_message` or `Samples.consumer_cpu_us_per_message`)."""
    return median_of([us for s in runs if not s.error and (us := per_message(s)) is not None])


def median_rate(runs: list[Samples]) -> float | None:
    """Messages per second an unpaced consumer counted, the median over the runs that ran."""
    return median_of([s.messages / s.seconds for s in runs if not s.error and s.seconds])


def stats(runs: list[Samples]) -> dict[str, float] | None:
    """Each percentile as the median of the runs' own, and the worst message of all runs as the
    max (runs that failed or got nothing left out)."""
    per_run = [percentiles(lat) for s in runs if not s.error and len(lat := measured(s))]
    if not per_run:
        return None
    return {k: float((np.max if k == "max" else np.median)([p[k] for p in per_run])) for k in per_run[0]}


def describe(c: Case) -> str:
    if c.scenario in ("view", "foxglove"):
        return f"{view_message(c)} @ {c.rate_hz:g} Hz"
    desc = f"{c.size:,} B" if c.scenario == "types" else human_size(c.size)
    desc += f" @ {c.rate_hz:g} Hz" if c.rate_hz else " unpaced"
    if c.producers > 1 or c.consumers > 1:
        desc += f", {c.producers}→{c.consumers}"
    if c.scenario == "cpu":
        desc += ", loan" if c.loan else ", copy"
    if c.realtime:
        desc += ", realtime"
    return desc


def notes(runs: list[Samples]) -> list[str]:
    """What a row says beside its percentiles; quantities are medians over the runs."""
    c = runs[0].case
    ok = [s for s in runs if not s.error]
    extra = []
    if len(ok) < len(runs):
        failed = next(s for s in runs if s.error)
        extra.append(f"**{len(runs) - len(ok)} of {len(runs)} runs could not run: {failed.error}**")
    expected = c.count if c.scenario == "round-trip" else c.count * c.producers * c.consumers
    lost = sum(max(0, expected - (len(s.rtt_ns) if c.scenario == "round-trip" else len(s.sent_ns))) for s in ok)
    if c.scenario == "foxglove":
        # The client counts from its subscription to its close: lost are the gaps in a stream's
        # sequence numbers.
        got, lost = sum(len(s.sent_ns) for s in ok), sum(s.lost or 0 for s in ok)
        extra.append(f"the client received {got:,}" + (f", **lost {lost}**" if lost else ", none lost"))
    elif lost:
        extra.append(f"**lost {lost} of {expected * len(ok)}**")
    p50s = [float(np.percentile(lat, 50)) for s in ok if len(lat := measured(s))]
    if c.scenario == "lan":
        # Time the link needs for the payload alone, at the rate it was shaped to (1 Gbit/s).
        wire_us = c.size * 8 / 1e9 * 1e6
        if p50s and c.size >= 64 * 1024:
            extra.append(f"wire time {fmt(wire_us)} µs, p50 {float(np.median(p50s)) / wire_us:.2f} times it")
    if runs[0].note:
        extra.append(runs[0].note)
    if c.scenario in ("fan-out", "lan", "cpu-latency") and c.consumers > 1:
        spreads = [sp for s in ok if len(sp := spread_us(s))]
        if spreads:
            sp50 = median_of([float(np.percentile(sp, 50)) for sp in spreads])
            sp99 = median_of([float(np.percentile(sp, 99)) for sp in spreads])
            extra.append(f"spread p50 {fmt(sp50)} µs, p99 {fmt(sp99)} µs")
    if c.scenario in ("fan-out", "cpu-latency") and c.consumers > 1:
        slowest = median_of([us for s in ok if (us := slowest_reader_p50_us(s)) is not None])
        if slowest is not None:
            extra.append(f"slowest reader p50 {fmt(slowest)} µs")
    if c.scenario == "types" and not c.codec:
        views, messages = sum(s.views or 0 for s in ok), sum(s.messages for s in ok)
        said = f"numpy views of the received shared memory: {views} of {messages} messages"
        extra.append(said if views == messages and messages else f"**{said}**")
        for step, what in (("send", "send call (stamp to return)"), ("read", "read (value to stamp)")):
            us = median_of([s.steps_us[step] for s in ok if s.steps_us and s.steps_us.get(step) is not None])
            if us is not None:
                extra.append(f"{what} p50 {fmt(us)} µs")
    if c.scenario == "view" and any(s.viewer for s in ok):
        # The page asks for a channel's next message once it has the last: it skips what came
        # in between.
        shown: Counter[str] = Counter()
        for s in ok:
            shown.update(s.viewer["frames"] if s.viewer else {})
        kinds = ", ".join(f"{n} as {kind}" for kind, n in sorted(shown.items())) or "none"
        extra.append(f"the page showed {sum(shown.values())} of {sum(len(s.sent_ns) for s in ok)} ({kinds})")
    if c.scenario in ("cpu", "types"):
        producer = median_cpu_us(ok, Samples.producer_cpu_us_per_message)
        if producer is not None:
            extra.append(f"producer {fmt(producer)} µs/msg")
    # The cpp scenario gives the consumer's only: its Rust and C++ producers count their warm-up in.
    if c.scenario in ("cpu", "types", "cpp"):
        consumer = median_cpu_us(ok, Samples.consumer_cpu_us_per_message)
        if consumer is not None:
            extra.append(f"consumer {fmt(consumer)} µs/msg")
    if not c.rate_hz and not c.codec:
        rate = median_rate(ok)
        if rate is not None:
            extra.append(f"{rate:,.0f} msg/s")
            if c.size > 8:
                # Zero-copy transports hand payloads over without moving their bytes: this is
                # not a copy bandwidth.
                extra.append(f"{rate * c.size / 1e9:,.1f} GB/s of payload handed over")
    if c.scenario == "round-trip":
        extra.append("one-way = RTT/2")
    if len(p50s) > 1:
        extra.append(f"{len(p50s)} runs, p50 {fmt(min(p50s))} to {fmt(max(p50s))}")
    return extra


def row(runs: list[Samples]) -> list[str]:
    s = runs[0]
    desc = describe(s.case)
    if all(r.error for r in runs):
        return [s.implementation, desc, "-", *["-"] * 5, f"could not run: {s.error}"]
    extra = "; ".join(notes(runs))
    p = stats(runs)
    if p is None:
        return [s.implementation, desc, "0", *["-"] * 5, extra or "no samples"]
    n = sum(len(measured(r)) for r in runs if not r.error)
    return [s.implementation, desc, str(n), *(fmt(p[k]) for k in ("p50", "p90", "p99", "p99.9", "max")), extra]


def machine() -> str:
    def first(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip()
        except OSError:
            return "?"

    cpu = "?"
    for line in first(["lscpu"]).splitlines():
        if line.startswith("Model name:"):
            cpu = line.split(":", 1)[1].strip()
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 30)
    idle = first(["cat", "/sys/devices/system/cpu/cpuidle/current_driver"])
    return (
        f"{cpu}, {os.cpu_count()} cores, {mem_gib:.0f} GiB, Linux {platform.release()} "
        f"(cpuidle: {idle}{damon()}), Python {platform.python_version()}"
    )


def damon() -> str:
    """The kernel's DAMON monitors at work, if any. On this project's test machine one took a CPU
    for 1.2-1.3 ms at every sample, and messages that came then waited for it: a run's slowest
    (docs/performance.md)."""
    running = []
    for kdamond in sorted(Path("/sys/kernel/mm/damon/admin/kdamonds").glob("[0-9]*")):
        try:
            if (kdamond / "state").read_text().strip() != "on":
                continue
            context = kdamond / "contexts" / "0"
            ops = (context / "operations").read_text().strip()
            sample_us = int((context / "monitoring_attrs" / "intervals" / "sample_us").read_text())
        except (OSError, ValueError):
            continue
        running.append(f"{ops} every {sample_us / 1000:g} ms")
    return f"; DAMON: {', '.join(running)}" if running else ""


SCENARIO_TITLES = {
    "latency-size": "Latency vs message size (1→1, 50 Hz)",
    "latency-rate": "Latency vs rate (4 MiB, 1→1)",
    "fan-out": "Fan-out (1→N): per-subscriber latency and spread between subscribers of one message",
    "fan-in": "Fan-in (N→1)",
    "round-trip": "Round trip (ping → echo → ping, 50 Hz), one-way = RTT/2",
    "cpu": "CPU per message (4 and 32 MiB, 50 Hz)",
    "throughput": "Throughput (unpaced)",
    "worst-case": "Worst case under load (stress-ng on every core)",
    "spin": "Opt-in busy-polling consumer (NERVE_SPIN_US)",
    "cpu-latency": "Opt-in idle CPUs that poll instead of halting, blocking waits: nerve's nodes ask with "
    "`realtime: {cpu_latency_us: 0}`, the harness holds the same request for the others",
    "topics": "Topic API (no dataflow), 50 Hz: in one process, between processes (shm), between hosts (Zenoh)",
    "lan": "Two hosts on a 1 Gbit/s link, 50 Hz: nerve's cluster (one stream per host, the bridge) against a "
    "plain Zenoh pair; 1→4 spread with the bridge and without it",
    "types": "Typed messages: `sensor_msgs/msg/Image`s of 1920x1080 and 1920x160 rgb8 against the same bytes as "
    "plain arrays (1→1, 50 Hz, the same run), and CDR encode / decode against rclpy",
    "cpp": "C++ nodes (`nerve.hpp`) against Rust and Python nodes, 1→1: C++ → C++ beside Rust → Rust, C++ → Python "
    "and Python → C++ beside Python → Python, taking turns in each case",
    "view": "The dashboard (`nerve view`): a typed 640x480 camera at 30 Hz and a 100,000-point cloud at 10 Hz from "
    "one producer, with a page open on both channels and without a viewer, taking turns",
    "foxglove": "Forwarding to a Foxglove client: `nerve foxglove` beside foxglove-sdk's own server, the view "
    "scenario's 640x480 camera at 30 Hz and 100,000-point cloud at 10 Hz as CDR, taking turns",
    "walker": "The assistive walker (the DALi cWalker study's Table I): eight periodic modules on two boards in the "
    "paper's three mappings, nerve's cluster against ZeroMQ, taking turns",
    "control-loop": "ORC's force loop: a Python controller closing a 1 kHz loop with a simulated robot in C++, "
    "over nerve, nerve with `realtime:` and ZeroMQ, taking turns",
    "viewer-soak": "The dashboard over a long run (HyperGraph ROS's visualisation case): `nerve view`'s CPU and "
    "memory while it shows a SLAM-like mapper's growing map, pose and path",
}


#: Titles short enough for a plot, where the table's would not fit.
PLOT_TITLES = {
    "lan": "Two hosts, 1 Gbit/s link, 50 Hz, 1→1",
    "cpu-latency": "Idle CPUs polling (cpu_latency_us: 0), 1→1, 50 Hz",
    "cpp": "C++, Rust and Python nodes, 1→1, 50 Hz",
}


def render(results: list[Samples], command: str, out: Path, img: Path, date: str = "?", code: str = "?") -> None:
    """Writes the report of `results` to `out` and its plots to `img`; `command`, `date` (when the
    run went on) and `code` (the commit it ran on) go into its header with the machine."""
    by_scenario: dict[str, list[list[Samples]]] = defaultdict(list)
    for runs in group(results):
        by_scenario[runs[0].case.scenario].append(runs)
    repeats = max((len(runs) for runs in group(results)), default=1)
    lines = [
        "# Benchmarks",
        "",
        "Generated by the benchmark suite (`benches/`); rerun with the command below. Latency is",
        "one-way, from a `CLOCK_MONOTONIC` stamp the producer writes into the payload just before",
        "sending to the moment the consumer's code holds the data and has read the stamp back",
        "(a Python node, nerve's or a peer's, reads it with `struct` from the payload object its",
        "middleware hands it: for nerve, the received array's buffer in shared memory). Every node",
        "is its own process; waits block (no busy polling) except in the opt-in spin scenario; in",
        "the opt-in cpu-latency scenario they block on a machine whose idle CPUs poll instead of",
        "halting. Paced producers send on a grid of `CLOCK_MONOTONIC` periods, the n producers of",
        "a fan-in 1/n of a period apart, and stay until every producer has sent its last: the",
        "same moments for every implementation. Implementations take turns in an order shuffled for",
        "every case and round. Percentiles in µs; the first",
        f"{WARMUP} messages of each run are left out (of latencies and of CPU times)."
        + (
            f" Every case ran {repeats} times, the implementations taking turns; a percentile is the "
            "median of the runs' own, `max` the worst message of all runs, and `n` counts the "
            "samples of all runs."
            if repeats > 1
            else ""
        ),
        "",
        f"- **Machine:** {machine()}",
        f"- **Date:** {date}",
        f"- **Code:** {code}",
        f"- **Command:** `{command}`",
        "",
    ]
    lines += summary(by_scenario.get("latency-size", []))
    from benches.scenarios import SCENARIOS

    order = {name: i for i, name in enumerate(SCENARIOS)}
    for scenario, items in sorted(by_scenario.items(), key=lambda kv: order.get(kv[0], len(order))):
        items = sorted(items, key=lambda runs: table_order(runs[0]))
        # The types scenario's CDR cases time a codec: a table of their own.
        codecs = [runs for runs in items if runs[0].case.codec]
        items = [runs for runs in items if not runs[0].case.codec]
        lines += [f"## {SCENARIO_TITLES.get(scenario, scenario)}", ""]
        if scenario == "walker":
            lines += walker_table(items)
        elif scenario == "control-loop":
            lines += loop_table(items)
        elif scenario == "viewer-soak":
            lines += viewer_soak_section(items)
        elif items:
            lines += [
                "| implementation | case | n | p50 | p90 | p99 | p99.9 | max | notes |",
                "|---|---|---|---|---|---|---|---|---|",
            ]
            lines += ["| " + " | ".join(row(runs)) + " |" for runs in items]
            lines.append("")
        if scenario == "types":
            lines += typed_against_plain(items) + codec_table(codecs)
        if scenario == "cpp":
            lines += cpp_against_rust_and_python(items)
        if scenario == "view":
            lines += viewer_against_none(items)
        if scenario == "foxglove":
            lines += foxglove_against_sdk(items)
        # Another report (`--report`) gets plots of its own name, so it never overwrites
        # benchmarks.md's.
        prefix = "" if out.stem == "benchmarks" else f"{out.stem}-"
        plot = plot_scenario(scenario, items, img, prefix)
        if plot:
            lines += [f"![{scenario}](img/{plot.name})", ""]
    # The soak section comes from a separate, much longer run (benches/soak.py): keep it as is.
    previous = out.read_text() if out.exists() else ""
    soak_start, soak_end = previous.find("<!-- soak:start -->"), previous.find("<!-- soak:end -->")
    if 0 <= soak_start < soak_end:
        lines += [previous[soak_start : soak_end + len("<!-- soak:end -->")], ""]
    out.write_text("\n".join(lines))


def typed_against_plain(items: list[list[Samples]]) -> list[str]:
    """The types scenario's latency: what a typed image costs beyond the same bytes sent plain,
    at each size."""
    diffs = []
    for size in sorted({r[0].case.size for r in items}, reverse=True):
        of_size = [r for r in items if r[0].case.size == size]
        typed = next((stats(r) for r in of_size if r[0].implementation.startswith("nerve typed")), None)
        plain = next((stats(r) for r in of_size if r[0].implementation.startswith("nerve plain")), None)
        if typed is not None and plain is not None:
            diff = ", ".join(f"{k} {typed[k] - plain[k]:+.1f} µs" for k in ("p50", "p90", "p99", "max"))
            diffs.append(f"{size:,} B: {diff}")
    if not diffs:
        return []
    return [
        f"Typed minus plain: {'; '.join(diffs)}. Both consumers read the pixels as a numpy view of the "
        'received shared memory (typed: `sensor_msgs.Image.from_arrow(event["value"]).data`; plain: '
        '`event["value"].to_numpy(zero_copy_only=True)`) and take the stamp from it; the typed '
        "producer's time includes building the `sensor_msgs.Image` around the frame.",
        "",
    ]


def view_message(c: Case) -> str:
    if c.message.endswith("/Image"):
        return f"Image {VIEW_WIDTH}x{c.size // (VIEW_WIDTH * 3)} rgb8"
    return f"PointCloud2, {c.size // VIEW_POINT_STEP:,} points"


#: How far the dashboard may move the graph's p50, in percent (the view scenario's bound).
VIEW_P50_PERCENT = 5.0


def viewer_against_none(items: list[list[Samples]]) -> list[str]:
    """The view scenario: each stream's p50 with the dashboard open against without it (in bold
    beyond the bound), and the CPU the `nerve view` process used per second of the run."""
    changes = []
    viewed = [r for r in items if r[0].implementation.endswith("with viewer")]
    for runs in viewed:
        without = [r for r in items if r[0].case == runs[0].case and r[0].implementation.endswith("without viewer")]
        ours, theirs = stats(runs), stats(without[0] if without else [])
        if ours is not None and theirs is not None:
            change = (ours["p50"] - theirs["p50"]) / theirs["p50"] * 100
            said = f"{view_message(runs[0].case)} {fmt(theirs['p50'])} → {fmt(ours['p50'])} µs ({change:+.1f}%)"
            changes.append(f"**{said}**" if abs(change) > VIEW_P50_PERCENT else said)
    # One run serves both streams' cases: the first stream's samples have every run's viewer.
    once = viewed[0] if viewed else []
    ms_per_s = median_of([s.viewer["cpu_ns"] / 1e6 / s.viewer["seconds"] for s in once if s.viewer])
    page_ms_per_s = median_of([s.viewer["page_cpu_ns"] / 1e6 / s.viewer["seconds"] for s in once if s.viewer])
    lines = []
    if changes:
        lines.append(
            f"p50 without the viewer → with it: {'; '.join(changes)} (the bound: {VIEW_P50_PERCENT:g}% either "
            "way; bold: beyond it)."
        )
    if ms_per_s is not None:
        polls = median_of([s.viewer["graph_polls"] for s in once if s.viewer])
        lines.append(
            f"The `nerve view` process (one of its own) used {ms_per_s:.0f} ms of CPU per second of the run "
            f"({ms_per_s / 10:.1f}% of one core; from /proc, 10 ms ticks), serving a page that fetched the "
            f"graph once a second ({polls:.0f} fetches per run) and showed both channels, asking for each "
            "one's next message as soon as it had the last (RGBA pixels for the image, x, y, z points for the "
            f"cloud). The page, Python in the harness's process, used {page_ms_per_s:.0f} ms per second: not "
            "nerve's, but it shares the machine's cores with the graph, as a browser would."
        )
    return [paragraph for line in lines for paragraph in (line, "")]


def forwarding(f: dict) -> dict[str, float]:
    """One foxglove run's figures (`Samples.foxglove`): the CPU per MB forwarded (the process's
    CPU with the client minus its CPU with no client at that window's rate, over the MB the
    client received), the CPU in % of a core with the client and with none, MB/s forwarded,
    and for nerve the same difference of its producer node's CPU per MB (`producer_ms_per_mb`)."""
    mb = f["bytes"] / 1e6

    def per_mb(cpu_ns: int, idle_cpu_ns: int) -> float:
        return (cpu_ns - idle_cpu_ns / f["idle_seconds"] * f["seconds"]) / 1e6 / mb

    figures = {
        "ms_per_mb": per_mb(f["cpu_ns"], f["idle_cpu_ns"]),
        "percent": f["cpu_ns"] / f["seconds"] / 1e7,
        "idle_percent": f["idle_cpu_ns"] / f["idle_seconds"] / 1e7,
        "mb_per_s": mb / f["seconds"],
    }
    if "producer_cpu_ns" in f:
        figures["producer_ms_per_mb"] = per_mb(f["producer_cpu_ns"], f["producer_idle_cpu_ns"])
    return figures


def foxglove_against_sdk(items: list[list[Samples]]) -> list[str]:
    """The foxglove scenario: per server, the medians over its runs of the CPU per MB forwarded,
    the CPU % with the client and with none and the MB/s, with the messages of the windows; then
    nerve's CPU per MB against the SDK's."""
    # One run serves both streams' cases, and both carry its figures: the image case's runs.
    by_server = {r[0].implementation: r for r in items if r[0].case.message.endswith("/Image")}
    rows, per_mb = [], {}
    for name, runs in sorted(by_server.items(), key=lambda kv: not kv[0].startswith("nerve")):
        ok = [s for s in runs if not s.error and s.foxglove and s.foxglove["bytes"]]
        if not ok:
            rows.append(f"| {name} | - | - | - | - | - | could not run: {runs[0].error or 'nothing received'} |")
            continue
        figures = [forwarding(s.foxglove) for s in ok]
        median = {k: median_of([f[k] for f in figures if k in f]) for k in figures[0]}
        per_mb[name] = median["ms_per_mb"], median.get("producer_ms_per_mb")
        messages: Counter[str] = Counter()
        for s in ok:
            messages.update(s.foxglove["messages"])
        extra = []
        if len(ok) < len(runs):
            failed = next(s for s in runs if s.error or not s.foxglove)
            extra.append(f"**{len(runs) - len(ok)} of {len(runs)} runs could not run: {failed.error}**")
        if len(ok) > 1:
            values = [f["ms_per_mb"] for f in figures]
            extra.append(f"{len(ok)} runs, {min(values):.2f} to {max(values):.2f} ms/MB")
        if ok[0].foxglove.get("process"):
            extra.append(ok[0].foxglove["process"])
        if median.get("producer_ms_per_mb") is not None:
            extra.append(f"its producer node's CPU, the same difference: {median['producer_ms_per_mb']:+.2f} ms/MB")
        cells = [f"{median['ms_per_mb']:.2f}", f"{median['percent']:.1f}", f"{median['idle_percent']:.1f}"]
        cells += [f"{median['mb_per_s']:.1f}", ", ".join(f"{n:,} {kind}s" for kind, n in sorted(messages.items()))]
        rows.append("| " + " | ".join([name, *cells, "; ".join(extra)]) + " |")
    if not rows:
        return []
    first = next((s for r in by_server.values() for s in r if s.foxglove), None)
    sizes = first.foxglove["sizes"] if first else {}
    size_said = " and ".join(f"{n:,} B ({kind})" for kind, n in sorted(sizes.items(), reverse=True))
    lines = [
        "What forwarding costs the process that forwards: `nerve foxglove`, a process of its own beside the "
        "dataflow whose outputs it serves, and foxglove-sdk's server, which runs in the Python process that "
        "logs the messages (as the SDK is made to be used). Both send the same CDR messages "
        f"({size_said or 'the same sizes'}) under `ros2msg` schemas to one Foxglove client (Python, "
        "`websockets`, in the harness's process) subscribed to both channels. The process's CPU time comes "
        "from /proc (10 ms ticks), over the client's window (from its first "
        f"{WARMUP} messages of each stream on, as many images as the case counts) and over a window of the "
        "same length with no client connected, just before. CPU per MB forwarded is the first minus the "
        "second (at its rate), over the payload MB (10^6 B) the client received in its window: for the SDK "
        "this takes out producing the messages (pre-encoded once; one copy of each to stamp it), for the "
        "bridge its work with no client (looking for topics every second); both rows are computed the same "
        "way. CPU % is of one core; the SDK's includes its producing, the bridge's does not (the producer "
        "is a dataflow node: the notes give what its CPU changed by, the same difference per MB).",
        "",
        "| server | CPU ms per MB forwarded | CPU % with the client | CPU % with no client | MB/s forwarded "
        "| messages in the windows | notes |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]
    nerve = next((v for k, v in per_mb.items() if k.startswith("nerve")), None)
    sdk = next((v for k, v in per_mb.items() if not k.startswith("nerve")), None)
    if nerve is not None and sdk is not None and sdk[0] > 0:
        (bridge, producer), theirs = nerve, sdk[0]
        said = (
            f"`nerve foxglove` used {bridge:.2f} ms of CPU per MB forwarded, {bridge / theirs:.2f} times "
            f"foxglove-sdk's server ({theirs:.2f} ms/MB); the bridge also converts each message from nerve's "
            "shared memory into CDR, which the SDK's process was handed ready."
        )
        if producer is not None:
            said += (
                f" With what its producer node's CPU changed by while the bridge subscribed ({producer:+.2f} ms/MB: "
                f"the SDK's row has its producer's in it), {bridge + producer:.2f} ms/MB, "
                f"{(bridge + producer) / theirs:.2f} times."
            )
        lines += [said, ""]
    return lines


def walker_stats(s: Samples) -> dict[str, float]:
    """One run's figures as the paper's Table I gives them, and its p99, in µs."""
    lat = s.latencies_us()
    return {"max": lat.max(), "mean": lat.mean(), "stdev": lat.std(), "p99": float(np.percentile(lat, 99))}


def topic_means_us(runs: list[Samples]) -> dict[str, float | None]:
    """Each topic's mean latency at AVI, the median over `runs`, in µs: which topics a mapping
    sends across boards shows there."""
    topics = sorted({topic for r in runs for topic in r.by_topic_ns or {}})
    return {
        topic: median_of([float(np.mean(ns)) / 1000 for r in runs if (ns := (r.by_topic_ns or {}).get(topic))])
        for topic in topics
    }


def walker_row(runs: list[Samples]) -> list[str]:
    """A mapping's row for one implementation: the messages of all runs, the worst of them as
    `max`, the median of the runs' mean, stdev and p99, and the messages lost in all runs."""
    s = runs[0]
    ok = [r for r in runs if not r.error and len(r.latencies_us())]
    if not ok:
        return [str(s.case.mapping), s.implementation, "-", *["-"] * 5, f"could not run: {s.error}"]
    per_run = [walker_stats(r) for r in ok]
    cells = [fmt(max(p["max"] for p in per_run))]
    cells += [fmt(median_of([p[k] for p in per_run])) for k in ("mean", "stdev", "p99")]
    lost = sum(r.lost or 0 for r in ok)
    extra = []
    if len(ok) < len(runs):
        failed = next(r for r in runs if r.error)
        extra.append(f"**{len(runs) - len(ok)} of {len(runs)} runs could not run: {failed.error}**")
    extra.append("mean by topic " + ", ".join(f"{topic} {fmt(us)}" for topic, us in topic_means_us(ok).items()))
    if len(ok) > 1:
        means = [p["mean"] for p in per_run]
        extra.append(f"{len(ok)} runs, mean {fmt(min(means))} to {fmt(max(means))}")
    messages = f"{sum(len(r.latencies_us()) for r in ok):,}"
    return [str(s.case.mapping), s.implementation, messages, *cells, f"**{lost}**" if lost else "0", "; ".join(extra)]


def walker_table(items: list[list[Samples]]) -> list[str]:
    """The walker scenario: what is measured, which modules each mapping runs on which host, and a
    row per mapping and implementation, nerve first."""
    if not items:
        return []
    items = sorted(items, key=lambda r: (r[0].case.mapping, r[0].implementation != "nerve", r[0].implementation))
    where = {runs[0].case.mapping: runs[0].note for runs in items}
    return [
        "The latency of every message arriving at AVI, from the send stamp its publisher wrote to the message "
        "in AVI's hand, after AVI's first second of activations, over "
        f"{items[0][0].case.seconds:g} s of activations per run; "
        "in µs, `max`, mean and standard deviation as the paper's Table I gives them. Over several runs, mean, "
        "stdev and p99 are the medians of the runs' own, `max` the worst message of all, messages and `lost` "
        "(gaps in a topic's sequence numbers) the sums. Every module runs with SCHED_FIFO at its rate-monotonic "
        "priority, its memory locked. The boards are two hosts (network namespaces) on an unshaped veth link: "
        "nerve's modules share memory on a board and cross between boards through the daemons' Zenoh bridge "
        f"(the daemons at SCHED_FIFO priority {workload.DAEMON_PRIORITY}, `nerve daemon --realtime-priority`), "
        "ZeroMQ's use ipc on a "
        "board and TCP between them (its I/O threads at their module's priority). Where the modules ran: "
        + "; ".join(f"mapping {m}: {note}" for m, note in where.items())
        + ".",
        "",
        "| mapping | implementation | AVI messages | max | mean | stdev | p99 | lost | notes |",
        "|---|---|---|---|---|---|---|---|---|",
        *("| " + " | ".join(walker_row(runs)) + " |" for runs in items),
        "",
    ]


def loop_figures(s: Samples) -> dict[str, float] | None:
    """One control-loop run's figures after its first WARMUP cycles (None if it has too few):
    the round trip's percentiles (None if no reading was answered) and the period's jitter in
    µs, the cycles, the missed deadlines and the readings never answered."""
    record = s.control or {}
    sent = np.asarray(record.get("sent_ns", [])[WARMUP:], dtype=np.float64)
    if len(sent) < 2:
        return None
    round_trips = np.asarray(record["round_trip_ns"][WARMUP:], dtype=np.float64)
    answered = round_trips[round_trips >= 0] / 1000.0
    jitter = np.abs(np.diff(sent) - 1e9 / s.case.rate_hz) / 1000.0
    return {
        "round_trip": percentiles(answered) if len(answered) else None,
        "jitter_p99": float(np.percentile(jitter, 99)),
        "jitter_max": float(jitter.max()),
        "cycles": len(sent),
        "missed": int(np.sum(record["missed"][WARMUP:])),
        "unanswered": len(round_trips) - len(answered),
    }


def loop_row(runs: list[Samples]) -> list[str]:
    """An implementation's row: cycles of all runs; the round trip's and the jitter's
    percentiles as the medians of the runs' own, their max the worst of all runs; the missed
    deadlines of all runs, and their share of the cycles."""
    s = runs[0]
    ok = [(r, f) for r in runs if not r.error and (f := loop_figures(r)) is not None]
    if not ok:
        return [s.implementation, "-", *["-"] * 7, f"could not run: {s.error or 'no cycles recorded'}"]
    per_run = [f for _, f in ok]
    trips = [f["round_trip"] for f in per_run if f["round_trip"] is not None]
    cells = [fmt(median_of([t[k] for t in trips])) for k in ("p50", "p99", "p99.9")]
    cells += [fmt(max((t["max"] for t in trips), default=None))]
    cells += [fmt(median_of([f["jitter_p99"] for f in per_run])), fmt(max(f["jitter_max"] for f in per_run))]
    cycles, missed = sum(f["cycles"] for f in per_run), sum(f["missed"] for f in per_run)
    extra = []
    if len(ok) < len(runs):
        failed = next(r for r in runs if r.error or loop_figures(r) is None)
        why = failed.error or "no cycles recorded"
        extra.append(f"**{len(runs) - len(ok)} of {len(runs)} runs could not run: {why}**")
    if unanswered := sum(f["unanswered"] for f in per_run):
        extra.append(f"{unanswered:,} readings never answered (they or their answers replaced in a keep-latest queue)")
    if len(trips) > 1:
        p50s = [t["p50"] for t in trips]
        extra.append(f"{len(trips)} runs, round trip p50 {fmt(min(p50s))} to {fmt(max(p50s))}")
    if s.note:
        extra.append(s.note)
    missed_cell = f"{missed:,} ({100 * missed / cycles:.2f}%)"
    return [s.implementation, f"{cycles:,}", *cells, missed_cell, "; ".join(extra)]


def loop_table(items: list[list[Samples]]) -> list[str]:
    """The control-loop scenario: what is measured, and a row per implementation (benches/impl_control.py)
    in the suite's table order: nerve, nerve (realtime), then ZeroMQ."""
    if not items:
        return []
    c = items[0][0].case
    period_ms = 1e3 / c.rate_hz
    return [
        f"The robot (C++, examples/force-control) owns a {c.rate_hz:g} Hz clock on absolute deadlines and sends "
        f"a {c.size}-byte force reading every period; the Python PI controller answers each with a command. "
        f"{c.seconds:g} s of the loop per run. Round trip: from the robot's stamp just before it sends a reading "
        "to the answer in the hands of its receiving thread, µs. Period jitter: how far the time between two "
        f"readings was from {period_ms:g} ms, either way, µs. Missed: readings whose answer was not in by the next "
        f"deadline. Both inputs keep the newest message only. The first {WARMUP} cycles of each run are left out; "
        "over several runs, a percentile is the median of the runs' own, `max` the worst of all runs, cycles and "
        "missed deadlines the sums.",
        "",
        "| implementation | cycles | round trip p50 | p99 | p99.9 | max | period jitter p99 | max | missed "
        "deadlines | notes |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *("| " + " | ".join(loop_row(runs)) + " |" for runs in items),
        "",
    ]


#: What the C++ path may add to the Rust one, p50 at every size (issue 33's target).
CPP_OVER_RUST_US = 1.0
#: The cpp scenario's languages (`Case.lang`) as its comparisons name them.
LANGUAGES = {"cpp": "C++", "rust": "Rust", "cpp-python": "C++ → Python", "python-cpp": "Python → C++"}


def cpp_against_rust_and_python(items: list[list[Samples]]) -> list[str]:
    """The cpp scenario's comparisons, each between implementations that took turns in one case:
    C++ minus Rust p50 at each size (in bold beyond the target), the consumers' CPU per
    message at the smallest and the largest size, the unpaced rates, and the p50 of each pair
    with one C++ end minus Python → Python's."""
    by_case = {(r[0].case.lang, r[0].case.size, r[0].case.rate_hz): r for r in items}

    def paced(lang: str) -> list[tuple[int, float]]:
        return sorted((size, rate) for (other, size, rate) in by_case if other == lang and rate)

    def p50_minus(lang: str, against: str, bound: float | None = None) -> list[str]:
        diffs = []
        for size, rate in paced(lang):
            ours, theirs = stats(by_case[(lang, size, rate)]), stats(by_case.get((against, size, rate), []))
            if ours is not None and theirs is not None:
                diff = ours["p50"] - theirs["p50"]
                said = f"{human_size(size)} {diff:+.1f} µs"
                diffs.append(f"**{said}**" if bound is not None and diff > bound else said)
        return diffs

    lines = []
    if diffs := p50_minus("cpp", "rust", CPP_OVER_RUST_US):
        lines.append(
            f"C++ → C++ minus Rust → Rust, p50: {', '.join(diffs)} (the target: at most "
            f"+{CPP_OVER_RUST_US:g} µs; bold: more)."
        )
    cpu = []
    for lang in ("cpp", "rust"):
        sizes = paced(lang)
        if not sizes:
            continue
        ends = (sizes[0], sizes[-1])
        us = [median_cpu_us(by_case[(lang, *key)], Samples.consumer_cpu_us_per_message) for key in ends]
        if None not in us:
            at = [f"{fmt(u)} µs at {human_size(size)}" for u, (size, _) in zip(us, ends, strict=True)]
            cpu.append(f"{LANGUAGES[lang]} {', '.join(at)}")
    if cpu:
        lines.append(f"Consumer CPU per message (it reads the stamp where the message lies): {'; '.join(cpu)}.")
    unpaced = []
    for (lang, size, rate), runs in sorted(by_case.items()):
        if not rate and lang in ("cpp", "rust") and (per_s := median_rate(runs)) is not None:
            unpaced.append(f"{LANGUAGES[lang]} {per_s:,.0f} msg/s at {human_size(size)}")
    if unpaced:
        lines.append(f"Unpaced: {', '.join(unpaced)}.")
    mixed = [
        f"{LANGUAGES[lang]} {', '.join(diffs)}"
        for lang in ("cpp-python", "python-cpp")
        if (diffs := p50_minus(lang, "python"))
    ]
    if mixed:
        lines.append(f"One end in C++ minus Python → Python, p50: {'; '.join(mixed)}.")
    return [paragraph for line in lines for paragraph in (line, "")]


def codec_message(c: Case) -> str:
    name = c.message.rsplit("/", 1)[1]
    if name == "Image" and c.size % 5760 == 0:
        return f"Image 1920x{c.size // 5760} rgb8 ({c.size:,} B of pixels)"
    if name == "PointCloud2" and c.size % 16 == 0:
        return f"PointCloud2, {c.size // 16:,} points of 16 B ({c.size:,} B)"
    return f"{name} ({c.size:,} B of data)"


def codec_table(items: list[list[Samples]]) -> list[str]:
    """CDR encode and decode: per run the median call, then the median of the runs."""
    if not items:
        return []
    lines = [
        "CDR (ROS 2's wire format), one message encoded, then decoded, one call timed at a time, "
        "for at least a second each, in a process per implementation and run; MB/s of CDR bytes "
        "(10^6 B). Page faults per call: an output written into memory fresh from the kernel "
        "touches each of its pages for the first time (glibc maps a big block afresh at each "
        "allocation unless earlier frees raised its thresholds); the notes give the same calls "
        "again once the process has told glibc to keep freed blocks (`mallopt`).",
        "",
        "| implementation | message | CDR bytes | encode MB/s | encode msg/s | decode MB/s | decode msg/s | notes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for runs in sorted(items, key=lambda r: (r[0].case.message, not r[0].implementation.startswith("nerve"))):
        s, c = runs[0], runs[0].case
        ok = [r.cdr for r in runs if not r.error and r.cdr]
        if not ok:
            lines.append(f"| {s.implementation} | {codec_message(c)} | - | - | - | - | - | could not run: {s.error} |")
            continue
        size = ok[0]["cdr_bytes"]
        rates = {op: [1e9 / float(np.median(r[f"{op}_ns"])) for r in ok] for op in ("encode", "decode")}
        cells = []
        for op in ("encode", "decode"):
            rate = float(np.median(rates[op]))
            cells += [f"{rate * size / 1e6:,.0f}", f"{rate:,.0f}"]
        extra = []
        if len(ok) < len(runs):
            failed = next(r for r in runs if r.error)
            extra.append(f"**{len(runs) - len(ok)} of {len(runs)} runs could not run: {failed.error}**")
        faults = {op: median_of([r[f"{op}_faults"] for r in ok if f"{op}_faults" in r]) for op in ("encode", "decode")}
        if faults["encode"] is not None and faults["decode"] is not None:
            extra.append(f"page faults per call: encode {faults['encode']:,.0f}, decode {faults['decode']:,.0f}")
        kept = [r for r in ok if "kept_encode_ns" in r]
        if kept:
            mbs = {
                op: float(np.median([size / float(np.median(r[f"kept_{op}_ns"])) * 1e3 for r in kept]))
                for op in ("encode", "decode")
            }
            kept_mbs = f"encode {mbs['encode']:,.0f} MB/s, decode {mbs['decode']:,.0f}"
            extra.append(f"with glibc keeping freed memory: {kept_mbs}")
        calls = sum(len(r["encode_ns"]) + len(r["decode_ns"]) for r in ok)
        extra.append(f"{calls:,} calls")
        if len(ok) > 1:
            extra.append(
                f"{len(ok)} runs, encode {min(rates['encode']):,.0f} to {max(rates['encode']):,.0f} msg/s, "
                f"decode {min(rates['decode']):,.0f} to {max(rates['decode']):,.0f}"
            )
        if s.note:
            extra.append(s.note)
        cells = [s.implementation, codec_message(c), f"{size:,}", *cells, "; ".join(extra)]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


#: Topic transports from nearest to farthest; LAN ways across, nerve's first.
TRANSPORT_ORDER = {
    **{"process": 0, "host": 1, "node-topic": 2, "node-edge": 3, "network": 4},
    **{"cluster": 0, "cluster-latest": 1, "zenoh": 2, "zenoh-drop": 3},
}


def table_order(s: Samples) -> tuple:
    """Rows grouped by case, nerve first, then the floor, then the peers by name."""
    c = s.case
    rank = 0 if s.implementation == "nerve" else 1 if s.implementation.startswith("nerve") else 2
    if s.implementation.startswith("floor"):
        rank = 3
    return (
        # Python's cases first; with them, the cpp scenario's cases that have a Python end.
        "python" not in c.lang.split("-"),
        c.producers,
        c.consumers,
        TRANSPORT_ORDER.get(c.transport, 0) if c.scenario == "topics" else 0,
        c.size,
        TRANSPORT_ORDER.get(c.transport, 0),
        c.rate_hz,
        not c.loan,
        rank,
        s.implementation,
    )


def summary(items: list[list[Samples]]) -> list[str]:
    """nerve against the fastest other implementation at each size (floor excluded)."""
    by_size: dict[int, dict[str, dict[str, float]]] = defaultdict(dict)
    for runs in items:
        p = stats(runs)
        if p is not None:
            by_size[runs[0].case.size][runs[0].implementation] = p
    out = []
    for size, impls in sorted(by_size.items()):
        ours = impls.get("nerve")
        others = {k: v for k, v in impls.items() if k not in ("nerve", "nerve (rust)") and not k.startswith("floor")}
        if not ours or not others:
            continue
        best = min(others, key=lambda k: others[k]["p50"])
        floor = next((v for k, v in impls.items() if k.startswith("floor")), None)
        out.append(
            f"| {human_size(size)} | {fmt(ours['p50'])} / {fmt(ours['p99'])} | {best}: "
            f"{fmt(others[best]['p50'])} / {fmt(others[best]['p99'])} | "
            + (f"{fmt(floor['p50'])} / {fmt(floor['p99'])}" if floor else "-")
            + " |"
        )
    if not out:
        return []
    return [
        "## Summary: 1→1 latency, p50 / p99 µs at 50 Hz",
        "",
        "| size | nerve | fastest other implementation | floor |",
        "|---|---|---|---|",
        *out,
        "",
    ]


def plot_scenario(scenario: str, items: list[list[Samples]], img: Path, prefix: str = "") -> Path | None:
    if scenario == "viewer-soak":
        return plot_viewer_soak(items, img, prefix)
    if scenario not in ("latency-size", "round-trip", "latency-rate", "lan", "cpu-latency", "cpp"):
        return None
    plt = pyplot()
    if plt is None:
        return None
    img.mkdir(parents=True, exist_ok=True)
    series: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for runs in items:
        c, p = runs[0].case, stats(runs)
        # The LAN, cpu-latency and cpp plots are latency against size at 50 Hz, 1→1; their other
        # cases are in the table.
        not_plotted = scenario in ("lan", "cpu-latency", "cpp") and (c.rate_hz != 50 or c.consumers > 1)
        if p is None or not_plotted:
            continue
        x = c.rate_hz if scenario == "latency-rate" else c.size
        series[runs[0].implementation].append((x, p["p50"], p["p99"]))
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name, pts in sorted(series.items()):
        pts.sort()
        xs, p50, p99 = zip(*pts, strict=True)
        (line,) = ax.plot(xs, p50, marker="o", label=f"{name} p50")
        ax.plot(xs, p99, marker="x", linestyle="--", color=line.get_color(), label=f"{name} p99")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rate (Hz)" if scenario == "latency-rate" else "message size (bytes)")
    ax.set_ylabel("one-way latency (µs)")
    ax.set_title(PLOT_TITLES.get(scenario, SCENARIO_TITLES[scenario]))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    path = img / f"{prefix}{scenario}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


#: viewer-soak: the start of a run left out of the memory slopes, in seconds (at most half the
#: run): the map fills while the robot drives its first lap (25 s), and the viewer's memory with it.
SOAK_WARMUP_S = 30.0
#: The share of a run's samples that each of its start, middle and end is taken over.
SOAK_WINDOW = 0.1
#: A process's memory is flat when the line fitted to it after the warm-up rises by less than
#: this many MiB per minute (15 MiB an hour).
FLAT_MIB_PER_MINUTE = 0.25
#: The processes of a viewer-soak run: the prefix of their columns in `series`, and their name.
SOAK_PROCESSES = {"view": "`nerve view`", "page": "the page (Python: the harness's process)"}


def mib_per_minute(seconds: np.ndarray, kib: np.ndarray) -> float:
    """The slope of the line fitted to `kib` over `seconds`, in MiB per minute."""
    return float(np.polyfit(seconds / 60, kib / 1024, 1)[0])


def soak_figures(series: dict[str, list[float]], who: str) -> dict[str, float]:
    """One process's figures over a viewer-soak run (`who`: its columns' prefix): CPU in % of a
    core and mean RSS in MiB over the start, middle and end windows (`cpu_start`, `rss_end`, …),
    and the slopes after the warm-up of its RSS (`rss_slope`) and of its private part, RSS
    without shared memory (`private_slope`), in MiB per minute."""
    t = np.asarray(series["seconds"], dtype=np.float64)
    cpu = np.asarray(series[f"{who}_cpu_ns"], dtype=np.float64)
    rss = np.asarray(series[f"{who}_rss_kib"], dtype=np.float64)
    private = rss - np.asarray(series[f"{who}_shmem_kib"], dtype=np.float64)
    n = len(t)
    k = max(2, round(SOAK_WINDOW * n))  # a window's CPU needs two samples
    figures = {}
    for name, first in (("start", 0), ("middle", max(0, n // 2 - k // 2)), ("end", n - k)):
        window = slice(first, first + k)
        figures[f"cpu_{name}"] = 100 * (cpu[window][-1] - cpu[window][0]) / 1e9 / (t[window][-1] - t[window][0])
        figures[f"rss_{name}"] = float(rss[window].mean()) / 1024
    after = t >= min(SOAK_WARMUP_S, t[-1] / 2)
    figures["rss_slope"] = mib_per_minute(t[after], rss[after])
    figures["private_slope"] = mib_per_minute(t[after], private[after])
    return figures


def slope_cell(mib_min: float) -> str:
    """A slope and whether it is flat (in bold when it is not)."""
    return f"{mib_min:+.2f} (flat)" if mib_min < FLAT_MIB_PER_MINUTE else f"**{mib_min:+.2f} (growing)**"


def soak_row(series: dict[str, list[float]], who: str) -> str:
    f = soak_figures(series, who)
    cells = [SOAK_PROCESSES[who], *(f"{f[f'cpu_{w}']:.1f}" for w in ("start", "middle", "end"))]
    cells += [f"{f[f'rss_{w}']:.1f}" for w in ("start", "middle", "end")]
    cells += [slope_cell(f["rss_slope"]), slope_cell(f["private_slope"])]
    return "| " + " | ".join(cells) + " |"


def span(c: Case) -> str:
    """How long a viewer-soak case is sampled, in words."""
    return f"{c.seconds / 60:g} minutes" if c.seconds >= 120 else f"{c.seconds:g} s"


def soak_shown(v: dict) -> str:
    """What the page showed over a viewer-soak run, and what the run's nodes said."""
    shown = ", ".join(
        f"{sum(kinds.values()):,} of `{channel}` ({', '.join(sorted(kinds))})" for channel, kinds in v["frames"].items()
    )
    s = v["series"]
    mib = {key: (s[key][0] / 1024, s[key][-1] / 1024) for key in ("view_shmem_kib", "run_shm_kib")}
    return (
        f"The page showed {shown} (`tf`: the transform tree, {', '.join(v['transforms']) or 'no frame'} at the "
        f"end) and fetched the graph {v['graph_polls']:,} times; the map it showed grew from {s['map_points'][0]:,} "
        f"to {s['map_points'][-1]:,} points. The run's objects in /dev/shm went from {mib['run_shm_kib'][0]:.1f} to "
        f"{mib['run_shm_kib'][1]:.1f} MiB and the viewer's shared memory (the blocks it has mapped) from "
        f'{mib["view_shmem_kib"][0]:.1f} to {mib["view_shmem_kib"][1]:.1f} MiB. The mapper: "{v["mapper"]}"; '
        f'the monitor: "{v["monitor"]}".'
    )


def viewer_soak_section(items: list[list[Samples]]) -> list[str]:
    """The viewer-soak scenario: how it ran, then per run a row per process (CPU and RSS at the
    start, middle and end, the slopes of its memory after the warm-up) and what the page showed."""
    runs = [s for r in items for s in r]
    if not runs:
        return []
    lines = [
        "The SLAM example (`examples/slam`: a map growing to about 37,000 points, the pose, the path of every "
        "pose so far and `map → base`, ten times a second, checked by its monitor) with `nerve view` in a "
        "process of its own and a page open on it: the graph once a second, the map, path and pose channels, "
        "each asking for its next message as soon as it has the last, and the transform tree "
        "(`benches/view_page.py`). From the moment the page has shown a message of each, for "
        f"{span(runs[0].case)}, each process's CPU time and memory are read from /proc every few seconds. CPU "
        f"in % of one core and RSS in MiB over the first, middle and last {SOAK_WINDOW:.0%} of the samples; "
        "slopes in MiB per minute of the line fitted to the samples after the first "
        f"{SOAK_WARMUP_S:g} s (the map fills during the robot's first lap), flat below {FLAT_MIB_PER_MINUTE:g}; "
        "private: RSS without its shared memory, which is the blocks of the messages the viewer has mapped (it "
        "grows with the run's /dev/shm). HyperGraph ROS's viewer stayed flat in both, where RViz's CPU and memory "
        "grew with the run.",
        "",
    ]
    for s in runs:
        if s.error or not s.viewer:
            lines += [f"**{s.implementation} could not run: {s.error or 'nothing measured'}**", ""]
            continue
        lines += [
            "| process | CPU % start | middle | end | RSS MiB start | middle | end | RSS slope | private RSS slope |",
            "|---|---|---|---|---|---|---|---|---|",
            *(soak_row(s.viewer["series"], who) for who in SOAK_PROCESSES),
            "",
            soak_shown(s.viewer),
            "",
        ]
    return lines


def pyplot():
    """matplotlib's pyplot drawing to files, or None without matplotlib (the report is then
    tables only)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def plot_viewer_soak(items: list[list[Samples]], img: Path, prefix: str) -> Path | None:
    """The first viewer-soak run that ran, over time: each process's RSS and its private part,
    with the map's points as the page showed them, above each process's CPU."""
    s = next((s for r in items for s in r if not s.error and s.viewer), None)
    plt = pyplot()
    if s is None or plt is None:
        return None
    series = {key: np.asarray(values, dtype=np.float64) for key, values in s.viewer["series"].items()}
    minutes = series["seconds"] / 60
    fig, (memory, cpu) = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
    for who, name in (("view", "nerve view"), ("page", "page")):
        rss, shared = series[f"{who}_rss_kib"] / 1024, series[f"{who}_shmem_kib"] / 1024
        (line,) = memory.plot(minutes, rss, label=f"{name} RSS")
        memory.plot(minutes, rss - shared, linestyle="--", color=line.get_color(), label=f"{name} private")
        per_second = np.diff(series[f"{who}_cpu_ns"]) / np.diff(series["seconds"]) / 1e7
        cpu.plot(minutes[1:], per_second, color=line.get_color(), label=name)
    points = memory.twinx()
    points.plot(minutes, series["map_points"], color="grey", linestyle=":")
    points.set_ylabel("map points the page showed (dotted)")
    memory.set_ylabel("MiB")
    memory.legend(fontsize=7, loc="center right")
    memory.set_title("nerve view on the SLAM example: memory and CPU over the run")
    cpu.set_ylabel("CPU % of one core")
    cpu.set_xlabel("minutes")
    cpu.legend(fontsize=7)
    for ax in (memory, cpu):
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    img.mkdir(parents=True, exist_ok=True)
    path = img / f"{prefix}viewer-soak.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

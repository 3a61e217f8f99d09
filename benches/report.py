"""Statistics, the Markdown report (docs/benchmarks.md) and the plots (docs/img/)."""

from __future__ import annotations

import os
import platform
import subprocess
from collections import defaultdict
from pathlib import Path

import numpy as np

from benches.model import Samples

WARMUP = 10  # first messages of each run are left out: connection set-up, first page faults


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


def row(s: Samples) -> list[str]:
    c = s.case
    desc = human_size(c.size)
    if c.rate_hz:
        desc += f" @ {c.rate_hz:g} Hz"
    else:
        desc += " unpaced"
    if c.producers > 1 or c.consumers > 1:
        desc += f", {c.producers}→{c.consumers}"
    if c.scenario == "cpu":
        desc += ", loan" if c.loan else ", copy"
    if c.realtime:
        desc += ", realtime"
    if s.error:
        return [s.implementation, desc, "-", *["-"] * 5, f"could not run: {s.error}"]
    lat = measured(s)
    extra = []
    expected = c.count if c.scenario == "round-trip" else c.count * c.producers * c.consumers
    got = len(s.rtt_ns) if c.scenario == "round-trip" else len(s.sent_ns)
    if got < expected:
        extra.append(f"**lost {expected - got} of {expected}**")
    if c.scenario == "lan":
        # Time the link needs for the payload alone, at the rate it was shaped to (1 Gbit/s).
        wire_us = c.size * 8 / 1e9 * 1e6
        if len(lat) and c.size >= 64 * 1024:
            extra.append(f"wire time {fmt(wire_us)} µs, p50 {float(np.percentile(lat, 50)) / wire_us:.2f} times it")
        if s.note:
            extra.append(s.note)
    if c.scenario in ("fan-out", "lan") and c.consumers > 1 and len(lat):
        sp = spread_us(s)
        if len(sp):
            extra.append(
                f"spread p50 {fmt(float(np.percentile(sp, 50)))} µs, p99 {fmt(float(np.percentile(sp, 99)))} µs"
            )
    if c.scenario == "cpu" and s.messages:
        if s.producer_cpu_ns is not None:
            extra.append(f"producer {fmt(s.producer_cpu_ns / c.count / 1000)} µs/msg")
        if s.consumer_cpu_ns is not None:
            extra.append(f"consumer {fmt(s.consumer_cpu_ns / s.messages / 1000)} µs/msg")
    if c.scenario == "throughput" and s.seconds:
        rate = s.messages / s.seconds
        extra.append(f"{rate:,.0f} msg/s")
        if c.size > 8:
            # Zero-copy transports hand payloads over without moving their bytes: this is not a
            # copy bandwidth.
            extra.append(f"{rate * c.size / 1e9:,.1f} GB/s of payload handed over")
    if c.scenario == "round-trip":
        extra.append("one-way = RTT/2")
    if not len(lat):
        return [s.implementation, desc, "0", *["-"] * 5, "; ".join(extra) or "no samples"]
    p = percentiles(lat)
    return [
        s.implementation,
        desc,
        str(len(lat)),
        *(fmt(p[k]) for k in ("p50", "p90", "p99", "p99.9", "max")),
        "; ".join(extra),
    ]


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
        f"(cpuidle: {idle}), Python {platform.python_version()}"
    )


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
    "topics": "Topic API (no dataflow), 50 Hz: in one process, between processes (shm), between hosts (Zenoh)",
    "lan": "Two hosts on a 1 Gbit/s link, 50 Hz: nerve's cluster (one stream per host, the bridge) against a "
    "plain Zenoh pair; 1→4 spread with the bridge and without it",
}


#: Titles short enough for a plot, where the table's would not fit.
PLOT_TITLES = {"lan": "Two hosts, 1 Gbit/s link, 50 Hz, 1→1"}


def render(results: list[Samples], command: str, out: Path, img: Path) -> None:
    by_scenario: dict[str, list[Samples]] = defaultdict(list)
    for s in results:
        by_scenario[s.case.scenario].append(s)
    lines = [
        "# Benchmarks",
        "",
        "Generated by the benchmark suite (`benches/`); rerun with the command below. Latency is",
        "one-way, from a `CLOCK_MONOTONIC` stamp the producer writes into the payload just before",
        "sending to the moment the consumer's code holds the data and has read the stamp back",
        "(for nerve: a numpy view of shared memory). Every node is its own process; waits block",
        "(no busy polling) except in the opt-in spin scenario. Percentiles in µs; the first",
        f"{WARMUP} messages of each run are left out.",
        "",
        f"- **Machine:** {machine()}",
        f"- **Command:** `{command}`",
        "",
    ]
    lines += summary(by_scenario.get("latency-size", []))
    from benches.scenarios import SCENARIOS

    order = {name: i for i, name in enumerate(SCENARIOS)}
    for scenario, items in sorted(by_scenario.items(), key=lambda kv: order.get(kv[0], len(order))):
        items = sorted(items, key=table_order)
        lines += [f"## {SCENARIO_TITLES.get(scenario, scenario)}", ""]
        lines += [
            "| implementation | case | n | p50 | p90 | p99 | p99.9 | max | notes |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        lines += ["| " + " | ".join(row(s)) + " |" for s in items]
        lines.append("")
        plot = plot_scenario(scenario, items, img)
        if plot:
            lines += [f"![{scenario}](img/{plot.name})", ""]
    # The soak section comes from a separate, much longer run (benches/soak.py): keep it as is.
    previous = out.read_text() if out.exists() else ""
    soak_start, soak_end = previous.find("<!-- soak:start -->"), previous.find("<!-- soak:end -->")
    if 0 <= soak_start < soak_end:
        lines += [previous[soak_start : soak_end + len("<!-- soak:end -->")], ""]
    out.write_text("\n".join(lines))


#: Topic transports from nearest to farthest; LAN ways across, nerve's first.
TRANSPORT_ORDER = {
    **{"process": 0, "host": 1, "network": 2},
    **{"cluster": 0, "cluster-latest": 1, "zenoh": 2, "zenoh-drop": 3},
}


def table_order(s: Samples) -> tuple:
    """Rows grouped by case, nerve first, then the floor, then the peers by name."""
    c = s.case
    rank = 0 if s.implementation == "nerve" else 1 if s.implementation.startswith("nerve") else 2
    if s.implementation.startswith("floor"):
        rank = 3
    return (
        c.lang != "python",
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


def summary(items: list[Samples]) -> list[str]:
    """nerve against the fastest other implementation at each size (floor excluded)."""
    by_size: dict[int, dict[str, dict[str, float]]] = defaultdict(dict)
    for s in items:
        lat = measured(s)
        if not s.error and len(lat):
            by_size[s.case.size][s.implementation] = percentiles(lat)
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


def plot_scenario(scenario: str, items: list[Samples], img: Path) -> Path | None:
    if scenario not in ("latency-size", "round-trip", "latency-rate", "lan"):
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    img.mkdir(parents=True, exist_ok=True)
    series: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for s in items:
        lat = measured(s)
        # The LAN plot is latency against size at 50 Hz, 1→1; its other cases are in the table.
        other_lan_case = scenario == "lan" and (s.case.rate_hz != 50 or s.case.consumers > 1)
        if s.error or not len(lat) or other_lan_case:
            continue
        x = s.case.rate_hz if scenario == "latency-rate" else s.case.size
        series[s.implementation].append((x, float(np.percentile(lat, 50)), float(np.percentile(lat, 99))))
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
    path = img / f"{scenario}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

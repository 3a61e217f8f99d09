"""Soak test: a 10-node dataflow at 1 kHz (64 B) and 30 Hz (4 MiB images) for a long time.

    python -m benches.soak                                 # 600 s, raw data in benches/results/
    python -m benches.soak --seconds 30 --out /tmp/soak    # a short run
    python -m benches.soak --report docs/benchmarks.md     # also write the "Soak" section

Every node is ``benches/nodes/soak_node.py`` (Python), every input has the default queue
policy (backpressure: nothing may be lost). The sources send for ``--seconds`` and then exit, so
the whole graph drains and ends by itself and every message sent can be accounted for. While
it runs, the RSS and open fds of ``nerve run`` and of each node process, and nerve's objects in
/dev/shm, are sampled every ``--interval`` seconds. The run passes when:

* ``nerve run`` exits 0 and every node ends by itself (no STOP, no error event);
* on every edge, the reader received exactly what the producer sent, in order, intact;
* fd counts and /dev/shm objects (count and bytes) are the same at the end of the warm-up
  (20 % of the run, at least 6 s) and at the end of sending; during the warm-up a few readers
  stall for a second, so that every queue fills and every block pool is at its largest;
* no process's RSS grew by more than ``max(10 %, 16 MiB)`` over that span;
* nothing of the run is left afterwards: no process, no /dev/shm object.

Exit status 0 when it passed, 1 otherwise; ``result.json`` in the work folder has everything
measured and checked. Don't compile anything while it runs: the machine
has two cores, and a starved graph sends less (a timer skips ticks its node is too busy for).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODE = ROOT / "benches" / "nodes" / "soak_node.py"

SMALL = 64
IMAGE = 4 << 20

#: The graph: id → (role, payload bytes, {input: source}, [outputs]). Exactly 10 nodes, no
#: queue settings anywhere: the soak is about the defaults.
GRAPH: dict[str, tuple[str, int, dict[str, str], list[str]]] = {
    "imu": ("source", SMALL, {"tick": "timer/hz/1000"}, ["data"]),
    "camera": ("source", IMAGE, {"tick": "timer/hz/30"}, ["image"]),
    "fusion": ("relay", SMALL, {"imu": "imu/data"}, ["pose"]),
    "detector": ("relay", SMALL, {"image": "camera/image"}, ["boxes"]),
    "planner": ("relay", SMALL, {"pose": "fusion/pose", "boxes": "detector/boxes"}, ["plan"]),
    "controller": ("relay", SMALL, {"plan": "planner/plan"}, ["cmd"]),
    "mapper": ("relay", SMALL, {"pose": "fusion/pose", "boxes": "detector/boxes"}, ["map"]),
    "monitor": ("sink", SMALL, {"cmd": "controller/cmd", "map": "mapper/map"}, []),
    "viewer": ("sink", SMALL, {"image": "camera/image"}, []),
    "logger": (
        "sink",
        SMALL,
        {"imu": "imu/data", "image": "camera/image", "pose": "fusion/pose", "boxes": "detector/boxes"},
        [],
    ),
}

#: Readers that stall once during the warm-up (seconds after their first message): every
#: output has a stalled reader while its producer runs, so every queue fills and every block
#: pool reaches the largest size it can have under the default queue size. Pools keep the
#: blocks they allocate, so from then on /dev/shm must not change at all. `monitor` stalls
#: later, once `controller` (which feeds it) runs again.
STALLS = {"controller": 1.5, "logger": 1.5, "viewer": 1.5, "monitor": 3.0}
STALL_S = 1.0

RSS_GROWTH_FRACTION = 0.10
RSS_GROWTH_MIN_KIB = 16 * 1024
WARMUP_FRACTION = 0.2
WARMUP_MIN_S = 6.0  # after the stalls and the catching up that follows them
DRAIN_TIMEOUT_S = 120.0  # after the sources stop: start-up, draining the queues, exit


@dataclass
class Proc:
    """One process of the run at one sample."""

    pid: int
    rss_kib: int
    anon_kib: int
    shmem_kib: int
    fds: int


@dataclass
class Sample:
    """Everything measured at one moment (``t``: CLOCK_MONOTONIC seconds)."""

    t: float
    procs: dict[str, Proc]
    shm_count: int  # this run's /dev/shm objects
    shm_bytes: int  # their sizes
    shm_alloc: int  # the memory tmpfs really holds for them
    shm_groups: dict[str, int]  # objects per kind and output (nerve's names: b<output>…, p…, i…)


@dataclass
class Edge:
    """One output → input connection and what crossed it."""

    producer: str
    output: str
    consumer: str
    input: str
    size: int
    sent: int
    received: int
    gaps: int
    missing: int
    out_of_order: int
    corrupt: int
    closed: bool

    @property
    def lost(self) -> int:
        return max(self.sent - self.received, 0)


@dataclass
class SoakResult:
    """A finished soak run: what was measured, and what was wrong."""

    seconds: float
    workdir: str
    command: str
    exit_code: int | None
    run_id: str
    wall_s: float
    edges: list[Edge]
    rates_hz: dict[str, float]  # per source: messages sent per second of sending
    sending_from: float | None  # CLOCK_MONOTONIC seconds of the first source's first tick
    samples: list[Sample]
    warm: Sample | None
    end: Sample | None
    shm_left: list[str]
    procs_left: list[int]
    load: tuple[float, float]  # the machine's 1-minute load average before and after
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def sent(self) -> int:
        return sum(e.sent for e in self.edges)

    @property
    def lost(self) -> int:
        return sum(e.lost for e in self.edges)

    def rss_growth_kib(self) -> dict[str, tuple[int, int, int]]:
        """Per process seen at both moments: (RSS at warm-up end, RSS at end, allowed growth)."""
        if not self.warm or not self.end:
            return {}
        out = {}
        for name, w in self.warm.procs.items():
            e = self.end.procs.get(name)
            if e:
                out[name] = (w.rss_kib, e.rss_kib, max(int(w.rss_kib * RSS_GROWTH_FRACTION), RSS_GROWTH_MIN_KIB))
        return out

    def to_json(self) -> str:
        """The run as `result.json` holds it: what was measured, the verdict, and the graph and
        limits it was checked against, so a reader of the file needs nothing else."""
        checked = {"graph": GRAPH, "warmup_min_s": WARMUP_MIN_S, "rss_growth_kib": self.rss_growth_kib()}
        return json.dumps(asdict(self) | {"ok": self.ok, "lost": self.lost} | checked, indent=1)


def write_dataflow(workdir: Path, seconds: float) -> Path:
    """The dataflow YAML, one report file per node under ``workdir/reports``."""
    reports = workdir / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    lines = ["nodes:"]
    for node, (role, size, inputs, outputs) in GRAPH.items():
        lines += [
            f"  - id: {node}",
            f"    path: {json.dumps(str(NODE))}",
            f"    args: {json.dumps([role, str(reports / (node + '.json'))])}",
            f'    env: {{SOAK_SIZE: "{size}", SOAK_SECONDS: "{seconds:g}", '
            f'SOAK_STALL_AT: "{STALLS.get(node, -1):g}", SOAK_STALL_S: "{STALL_S:g}"}}',
            "    inputs:",
            *(f"      {i}: {s}" for i, s in inputs.items()),
        ]
        if outputs:
            lines.append(f"    outputs: [{', '.join(outputs)}]")
    path = workdir / "dataflow.yml"
    path.write_text("\n".join(lines) + "\n")
    return path


def children_map() -> dict[int, list[int]]:
    """ppid → pids, for every process on the machine."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: fields start after the last ")".
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    return children


def descendants(root: int) -> list[int]:
    """``root`` and every process below it."""
    children = children_map()
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def label(pid: int, root: int, root_cmdline: list[str]) -> str | None:
    """A stable name for a process of the run: a node's id, ``nerve run`` or ``nerve reaper``."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return None
    if pid == root:
        return "nerve run"
    if any(arg.endswith("soak_node.py") for arg in cmdline) and cmdline[-1].endswith(".json"):
        return Path(cmdline[-1]).stem
    if cmdline == root_cmdline:
        # A fork of `nerve run` that never exec'd: the watchdog that cleans up if nerve dies.
        return "nerve reaper"
    return f"{Path(cmdline[0]).name if cmdline else '?'} ({pid})"


def proc_stats(pid: int) -> Proc | None:
    """RSS (and its anonymous and shared-memory parts) and open fds of one process."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    fields = {}
    for line in status.splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssShmem"):
            fields[key] = int(value.split()[0])
    if "VmRSS" not in fields:
        return None  # a zombie: it has exited already
    return Proc(pid, fields["VmRSS"], fields.get("RssAnon", 0), fields.get("RssShmem", 0), fds)


def shm_objects(prefix: str) -> dict[str, os.stat_result]:
    """/dev/shm objects whose name starts with ``prefix``."""
    out = {}
    for name in os.listdir("/dev/shm"):
        if name.startswith(prefix):
            try:
                out[name] = os.stat(f"/dev/shm/{name}")
            except FileNotFoundError:
                pass
    return out


def take_sample(root: int, root_cmdline: list[str], shm_prefix: str) -> Sample:
    t = time.monotonic()
    procs = {}
    for pid in descendants(root):
        name = label(pid, root, root_cmdline)
        stats = proc_stats(pid)
        if name and stats:
            procs[name] = stats
    shm = shm_objects(shm_prefix)
    groups: dict[str, int] = {}
    for name in shm:
        group = name[len(shm_prefix) :].split(".")[0]
        groups[group] = groups.get(group, 0) + 1
    return Sample(
        t,
        procs,
        len(shm),
        sum(s.st_size for s in shm.values()),
        sum(s.st_blocks * 512 for s in shm.values()),
        dict(sorted(groups.items())),
    )


def run_soak(seconds: float, workdir: Path, interval: float = 2.0, command: str = "") -> SoakResult:
    """Runs the soak dataflow for ``seconds`` of sending in ``workdir`` and checks it."""
    workdir.mkdir(parents=True, exist_ok=True)
    dataflow = write_dataflow(workdir, seconds)
    for old in (workdir / "reports").glob("*.json"):
        old.unlink()
    stdout = (workdir / "nerve.stdout").open("w")
    stderr_path = workdir / "nerve.stderr"
    stderr = stderr_path.open("w")
    argv = [sys.executable, "-m", "nerve", "run", str(dataflow)]
    load_before = os.getloadavg()[0]
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=stdout, stderr=stderr, env={**os.environ, "NERVE_LOG": "info"})
    root_cmdline: list[str] = []  # the run's, and so its reaper's (a fork that never exec'd)
    run_id = ""
    samples: list[Sample] = []
    deadline = started + seconds + DRAIN_TIMEOUT_S
    timed_out = False
    try:
        while True:
            if not run_id:
                m = re.search(r"run=([0-9a-f-]{36})", stderr_path.read_text())
                run_id = m.group(1) if m else ""
            if not root_cmdline:
                with contextlib.suppress(OSError):
                    root_cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes().decode().split("\0")[:-1]
            if run_id:
                samples.append(take_sample(proc.pid, root_cmdline, f"nerve.{run_id}."))
            try:
                proc.wait(timeout=interval)
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() > deadline:
                    timed_out = True
                    proc.send_signal(signal.SIGINT)  # nodes get STOP and still write their reports
                    try:
                        proc.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
                    break
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        stdout.close()
        stderr.close()
    wall = time.monotonic() - started
    if not run_id:
        m = re.search(r"run=([0-9a-f-]{36})", stderr_path.read_text())
        run_id = m.group(1) if m else ""
    seen = {p.pid for s in samples for p in s.procs.values()}
    # The reaper and the run's shared memory may take a moment to go after `nerve run` exits.
    settle = time.monotonic() + 5
    while True:
        shm_left = sorted(shm_objects(f"nerve.{run_id}.")) if run_id else []
        procs_left = sorted(pid for pid in seen if proc_stats(pid) is not None)
        if (not shm_left and not procs_left) or time.monotonic() > settle:
            break
        time.sleep(0.1)
    result = SoakResult(
        seconds=seconds,
        workdir=str(workdir),
        command=command or shlex.join(argv),
        exit_code=proc.returncode,
        run_id=run_id,
        wall_s=wall,
        edges=[],
        rates_hz={},
        sending_from=None,
        samples=samples,
        warm=None,
        end=None,
        shm_left=shm_left,
        procs_left=procs_left,
        load=(load_before, os.getloadavg()[0]),
    )
    check(result, workdir / "reports", timed_out)
    (workdir / "result.json").write_text(result.to_json())
    return result


def check(result: SoakResult, reports_dir: Path, timed_out: bool) -> None:
    """Fills in edges, rates, the warm-up and end samples, and every problem found."""
    problems = result.problems
    if timed_out:
        problems.append(f"the run did not end within {result.seconds:g} s + {DRAIN_TIMEOUT_S:g} s; stopped it")
    if result.exit_code != 0:
        problems.append(f"`nerve run` exited with status {result.exit_code}")
    if not result.run_id:
        problems.append("no run id in nerve's log: nothing was sampled")
    reports = {}
    for node in GRAPH:
        path = reports_dir / f"{node}.json"
        if not path.exists():
            problems.append(f"{node}: wrote no report")
            continue
        reports[node] = json.loads(path.read_text())
        if reports[node]["stopped"]:
            problems.append(f"{node}: was stopped instead of ending by itself")
        if reports[node]["errors"]:
            problems.append(f"{node}: {reports[node]['errors']} error event(s)")
    for consumer, (_, _, inputs, _) in GRAPH.items():
        for input_id, source in inputs.items():
            if source.startswith("timer/") or consumer not in reports:
                continue
            producer, output = source.split("/")
            got = reports[consumer]["inputs"][input_id]
            sent = reports.get(producer, {}).get("outputs", {}).get(output, {}).get("sent", -1)
            edge = Edge(
                producer,
                output,
                consumer,
                input_id,
                GRAPH[producer][1],
                sent,
                got["received"],
                got["gaps"],
                got["missing"],
                got["out_of_order"],
                got["corrupt"],
                got["closed"],
            )
            result.edges.append(edge)
            name = f"{producer}/{output} → {consumer}/{input_id}"
            if sent < 0:
                problems.append(f"{name}: the producer reported nothing sent")
            elif edge.received != sent:
                problems.append(f"{name}: sent {sent}, received {edge.received}")
            for what in ("gaps", "out_of_order", "corrupt"):
                if getattr(edge, what):
                    problems.append(f"{name}: {getattr(edge, what)} {what.replace('_', ' ')}")
            if not edge.closed:
                problems.append(f"{name}: never told INPUT_CLOSED")
    sources = {n: r for n, r in reports.items() if r["role"] == "source" and r["first_tick"] and r["stop_tick"]}
    for node, r in sources.items():
        sent = sum(o["sent"] for o in r["outputs"].values())
        result.rates_hz[node] = sent / max(r["stop_tick"] - r["first_tick"], 1e-9)
    if len(sources) != sum(1 for role, *_ in GRAPH.values() if role == "source"):
        problems.append("a source did not report when it started and stopped sending")
        return
    # Steady state: from the end of the warm-up to the last sample before any source stopped
    # (after that, processes exit one by one and their counts fall).
    first = result.sending_from = min(r["first_tick"] for r in sources.values())
    stop = min(r["stop_tick"] for r in sources.values())
    warm_at = first + max(WARMUP_MIN_S, WARMUP_FRACTION * result.seconds)
    steady = [s for s in result.samples if warm_at <= s.t <= stop and set(GRAPH) <= set(s.procs)]
    if len(steady) < 2:
        problems.append(f"fewer than 2 samples between the warm-up end and the end of sending ({len(steady)})")
        return
    result.warm, result.end = steady[0], steady[-1]
    warm, end = result.warm, result.end
    if set(warm.procs) != set(end.procs):
        problems.append(f"processes changed: {sorted(warm.procs)} then {sorted(end.procs)}")
    for name, w in warm.procs.items():
        e = end.procs.get(name)
        if e and e.fds != w.fds:
            problems.append(f"{name}: {w.fds} fds at the warm-up end, {e.fds} at the end")
    for name, (before, after, allowed) in result.rss_growth_kib().items():
        if after - before > allowed:
            problems.append(f"{name}: RSS grew {(after - before) / 1024:.1f} MiB (allowed {allowed / 1024:.1f} MiB)")
    if (warm.shm_count, warm.shm_bytes) != (end.shm_count, end.shm_bytes):
        problems.append(
            f"/dev/shm: {warm.shm_count} objects, {warm.shm_bytes} B at the warm-up end; "
            f"{end.shm_count} objects, {end.shm_bytes} B at the end"
        )
    if result.shm_left:
        problems.append(f"/dev/shm objects left after the run: {result.shm_left}")
    if result.procs_left:
        problems.append(f"processes of the run still alive after it: {result.procs_left}")


def mib(kib: int) -> str:
    return f"{kib / 1024:.1f}"


def markdown(result: SoakResult, machine: str) -> str:
    """The "Soak" section of docs/benchmarks.md, between its markers."""
    warm, end = result.warm, result.end
    verdict = "**all checks passed**" if result.ok else "**FAILED**: " + "; ".join(result.problems)
    lines = [
        "<!-- soak:start -->",
        "## Soak",
        "",
        "A 10-node dataflow of Python nodes (`benches/soak.py`, nodes `benches/nodes/soak_node.py`):",
        "`imu` (64 B at 1 kHz) → `fusion` → `planner` → `controller` → `monitor`; `camera` (4 MiB at",
        "30 Hz) → `detector` → `planner`; `fusion` and `detector` → `mapper` → `monitor`; `camera` →",
        "`viewer`; `imu`, `camera`, `fusion` and `detector` → `logger`. Relays send one 64 B message",
        "per message received, so `planner`, `controller` and `mapper` run at about 1 kHz and",
        "`logger` takes about 2 k messages a second. Every input has the default queue policy",
        "(backpressure). Every message carries its sequence number in its metadata and its first",
        "and last 8 bytes (the rest is filled), and every reader checks order, gaps and contents.",
        "The sources stop after the duration and the graph drains and ends by itself. During the",
        "warm-up, " + ", ".join(f"`{n}`" for n in STALLS) + f" stall once for {STALL_S:g} s each, so every",
        "queue fills and every block pool reaches its largest size (pools keep their blocks): from",
        "then on, /dev/shm must not change at all. RSS, open fds and nerve's /dev/shm objects were",
        f"sampled every ~{interval_of(result):.0f} s.",
        "",
        f"- **Machine:** {machine}",
        f"- **Command:** `{result.command}`",
        f"- **Duration:** {result.seconds:g} s of sending ({result.wall_s:.0f} s wall with start-up and drain); "
        + (
            f"steady state compared from {warm.t - (result.sending_from or 0):.0f} s to "
            f"{end.t - (result.sending_from or 0):.0f} s of sending"
            if warm and end
            else "no steady-state samples"
        ),
        "- **Rates reached:** "
        + ", ".join(f"`{n}` {r:,.1f} Hz" for n, r in result.rates_hz.items())
        + " (a timer skips the ticks its node is too busy for)",
        f"- **Load:** 1-minute load average {result.load[0]:.2f} before the run, {result.load[1]:.2f} after",
        f"- **Result:** {verdict}",
        f"- **Lost:** {result.lost} of {result.sent:,} messages sent over all edges",
        "",
        "| edge | payload | sent | received | lost | gaps | out of order | corrupt |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for e in result.edges:
        size = "4 MiB" if e.size == IMAGE else f"{e.size} B"
        lines.append(
            f"| {e.producer}/{e.output} → {e.consumer}/{e.input} | {size} | {e.sent:,} | {e.received:,} | "
            f"{e.lost} | {e.gaps} | {e.out_of_order} | {e.corrupt} |"
        )
    lines.append("")
    if warm and end:
        lines += [
            "| process | RSS at warm-up end (MiB) | RSS at end (MiB) | growth (KiB) | allowed (MiB) "
            "| most in between (MiB) | of which shared memory at end (MiB) | fds |",
            "|---|---|---|---|---|---|---|---|",
        ]
        between = [s for s in result.samples if warm.t <= s.t <= end.t]
        for name, (before, after, allowed) in result.rss_growth_kib().items():
            most = max(s.procs[name].rss_kib for s in between if name in s.procs)
            fds = f"{warm.procs[name].fds} → {end.procs[name].fds}"
            lines.append(
                f"| {name} | {mib(before)} | {mib(after)} | {after - before:+d} | {mib(allowed)} | {mib(most)} | "
                f"{mib(end.procs[name].shmem_kib)} | {fds} |"
            )
        lines += [
            "",
            "| this run's /dev/shm `nerve.*` objects | warm-up end | end | after exit |",
            "|---|---|---|---|",
            f"| count | {warm.shm_count} | {end.shm_count} | {len(result.shm_left)} |",
            f"| bytes (size) | {warm.shm_bytes:,} | {end.shm_bytes:,} | - |",
            f"| bytes (allocated) | {warm.shm_alloc:,} | {end.shm_alloc:,} | - |",
            f"| of which message blocks, per output | {blocks(warm)} | {blocks(end)} | - |",
            "",
        ]
    lines.append("<!-- soak:end -->")
    return "\n".join(lines)


def blocks(sample: Sample) -> str:
    """Message blocks per output (nerve names them ``b<output>.…``), e.g. "12 in each of 7"."""
    counts = [n for group, n in sample.shm_groups.items() if group.startswith("b")]
    if counts and len(set(counts)) == 1:
        return f"{counts[0]} in each of {len(counts)}"
    return ", ".join(map(str, counts)) or "0"


def interval_of(result: SoakResult) -> float:
    ts = [s.t for s in result.samples]
    return (ts[-1] - ts[0]) / (len(ts) - 1) if len(ts) > 1 else 0.0


def write_report(path: Path, section: str) -> None:
    """Puts ``section`` between the soak markers of ``path`` (appended if they are absent)."""
    start, end = "<!-- soak:start -->", "<!-- soak:end -->"
    text = path.read_text() if path.exists() else ""
    a, b = text.find(start), text.find(end)
    if 0 <= a < b:
        text = text[:a] + section + text[b + len(end) :]
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + section + "\n"
    path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benches.soak", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=600.0, help="how long the sources send")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between samples")
    parser.add_argument("--out", type=Path, default=None, help="work folder (dataflow, node reports, samples)")
    parser.add_argument("--report", type=Path, default=None, help="write the Soak section into this file")
    args = parser.parse_args()
    from benches.report import machine

    command = "python -m benches.soak " + shlex.join(sys.argv[1:])
    out = args.out or ROOT / "benches" / "results" / time.strftime("soak-%Y%m%d-%H%M%S")
    print(f"soak: {args.seconds:g} s in {out}", flush=True)
    result = run_soak(args.seconds, out, args.interval, command.strip())
    section = markdown(result, machine())
    print(section)
    if args.report:
        write_report(args.report, section)
        print(f"report: {args.report}")
    print("soak: PASSED" if result.ok else "soak: FAILED\n  " + "\n  ".join(result.problems))
    sys.exit(0 if result.ok else 1)


if __name__ == "__main__":
    main()

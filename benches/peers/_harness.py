"""Starts a peer's node processes for one case, bounds them in time and collects their results.

Every peer except dora uses it: the node script of the peer (benches/peers/nodes/*.py, run by the
peers' venv python) is started once per role as ``script ROLE INDEX case.json``. Consumers (or
the echo) start first; producers (or the ping) only once every consumer has said it is ready.
Nothing is left running: at the deadline every process is killed and the case reports an error.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import asdict
from pathlib import Path

from benches.model import WARMUP, Case, Samples, read_stamp_lines
from benches.peers import venv

NODES = Path(__file__).resolve().parent / "nodes"
READY_TIMEOUT_S = 60.0


def folder_for(name: str, case: Case, workdir: Path) -> Path:
    """A fresh folder for the case's files (config, logs, results)."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")
    folder = (workdir / f"{slug}--{case.key}").resolve()
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder


def budget_s(case: Case) -> float:
    """How long a case may take before it counts as stuck: set-up, the paced schedule, and a
    generous 20 MB/s for every byte moved."""
    paced = case.count / case.rate_hz if case.rate_hz > 0 else 0.0
    moved = case.count * case.size * max(case.producers, case.consumers) * (2 if case.scenario == "round-trip" else 1)
    return 60.0 + 1.5 * paced + moved / 20e6


def tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text[-lines:])


def reason(path: Path) -> str:
    """The last error line of a log (a Python exception, a Rust error), else its last lines."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    for line in reversed(lines):
        if re.search(r"\b\w*(Error|Exception|error)\b:", line):
            return line.strip()[:500]
    return tail(path)


class Proc:
    def __init__(self, role: str, index: int, argv: list[str], folder: Path, env: dict[str, str]) -> None:
        self.role, self.index = role, index
        self.name = f"{role}{index}"
        self.log = folder / f"{self.name}.log"
        with open(self.log, "wb") as log:
            self.popen = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=folder,
                env=env,
                start_new_session=True,  # its own process group: killed as a whole
            )
        self.ready_file = folder / f"ready-{role}-{index}"

    def alive(self) -> bool:
        return self.popen.poll() is None

    def release(self) -> None:
        """Closes its standard input: the node writes what it has and ends."""
        if self.popen.stdin and not self.popen.stdin.closed:
            try:
                self.popen.stdin.close()
            except OSError:
                pass

    def kill(self) -> None:
        if self.alive():
            try:
                os.killpg(self.popen.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.popen.wait()

    def failure(self) -> str | None:
        code = self.popen.poll()
        if code in (None, 0):
            return None
        return f"{self.name} exited with {code}: {tail(self.log)}"


def wait_all(procs: list[Proc], deadline: float) -> bool:
    """Waits until every process has ended or the deadline passed; True if they all ended."""
    while any(p.alive() for p in procs):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def wait_ready(procs: list[Proc], deadline: float) -> str | None:
    """Waits for the ready files; the reason if a process died or the deadline passed."""
    while True:
        missing = [p for p in procs if not p.ready_file.exists()]
        if not missing:
            return None
        for p in missing:
            if not p.alive():
                return f"{p.name} ended before it was ready: {tail(p.log)}"
        if time.monotonic() > deadline:
            return f"{', '.join(p.name for p in missing)} not ready after {READY_TIMEOUT_S:g} s"
        time.sleep(0.02)


def run_nodes(
    name: str,
    case: Case,
    workdir: Path,
    script: str,
    extra: dict | None = None,
    env: dict[str, str] | None = None,
    folder: Path | None = None,
) -> Samples:
    """Runs one case with the node script `script` (a file in nodes/); `extra` is added to the
    config the nodes read, `env` to their environment."""
    samples = Samples(name, case)
    folder = folder or folder_for(name, case, workdir)
    budget = budget_s(case)
    # The producers' own limit (see nodes/common.py: paced), short of the harness' deadline.
    config = {**asdict(case), "folder": str(folder), "budget_s": budget - 15, "warmup": WARMUP, **(extra or {})}
    (folder / "case.json").write_text(json.dumps(config, indent=1))
    python = str(venv.ensure())
    node_env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}

    def start(role: str, index: int) -> Proc:
        argv = [python, str(NODES / script), role, str(index), str(folder / "case.json")]
        return Proc(role, index, argv, folder, node_env)

    round_trip = case.scenario == "round-trip"
    started = time.monotonic()
    servers: list[Proc] = []
    clients: list[Proc] = []
    try:
        if round_trip:
            servers = [start("echo", 0)]
        else:
            servers = [start("consumer", c) for c in range(case.consumers)]
        problem = wait_ready(servers, time.monotonic() + READY_TIMEOUT_S)
        if problem:
            samples.error = problem
            return samples
        if round_trip:
            clients = [start("ping", 0)]
        else:
            clients = [start("producer", p) for p in range(case.producers)]
        if not wait_all(clients, started + budget):
            stuck = ", ".join(p.name for p in clients if p.alive())
            # A ping writes what it measured when released; give it a moment.
            for p in clients:
                p.release()
            wait_all(clients, time.monotonic() + 5)
            samples.error = f"timed out after {budget:.0f} s ({stuck} still running)"
        failures = [f for p in clients if (f := p.failure())]
        if failures and not samples.error:
            samples.error = failures[0]
        if round_trip:
            for p in servers:
                p.release()
            wait_all(servers, time.monotonic() + 5)
        else:
            # Consumers end on their own once they have every message; if some were lost, they
            # are told to write what they have.
            grace = 5.0 + case.size * case.producers / 50e6
            if not wait_all(servers, time.monotonic() + grace):
                for p in servers:
                    p.release()
                wait_all(servers, time.monotonic() + 10)
        failures = [f for p in servers if (f := p.failure())]
        if failures and not samples.error:
            samples.error = failures[0]
    finally:
        for p in servers + clients:
            p.release()
            p.kill()

    if round_trip:
        rtt = folder / "rtt.txt"
        samples.rtt_ns = [int(x) for x in rtt.read_text().split()] if rtt.exists() else []
        if not samples.rtt_ns and not samples.error:
            samples.error = f"no round trip completed: {tail(folder / 'ping0.log')}"
        return samples
    for c in range(case.consumers):
        read_stamp_lines(folder / f"c{c}.txt", c, samples)
    stats = [folder / f"c{c}.txt.json" for c in range(case.consumers)]
    producer = folder / "p0.json"
    samples.take_node_stats(
        json.loads(producer.read_text()) if producer.exists() else None,
        json.loads(stats[0].read_text()) if stats[0].exists() else None,
    )
    if not samples.error:
        got = [json.loads(s.read_text())["messages"] if s.exists() else 0 for s in stats]
        expected = case.count * case.producers
        if not all(got):
            samples.error = f"a consumer received nothing (received {got} of {expected} each)"
        elif min(got) < expected:
            # Kept as data (the latencies of what arrived are real), but said.
            print(f"warning: {name} {case.key}: consumers received {got} of {expected} messages", flush=True)
    return samples

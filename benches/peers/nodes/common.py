"""What every peer node script shares: the case config, pacing, CPU time, result files, and the
way a node is told to stop.

A node is started as ``<script> ROLE INDEX CONFIG.json`` (ROLE: producer, consumer, ping, echo).
It signals that it is set up by creating ``ready-ROLE-INDEX`` in the case folder. Its standard
input is a pipe from the harness: when the harness closes it (the producers are done and a
consumer still waits for lost messages, or the suite gives up), a watchdog thread writes what the
node has measured so far and ends the process. No node polls for that: the thread sleeps in
``read()``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

# The stamp, the send schedule and the CPU accounting are nerve's bench node's own
# (benches/nodes/node_common.py): every implementation is paced and measured the same way.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "nodes"))
import node_common

# STAMP as STAMP: re-exported, the peer nodes use it as common.STAMP.
from node_common import STAMP as STAMP
from node_common import cpu_ns


def args() -> tuple[str, int, dict]:
    """ROLE, INDEX and the case config from the command line."""
    role, index, config = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(config) as f:
        return role, index, json.load(f)


def ready(cfg: dict, role: str, index: int) -> None:
    Path(cfg["folder"], f"ready-{role}-{index}").touch()


def paced(count: int, rate_hz: float, budget_s: float | None = None, slot: tuple[int, int] = (0, 1)):
    """Yields `count` times on an absolute schedule (no drift), or back to back at rate 0; `slot`
    is this producer's place among a fan-in's (see node_common.paced).

    With `budget_s`, a run that would clearly take longer than that (a middleware much slower than
    the rate: each message takes longer than a period) stops early, with the reason, rather than
    being killed at the harness' deadline with nothing said.
    """
    first = None
    for i in node_common.paced(count, rate_hz, slot):
        now = time.monotonic_ns()
        first = first or now
        if budget_s and now - first > 10e9:  # judged on 10 s of messages, not on a slow start
            projected = (now - first) / i * count / 1e9
            if projected > budget_s:
                raise SystemExit(
                    f"too slow to finish: {i} messages took {(now - first) / 1e9:.1f} s, "
                    f"{count} would take about {projected:.0f} s (limit {budget_s:.0f} s)"
                )
        yield i


def wait_until(predicate, timeout_s: float, what: str, step_s: float = 0.01) -> None:
    """Set-up only (discovery), never on the measured path: checks `predicate` every `step_s`."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {timeout_s:g} s waiting for {what}")
        time.sleep(step_s)


def on_stdin_closed(action) -> None:
    """Runs `action` in a thread once the harness closes our standard input."""

    def watch() -> None:
        try:  # the raw descriptor: a daemon thread in sys.stdin would block interpreter shutdown
            while os.read(0, 4096):
                pass
        except OSError:
            pass
        action()

    threading.Thread(target=watch, daemon=True).start()


def exit_on_stdin_closed() -> None:
    """For servers (echo): end the process when the harness says so."""
    on_stdin_closed(lambda: os._exit(0))


class Recorder:
    """A consumer's measurements: (sent, received) stamps, CPU time and wall time between its
    first and last message. Written as ``c{index}.txt`` and ``c{index}.txt.json`` like
    benches/nodes/dataflow_node.py does."""

    def __init__(self, cfg: dict, index: int) -> None:
        self.out = Path(cfg["folder"], f"c{index}.txt")
        self.expected = cfg["count"] * cfg["producers"]
        self.sent: list[int] = []
        self.received: list[int] = []
        # CPU time counts whole messages after the warm-up (as benches/nodes/dataflow_node.py).
        self.cpu_after = max(cfg["warmup"], 1)
        self.cpu_from: int | None = None
        self.first_wall: int | None = None
        self._lock = threading.Lock()
        self._written = False
        on_stdin_closed(self._give_up)

    def record(self, sent: int, received: int) -> bool:
        """Stores one message; True once every expected message has arrived."""
        if self.first_wall is None:
            self.first_wall = received
        self.sent.append(sent)
        self.received.append(received)
        if len(self.sent) == self.cpu_after:
            self.cpu_from = cpu_ns()
        return len(self.sent) >= self.expected

    def finish(self) -> None:
        with self._lock:
            if self._written:
                return
            self._written = True
            n = min(len(self.sent), len(self.received))
            last_cpu, last_wall = cpu_ns(), time.monotonic_ns()
            with open(self.out, "w") as f:
                f.writelines(f"{s} {r}\n" for s, r in zip(self.sent[:n], self.received[:n], strict=True))
            with open(str(self.out) + ".json", "w") as f:
                json.dump(
                    {
                        "cpu_ns": (last_cpu - self.cpu_from) if self.cpu_from is not None else 0,
                        "cpu_messages": n - self.cpu_after if self.cpu_from is not None else 0,
                        "messages": n,
                        "expected": self.expected,
                        "seconds": (self.received[n - 1] - self.first_wall) / 1e9 if n > 1 and self.first_wall else 0.0,
                        "wall_s": (last_wall - self.first_wall) / 1e9 if self.first_wall else 0.0,
                    },
                    f,
                )

    def _give_up(self) -> None:
        self.finish()
        os._exit(0)


class ProducerCpu:
    """A producer's CPU time over the messages after the warm-up (connection set-up and first
    allocations left out, as the latency tables leave out the first messages)."""

    def __init__(self, cfg: dict, index: int) -> None:
        self.out = Path(cfg["folder"], f"p{index}.json")
        self.count = cfg["count"]
        self.warmup = cfg["warmup"] if self.count > 2 * cfg["warmup"] else 0
        self.cpu_from: int | None = None

    def tick(self, i: int) -> None:
        """Called before message `i` is sent."""
        if i == self.warmup:
            self.cpu_from = cpu_ns()

    def done(self) -> None:
        used = cpu_ns() - self.cpu_from if self.cpu_from is not None else 0
        with open(self.out, "w") as f:
            json.dump({"cpu_ns": used, "cpu_messages": self.count - self.warmup, "messages": self.count}, f)


class RoundTrips:
    """The ping side's round-trip times, written as ``rtt.txt`` (one ns value a line)."""

    def __init__(self, cfg: dict) -> None:
        self.out = Path(cfg["folder"], "rtt.txt")
        self.rtts: list[int] = []
        self._lock = threading.Lock()
        self._written = False
        on_stdin_closed(self._give_up)

    def finish(self) -> None:
        with self._lock:
            if not self._written:
                self._written = True
                with open(self.out, "w") as f:
                    f.writelines(f"{x}\n" for x in self.rtts)

    def _give_up(self) -> None:
        self.finish()
        os._exit(0)

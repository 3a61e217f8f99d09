"""The assistive walker's eight modules, whatever carries their messages.

The workload of the DALi cWalker study (see README.md): eight periodic tasks, each activated on
its period, reading the newest message of every topic it subscribes to and publishing one
message per activation. `module.py` runs a module as a nerve node; the benchmark suite runs the
same modules over ZeroMQ (`benches/nodes/walker_zmq.py`), so both carry the same bytes.

A message is a 16-byte header (the send time and a sequence number) and a float32 body whose
shape its topic fixes. The send time is the wall clock's (CLOCK_REALTIME, ns), the one clock two
boards can agree on (PTP, chrony): the receiver compares it with its own.
"""

from __future__ import annotations

import json
import math
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HEADER = struct.Struct("<QQ")

HALL = 20.0  # metres: the square hall the walker and the people move in
CELLS = 64  # heat-map cells per side
PEOPLE = 8
WAYPOINTS = 16
HORIZON = 20  # trajectory points, 50 ms apart
CIRCLE = 8.0  # metres: the radius of the walker's loop around the hall's centre
SPEED = 0.8  # m/s: the walker's cruising speed

#: Each topic's float32 body.
SHAPES = {
    "pose": (4,),  # x, y, heading, speed
    "people": (PEOPLE, 4),  # x, y, vx, vy per person
    "heatmap": (CELLS, CELLS),  # people's recent presence, decaying
    "route": (WAYPOINTS, 2),  # the long-term plan: waypoints ahead
    "trajectory": (HORIZON, 3),  # the short-term plan: x, y, speed
    "brakes": (2,),  # left and right brake force, 0..1
    "haptics": (2,),  # left and right handle vibration, 0..1
    "prompt": (4,),  # what the interface tells the user: turn, brake, crowding, topics heard
}


@dataclass(frozen=True)
class Spec:
    """A module: its period, the topics it reads, the one it publishes, its real-time priority."""

    period_ms: int
    inputs: tuple[str, ...]
    output: str
    priority: int


#: The modules. PT's 100 ms and LOC's 10 ms are the paper's; the others' periods and the topics
#: between them are our reading of its Figure 2 (see README.md). Priorities are rate-monotonic:
#: the shorter the period, the higher.
MODULES = {
    "loc": Spec(10, (), "pose", 80),
    "pt": Spec(100, (), "people", 50),
    "hm": Spec(100, ("pose", "people"), "heatmap", 50),
    "ltp": Spec(500, ("pose", "heatmap"), "route", 40),
    "stp": Spec(20, ("pose", "people", "route"), "trajectory", 70),
    "bc": Spec(10, ("pose", "trajectory"), "brakes", 80),
    "hc": Spec(10, ("pose", "trajectory"), "haptics", 80),
    "avi": Spec(50, ("pose", "heatmap", "route", "trajectory", "brakes", "haptics"), "prompt", 60),
}

#: The daemons' real-time priority, above every module's: messages between boards go through
#: them, and would otherwise wait behind the modules they are for.
DAEMON_PRIORITY = 85

#: The paper's mappings of the modules to two boards: the modules of board 1 (the rest run on
#: board 2). AVI, whose input latency is measured, is always on board 1.
MAPPINGS = {
    1: tuple(MODULES),
    2: ("avi", "hm", "ltp"),
    3: ("avi",),
}

#: The module publishing each topic.
PUBLISHERS = {spec.output: name for name, spec in MODULES.items()}

#: AVI's first second of activations is left out of its latencies: first allocations, caches.
WARMUP_S = 1.0


def message_size(topic: str) -> int:
    """Bytes of a message on ``topic``: header and body."""
    return HEADER.size + 4 * math.prod(SHAPES[topic])


def write_message(buffer, seq: int, body: np.ndarray) -> None:
    """Writes ``body`` and a header stamped now into ``buffer`` (a loaned block, a bytearray)."""
    # Released on return: nerve refuses to send a loaned block while a view of it is open.
    with memoryview(buffer) as whole, whole.cast("B") as view:
        view[HEADER.size :] = body.astype(np.float32, copy=False).tobytes()
        HEADER.pack_into(view, 0, time.time_ns(), seq)


def read_message(topic: str, data) -> tuple[int, int, np.ndarray]:
    """(send time, sequence number, body) of a message on ``topic``; ``data`` is any buffer."""
    view = memoryview(data).cast("B")
    if len(view) != message_size(topic):
        raise ValueError(f"a `{topic}` message has {message_size(topic)} bytes, this one {len(view)}")
    stamp, seq = HEADER.unpack_from(view, 0)
    body = np.frombuffer(view, dtype=np.float32, offset=HEADER.size).reshape(SHAPES[topic])
    return stamp, seq, body


def activations(name: str, seconds: float) -> int:
    """How many times module ``name`` runs in ``seconds``."""
    return max(1, round(seconds * 1000 / MODULES[name].period_ms))


class Module:
    """One module's state: the newest body of each input, and what it computes when activated."""

    def __init__(self, name: str) -> None:
        if name not in MODULES:
            raise SystemExit(f"unknown walker module `{name}` (known: {', '.join(MODULES)})")
        self.name = name
        self.spec = MODULES[name]
        self.latest: dict[str, np.ndarray] = {}
        self.activated = 0
        rng = np.random.default_rng(7)
        self._people = np.column_stack(
            [rng.uniform(1, HALL - 1, (PEOPLE, 2)), rng.uniform(-0.7, 0.7, (PEOPLE, 2))]
        ).astype(np.float32)
        self._heat = np.zeros((CELLS, CELLS), np.float32)

    def receive(self, topic: str, body: np.ndarray) -> None:
        """Keeps ``body`` as the newest of ``topic`` (a copy: the message's buffer is lent)."""
        self.latest[topic] = body.copy()

    def activate(self) -> np.ndarray:
        """Runs one period's work; returns the body to publish."""
        t = self.activated * self.spec.period_ms / 1000
        self.activated += 1
        return getattr(self, f"_{self.name}")(t)

    def _loc(self, t: float) -> np.ndarray:
        angle = t * SPEED / CIRCLE
        centre = HALL / 2
        return np.array(
            [centre + CIRCLE * math.cos(angle), centre + CIRCLE * math.sin(angle), angle + math.pi / 2, SPEED],
            np.float32,
        )

    def _pt(self, t: float) -> np.ndarray:
        dt = self.spec.period_ms / 1000
        people = self._people
        people[:, :2] += people[:, 2:] * dt
        for axis in (0, 1):  # people turn back at the walls
            out = (people[:, axis] < 0) | (people[:, axis] > HALL)
            people[out, axis + 2] *= -1
            people[:, axis] = np.clip(people[:, axis], 0, HALL)
        return people.copy()

    def _hm(self, t: float) -> np.ndarray:
        self._heat *= 0.9
        if "people" in self.latest:
            cells = np.clip((self.latest["people"][:, :2] / HALL * CELLS).astype(int), 0, CELLS - 1)
            np.add.at(self._heat, (cells[:, 1], cells[:, 0]), 1.0)
        return self._heat

    def _ltp(self, t: float) -> np.ndarray:
        """Waypoints ahead on the loop, each pushed outwards by the heat around it."""
        pose = self.latest.get("pose", self._loc(t))
        angle = pose[2] - math.pi / 2 + np.arange(1, WAYPOINTS + 1) * 0.15
        radius = np.full(WAYPOINTS, CIRCLE)
        if "heatmap" in self.latest:
            xs, ys = HALL / 2 + radius * np.cos(angle), HALL / 2 + radius * np.sin(angle)
            cells = np.clip((np.column_stack([xs, ys]) / HALL * CELLS).astype(int), 0, CELLS - 1)
            radius = radius + np.minimum(self.latest["heatmap"][cells[:, 1], cells[:, 0]], 2.0)
        return np.column_stack([HALL / 2 + radius * np.cos(angle), HALL / 2 + radius * np.sin(angle)])

    def _stp(self, t: float) -> np.ndarray:
        """Straight to the next waypoint, slower where a person is near the way."""
        pose = self.latest.get("pose", self._loc(t))
        goal = self.latest["route"][0] if "route" in self.latest else pose[:2] + 1.0
        steps = np.linspace(0, 1, HORIZON)[:, None]
        points = pose[:2] + steps * (goal - pose[:2])
        speed = np.full(HORIZON, SPEED)
        if "people" in self.latest:
            gaps = np.linalg.norm(points[:, None, :] - self.latest["people"][None, :, :2], axis=2).min(axis=1)
            speed = np.where(gaps < 1.5, SPEED * gaps / 1.5, SPEED)
        return np.column_stack([points, speed])

    def _bc(self, t: float) -> np.ndarray:
        if "trajectory" not in self.latest:
            return np.zeros(2, np.float32)
        slowdown = float(np.clip(1 - self.latest["trajectory"][:, 2].min() / SPEED, 0, 1))
        return np.array([slowdown, slowdown], np.float32)

    def _hc(self, t: float) -> np.ndarray:
        if "trajectory" not in self.latest or "pose" not in self.latest:
            return np.zeros(2, np.float32)
        way = self.latest["trajectory"][-1, :2] - self.latest["trajectory"][0, :2]
        error = math.remainder(math.atan2(way[1], way[0]) - float(self.latest["pose"][2]), math.tau)
        return np.array([max(0.0, -error), max(0.0, error)], np.float32).clip(0, 1)

    def _avi(self, t: float) -> np.ndarray:
        haptics = self.latest.get("haptics", np.zeros(2))
        brakes = self.latest.get("brakes", np.zeros(2))
        crowding = float(self.latest["heatmap"].max()) if "heatmap" in self.latest else 0.0
        return np.array([haptics[1] - haptics[0], brakes.max(), crowding, len(self.latest)], np.float32)


def board_of(module: str, mapping: int) -> int:
    """The board (1 or 2) that runs ``module`` in mapping ``mapping``."""
    return 1 if module in MAPPINGS[mapping] else 2


def daemon_options(mapping: int, board: int) -> list[str]:
    """The options of board ``board``'s daemon (1 or 2) in mapping ``mapping``: a label per
    module it runs, and its real-time priority."""
    mine = [module for module in MODULES if board_of(module, mapping) == board]
    labels = [arg for module in mine for arg in ("--label", f"{module}=true")]
    return [*labels, "--realtime-priority", str(DAEMON_PRIORITY)]


@dataclass
class Latencies:
    """What AVI measures: the latency of every message it receives, by topic, from the second
    after its first activation on; and the messages that never came (gaps in a topic's sequence
    numbers)."""

    started: int | None = None
    by_topic: dict[str, list[int]] = field(default_factory=dict)
    last_seq: dict[str, int] = field(default_factory=dict)
    lost: int = 0

    def begin(self) -> None:
        """Marks the first activation: the warm-up is the run's first second, not the process's,
        which may pass before any message while a cluster starts."""
        self.started = time.time_ns()

    def add(self, topic: str, stamp: int, seq: int) -> None:
        now = time.time_ns()
        self.lost += seq - self.last_seq.get(topic, 0) - 1
        self.last_seq[topic] = seq
        if self.started is not None and now - self.started >= WARMUP_S * 1e9:
            self.by_topic.setdefault(topic, []).append(now - stamp)

    def summary(self) -> str:
        """max, mean and standard deviation in µs over every topic, as the paper's Table I."""
        every = np.array([x for xs in self.by_topic.values() for x in xs], np.float64) / 1000
        if every.size == 0:
            return "avi: no message arrived after the warm-up"
        topics = ", ".join(f"{topic} {len(xs)}" for topic, xs in sorted(self.by_topic.items()))
        return (
            f"avi: {every.size} messages ({topics}); latency µs: max {every.max():.0f}, "
            f"mean {every.mean():.1f}, stdev {every.std():.1f}; lost {self.lost}"
        )

    def save(self, path: Path) -> None:
        """Every sample, in ns by topic, and the messages lost (the benchmark suite reads them)."""
        path.write_text(json.dumps({"latency_ns": self.by_topic, "lost": self.lost}))

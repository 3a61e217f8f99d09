"""What a benchmark case is, and what running one produces.

Every implementation (nerve and each peer) runs the same cases with the same rules:

* each node is its own process;
* the producer writes ``time.monotonic_ns()`` into the first 8 bytes of the payload
  (little-endian int64) immediately before handing the message to the middleware;
* the consumer takes ``time.monotonic_ns()`` as soon as its code holds the data (the
  middleware's natural payload object: for nerve, a pyarrow array over shared memory) and has
  read the stamp back from it with ``struct`` (the same Python code for every implementation:
  pyarrow's or numpy's own cost is not the middleware's);
* waits are blocking (no busy polling) unless a case says ``spin``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

#: First messages of each run left out of latencies and CPU times: connection set-up, first
#: allocations and page faults. Nodes are told it (they count CPU time only after it).
WARMUP = 10


@dataclass(frozen=True)
class Case:
    """One measurement: a message size and rate on a topology."""

    scenario: str  # latency-size, latency-rate, fan-out, …, spin, topics (see scenarios.py)
    size: int  # payload bytes (at least 8: the stamp)
    count: int  # messages per producer
    rate_hz: float = 50.0  # 0: unpaced, as fast as possible
    producers: int = 1
    consumers: int = 1
    # nerve only: the nodes' language at both ends (python, rust or cpp), or producer-consumer
    # (`cpp-python`: C++ sends, Python reads); a cpp scenario case names what C++ is compared with.
    lang: str = "python"
    spin: bool = False  # consumer busy-polls instead of sleeping (opt-in real-time mode)
    loan: bool = True  # nerve producers write into a loaned block; False: send a numpy array (one copy)
    stress: bool = False  # another process loads every core meanwhile
    transport: str = ""  # topics: process, host (shm) or network (Zenoh); lan: cluster, zenoh or topics
    realtime: bool = False  # nerve nodes run with `realtime:` (SCHED_FIFO priority, locked memory)
    # Idle CPUs poll instead of halting (a CPU latency request of 0 µs): nerve's nodes ask for it
    # with `realtime: {cpu_latency_us: 0}`, the harness holds it for every other implementation.
    cpu_latency: bool = False
    # types: the ROS 2 message type of the payload (`sensor_msgs/msg/Image`); `codec` cases time
    # its CDR encode and decode in one process instead of sending it.
    message: str = ""
    codec: bool = False
    # walker: the paper's mapping of the eight modules to two boards (1, 2 or 3) and the seconds
    # of activations a run lasts; its messages' sizes and rates are the modules' own (size,
    # count and rate_hz are 0).
    mapping: int = 0
    seconds: float = 0.0  # control-loop too: how long the loop runs; viewer-soak: how long it is sampled

    @property
    def key(self) -> str:
        parts = [self.scenario, f"{self.size}B", f"{self.rate_hz:g}Hz", f"{self.producers}x{self.consumers}", self.lang]
        if self.spin:
            parts.append("spin")
        if not self.loan:
            parts.append("copy")
        if self.stress:
            parts.append("stress")
        if self.transport:
            parts.append(self.transport)
        if self.realtime:
            parts.append("rt")
        if self.cpu_latency:
            parts.append("cpu-latency")
        if self.message:
            parts.append(self.message.rsplit("/", 1)[1])
        if self.codec:
            parts.append("cdr")
        if self.mapping:
            parts.append(f"mapping{self.mapping}")
        if self.seconds:
            parts.append(f"{self.seconds:g}s")
        return "-".join(parts)


@dataclass
class Samples:
    """Raw results of one case for one implementation."""

    implementation: str
    case: Case
    # One-way latency samples: (stamp sent, stamp received, consumer index), in ns.
    sent_ns: list[int] = field(default_factory=list)
    received_ns: list[int] = field(default_factory=list)
    consumer: list[int] = field(default_factory=list)
    # Round trips, in ns (round-trip cases only).
    rtt_ns: list[int] = field(default_factory=list)
    # CPU time of producer and consumer processes over the measured messages, in ns, and how
    # many messages that time covers (those after the warm-up).
    producer_cpu_ns: int | None = None
    consumer_cpu_ns: int | None = None
    producer_cpu_messages: int | None = None
    consumer_cpu_messages: int | None = None
    # Unpaced runs: messages the consumer saw and over how long.
    messages: int = 0
    seconds: float = 0.0
    # Why the implementation could not run this case, if it could not.
    error: str | None = None
    # How it ran, where that matters to reading the numbers (the LAN scenario's link shaping).
    note: str | None = None
    # Which of the repeated runs of this case this is (``--repeat``), from 0.
    run: int = 0
    # types: messages whose numpy view of the payload was the received shared memory itself
    # (no copy), of `messages`.
    views: int | None = None
    # types, latency: medians in µs of the producer's send (stamp to the return of send_output,
    # `send`) and of the consumer's read (value in hand to the stamp read from the view, `read`).
    steps_us: dict | None = None
    # types, codec cases: what benches/nodes/types_node.py measured (`encode_ns` and `decode_ns`
    # per call, `cdr_bytes`, page faults per call).
    cdr: dict | None = None
    # view, with the dashboard open: the CPU of the `nerve view` process (`cpu_ns`) and of the
    # emulated page (`page_cpu_ns`) over the run's `seconds`, the graphs the page fetched
    # (`graph_polls`) and the messages its channel of this case's stream showed, by kind
    # (`frames`: {"image": 87}) (benches/impl_view.py). viewer-soak: the same for every channel
    # shown (and `tf`, the transform tree), the samples of the viewer and the page taken over the
    # run (`series`: a list for each of benches/impl_viewer_soak.py's COLUMNS), the transforms
    # the page showed last (`transforms`) and the mapper's and the monitor's last log lines.
    viewer: dict | None = None
    # walker: the latencies AVI measured, in ns by topic (after its first second), and the
    # messages it never got (gaps in each topic's sequence numbers).
    by_topic_ns: dict[str, list[int]] | None = None
    lost: int | None = None
    # control-loop: the robot's record, one entry per reading of its loop, in order (lists of
    # equal length): when it was sent (`sent_ns`), its round trip to the answer in the robot's
    # hands (`round_trip_ns`, -1: never answered) and whether that answer missed the next
    # deadline (`missed`, 0 or 1) (benches/impl_control.py).
    control: dict[str, list[int]] | None = None
    # foxglove: the CPU of the process that forwards (the bridge; the SDK's producing process,
    # as `process` says) from /proc, with the client subscribed (`cpu_ns` over `seconds`) and
    # with no client (`idle_cpu_ns` over `idle_seconds`), for nerve also its producer node's
    # (`producer_cpu_ns`, `producer_idle_cpu_ns`), the payload bytes the client received in its
    # window (`bytes`), its messages there by stream (`messages`: {"image": 300, "cloud": 100})
    # and each stream's CDR size (`sizes`); one run serves both streams' cases, so both carry
    # the same (benches/impl_foxglove.py). The messages the client got are `sent_ns`, `received_ns`,
    # and `lost` the gaps in the stream's sequence numbers.
    foxglove: dict | None = None

    def latencies_us(self) -> np.ndarray:
        if self.by_topic_ns is not None:
            return np.asarray([ns for topic in self.by_topic_ns.values() for ns in topic], dtype=np.float64) / 1000.0
        if self.rtt_ns:
            return np.asarray(self.rtt_ns, dtype=np.float64) / 2000.0
        return (np.asarray(self.received_ns, dtype=np.float64) - np.asarray(self.sent_ns, dtype=np.float64)) / 1000.0

    def take_node_stats(self, producer: dict | None, consumer: dict | None) -> None:
        """Takes what a producer's ``p0.json`` and a consumer's ``c0.txt.json`` say."""
        if producer is not None:
            self.producer_cpu_ns = producer["cpu_ns"]
            self.producer_cpu_messages = producer.get("cpu_messages")
        if consumer is not None:
            self.consumer_cpu_ns = consumer["cpu_ns"]
            self.consumer_cpu_messages = consumer.get("cpu_messages")
            self.messages = consumer["messages"]
            self.seconds = consumer["seconds"]

    def producer_cpu_us_per_message(self) -> float | None:
        messages = self.producer_cpu_messages or self.case.count  # older results: every message
        return self.producer_cpu_ns / messages / 1000 if self.producer_cpu_ns is not None and messages else None

    def consumer_cpu_us_per_message(self) -> float | None:
        messages = self.consumer_cpu_messages or self.messages
        return self.consumer_cpu_ns / messages / 1000 if self.consumer_cpu_ns and messages else None

    def save(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.implementation}--{self.case.key}--{self.run}.json"
        data = asdict(self)
        path.write_text(json.dumps(data))
        return path

    @classmethod
    def load(cls, path: Path) -> Samples:
        data = json.loads(path.read_text())
        data["case"] = Case(**data["case"])
        return cls(**data)


def read_stamp_lines(path: Path, consumer: int, samples: Samples) -> None:
    """Appends a consumer's ``sent received`` lines (ns) to ``samples``."""
    if not path.exists():
        return
    raw = np.loadtxt(path, dtype=np.int64, ndmin=2)
    if raw.size == 0:
        return
    samples.sent_ns.extend(raw[:, 0].tolist())
    samples.received_ns.extend(raw[:, 1].tolist())
    samples.consumer.extend([consumer] * len(raw))

"""Eclipse Cyclone DDS (cyclonedds-python), the DDS under ROS 2, on loopback only.

The topic type is an IDL struct ``bench::Payload { sequence<uint8> data; }`` declared with
``cyclonedds.idl`` dataclass types. QoS: reliable, keep-last 10 (writer and reader), volatile.
Consumers sleep in a WaitSet on a ReadCondition (or, spinning, poll ``take``).

cyclonedds-python has no loan: ``write`` serialises the sample in Python, and a reader's ``take``
deserialises it into a new sample object. A ``sequence<uint8>`` is a Python ``list`` of ints on
both sides (that is how the binding maps it), so both steps walk the payload one element at a
time: this dominates its cost for big messages. The producer keeps one sample and only rewrites
its first 8 elements (the stamp) before each ``write``.

The network configuration (CYCLONEDDS_URI, set by the harness) binds to 127.0.0.1 with multicast
off and unicast discovery of the local participants.
"""

# No `from __future__ import annotations`: cyclonedds.idl reads the field types at run time.
import time
from dataclasses import dataclass

import common
from cyclonedds.core import InstanceState, Policy, Qos, ReadCondition, SampleState, ViewState, WaitSet
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl import types as T
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration

DISCOVERY_TIMEOUT_S = 30.0


@dataclass
class Payload(IdlStruct, typename="bench::Payload"):
    data: T.sequence[T.uint8]


def qos() -> Qos:
    return Qos(
        Policy.Reliability.Reliable(duration(seconds=10)),
        Policy.History.KeepLast(10),
        Policy.Durability.Volatile,
    )


class Endpoint:
    def __init__(self, cfg: dict) -> None:
        self.dp = DomainParticipant(cfg["domain"])
        self.cfg = cfg

    def writer(self, name: str) -> DataWriter:
        return DataWriter(self.dp, Topic(self.dp, name, Payload, qos=qos()), qos=qos())

    def reader(self, name: str) -> tuple[DataReader, WaitSet]:
        reader = DataReader(self.dp, Topic(self.dp, name, Payload, qos=qos()), qos=qos())
        waitset = WaitSet(self.dp)
        waitset.attach(ReadCondition(reader, SampleState.Any | ViewState.Any | InstanceState.Any))
        return reader, waitset


def wait_matched(writer: DataWriter, n: int) -> None:
    matched = writer.get_publication_matched_status
    common.wait_until(lambda: matched().current_count >= n, DISCOVERY_TIMEOUT_S, f"{n} readers")
    # The writer knows the readers; give the readers a moment to know the writer as well (a
    # reliable reader drops data from writers it has not matched yet).
    time.sleep(0.5)


def stamp_of(sample: Payload) -> int:
    return common.STAMP.unpack(bytes(sample.data[:8]))[0]


def take(reader: DataReader) -> list[Payload]:
    """The data samples `take` returns (it also returns InvalidSample for writers that left)."""
    return [s for s in reader.take(N=64) if isinstance(s, Payload)]


def producer(cfg: dict, index: int) -> None:
    ep = Endpoint(cfg)
    writer = ep.writer("bench_data")
    sample = Payload(data=[0] * cfg["size"])
    wait_matched(writer, cfg["consumers"])
    cpu = common.ProducerCpu(cfg, index)
    for i in common.paced(cfg["count"], cfg["rate_hz"], cfg["budget_s"], (index, cfg["producers"])):
        cpu.tick(i)
        sample.data[0:8] = common.STAMP.pack(time.monotonic_ns())
        writer.write(sample)
    cpu.done()
    # Reliable: stay until every reader has acknowledged what we wrote.
    writer.wait_for_acks(duration(seconds=30))


def consumer(cfg: dict, index: int) -> None:
    ep = Endpoint(cfg)
    reader, waitset = ep.reader("bench_data")
    rec = common.Recorder(cfg, index)
    common.ready(cfg, "consumer", index)
    spin = cfg["spin"]
    period = duration(seconds=1)
    done = False
    while not done:
        if not spin:
            waitset.wait(period)
        for sample in take(reader):
            if rec.record(stamp_of(sample), time.monotonic_ns()):
                done = True
                break
    rec.finish()


def echo(cfg: dict, index: int) -> None:
    ep = Endpoint(cfg)
    reader, waitset = ep.reader("bench_ping")
    writer = ep.writer("bench_echo")
    common.exit_on_stdin_closed()
    common.ready(cfg, "echo", index)
    period = duration(seconds=1)
    while True:
        waitset.wait(period)
        for sample in take(reader):
            writer.write(sample)


def ping(cfg: dict, index: int) -> None:
    ep = Endpoint(cfg)
    writer = ep.writer("bench_ping")
    reader, waitset = ep.reader("bench_echo")
    rtts = common.RoundTrips(cfg)
    wait_matched(writer, 1)
    # The echo's writer must have matched our reader before answers come back: probe.
    probe = Payload(data=[0] * 8)
    deadline = time.monotonic() + DISCOVERY_TIMEOUT_S
    while not take(reader):
        if time.monotonic() > deadline:
            raise SystemExit("the echo never answered")
        writer.write(probe)
        waitset.wait(duration(milliseconds=100))
    time.sleep(0.2)
    reader.take(N=64)
    sample = Payload(data=[0] * cfg["size"])
    timeout = duration(seconds=10)
    for _ in common.paced(cfg["count"], cfg["rate_hz"], cfg["budget_s"]):
        t0 = time.monotonic_ns()
        sample.data[0:8] = common.STAMP.pack(t0)
        writer.write(sample)
        answered = False
        while not answered:
            if not waitset.wait(timeout):
                break
            for reply in take(reader):
                if stamp_of(reply) == t0:
                    rtts.rtts.append(time.monotonic_ns() - t0)
                    answered = True
        if not answered:
            break
    rtts.finish()


if __name__ == "__main__":
    role, index, cfg = common.args()
    {"producer": producer, "consumer": consumer, "echo": echo, "ping": ping}[role](cfg, index)

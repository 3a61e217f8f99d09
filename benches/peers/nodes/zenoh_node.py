"""Eclipse Zenoh (zenoh-python) in peer mode over Unix sockets, with or without shared memory.

No scouting at all (multicast and gossip off): every link is an explicit endpoint. Consumers (and
the echo) listen on ``unixsock-stream/c{i}.sock`` (relative to the case folder, the working
directory); producers (and the ping) connect to them, then wait until every consumer's liveliness
token is visible (declared after its subscriber, so the subscriber is known too).

Publishers block rather than drop on congestion (``CongestionControl.BLOCK``) and the default
reliable transport is used: no message is lost. Without shared memory (``cfg["shm"]`` false,
shared memory disabled in the config) a producer puts a bytearray (zenoh copies it into its
buffer). With it, a producer allocates a buffer from a ``zenoh.shm.ShmProvider`` (zenoh's loan),
writes the stamp into it and puts it: only a reference crosses the socket.

A consumer gets a ``Sample`` whose payload is a ``ZBytes``. zenoh-python offers no view of its
memory (no buffer protocol, on ``ZBytes`` or on ``ZShm``): the only way to read any of it,
shared memory or not, is ``to_bytes()``, a copy of the whole payload. That copy is part of the
measured latency, as it is part of any Python zenoh consumer.
"""

from __future__ import annotations

import json
import time

import common
import zenoh

KEY = "nerve-bench/data"
DISCOVERY_TIMEOUT_S = 30.0


def session(cfg: dict, listen: list[str], connect: list[str]) -> zenoh.Session:
    conf = {
        "mode": "peer",
        "scouting": {"multicast": {"enabled": False}, "gossip": {"enabled": False}},
        "listen": {"endpoints": listen},
        "connect": {"endpoints": connect},
        "transport": {"shared_memory": {"enabled": bool(cfg["shm"])}},
    }
    return zenoh.open(zenoh.Config.from_json5(json.dumps(conf)))


def endpoint(name: str) -> str:
    return f"unixsock-stream/{name}.sock"


def wait_tokens(s: zenoh.Session, prefix: str, n: int) -> None:
    def seen() -> bool:
        return sum(1 for r in s.liveliness().get(f"{prefix}/*", timeout=1.0) if r.ok is not None) >= n

    common.wait_until(seen, DISCOVERY_TIMEOUT_S, f"{n} subscribers", 0.05)


class Sender:
    """Puts stamped payloads of one size, from shared memory or from a bytearray."""

    def __init__(self, cfg: dict, s: zenoh.Session, key: str) -> None:
        self.size = size = cfg["size"]
        self.pub = s.declare_publisher(key, congestion_control=zenoh.CongestionControl.BLOCK)
        self.payload = bytearray(size)
        self.provider = None
        if cfg["shm"]:
            import zenoh.shm as shm

            # Room for a few messages in flight (all consumers share one buffer), at least zenoh's
            # default pool of 16 MiB.
            pool = max(16 << 20, size * 8)
            self.provider = shm.ShmProvider.default_backend(pool)
            self.policy = shm.BlockOn(shm.GarbageCollect())

    def send(self, loan: bool = True) -> int:
        if self.provider is None:
            t = time.monotonic_ns()
            common.STAMP.pack_into(self.payload, 0, t)
            self.pub.put(self.payload)
            return t
        if loan:
            buf = self.provider.alloc(self.size, self.policy)
            t = time.monotonic_ns()
            buf[0:8] = common.STAMP.pack(t)
        else:  # write a buffer of our own, then copy it into shared memory
            t = time.monotonic_ns()
            common.STAMP.pack_into(self.payload, 0, t)
            buf = self.provider.alloc(self.size, self.policy)
            buf[0 : self.size] = self.payload
        self.pub.put(buf)
        return t


def producer(cfg: dict, index: int) -> None:
    s = session(cfg, [], [endpoint(f"c{c}") for c in range(cfg["consumers"])])
    sender = Sender(cfg, s, KEY)
    wait_tokens(s, "nerve-bench/ready", cfg["consumers"])
    cpu = common.ProducerCpu(cfg, index)
    for i in common.paced(cfg["count"], cfg["rate_hz"], cfg["budget_s"], (index, cfg["producers"])):
        cpu.tick(i)
        sender.send(cfg["loan"])
    cpu.done()
    # Closing the session right away could cut off what is still queued for the consumers.
    deadline = time.monotonic() + 10 + cfg["size"] * cfg["count"] / 1e9
    while s.info.peers_zid() and time.monotonic() < deadline:
        time.sleep(0.05)
    s.close()


def consumer(cfg: dict, index: int) -> None:
    s = session(cfg, [endpoint(f"c{index}")], [])
    sub = s.declare_subscriber(KEY)
    token = s.liveliness().declare_token(f"nerve-bench/ready/c{index}")
    rec = common.Recorder(cfg, index)
    unpack = common.STAMP.unpack_from
    spin = cfg["spin"]
    common.ready(cfg, "consumer", index)
    while True:
        if spin:
            sample = sub.try_recv()
            if sample is None:
                continue
        else:
            sample = sub.recv()
        sent = unpack(sample.payload.to_bytes(), 0)[0]
        if rec.record(sent, time.monotonic_ns()):
            break
        del sample
    rec.finish()
    token.undeclare()
    s.close()


def echo(cfg: dict, index: int) -> None:
    s = session(cfg, [endpoint("echo")], [])
    sub = s.declare_subscriber(KEY + "/ping")
    pub = s.declare_publisher(KEY + "/echo", congestion_control=zenoh.CongestionControl.BLOCK)
    token = s.liveliness().declare_token("nerve-bench/ready/echo")  # noqa: F841 (alive while we are)
    common.exit_on_stdin_closed()
    common.ready(cfg, "echo", index)
    while True:
        sample = sub.recv()
        pub.put(sample.payload)  # the received ZBytes as they are (a shared-memory reference stays one)


def ping(cfg: dict, index: int) -> None:
    s = session(cfg, [], [endpoint("echo")])
    sender = Sender(cfg, s, KEY + "/ping")
    sub = s.declare_subscriber(KEY + "/echo")
    rtts = common.RoundTrips(cfg)
    wait_tokens(s, "nerve-bench/ready", 1)
    # Our subscriber must be known to the echo before it answers: probe until an answer comes.
    probe = zenoh.ZBytes(bytes(8))
    deadline = time.monotonic() + DISCOVERY_TIMEOUT_S
    while True:
        sender.pub.put(probe)
        time.sleep(0.1)
        if sub.try_recv() is not None:
            break
        if time.monotonic() > deadline:
            raise SystemExit("the echo never answered")
    time.sleep(0.2)
    while sub.try_recv() is not None:
        pass
    unpack = common.STAMP.unpack_from
    for _ in common.paced(cfg["count"], cfg["rate_hz"], cfg["budget_s"]):
        t0 = sender.send()
        while True:
            sample = sub.recv()
            if unpack(sample.payload.to_bytes(), 0)[0] == t0:
                rtts.rtts.append(time.monotonic_ns() - t0)
                break
    rtts.finish()


if __name__ == "__main__":
    role, index, cfg = common.args()
    {"producer": producer, "consumer": consumer, "echo": echo, "ping": ping}[role](cfg, index)

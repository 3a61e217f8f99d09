"""ZeroMQ (pyzmq) PUB/SUB over ipc:// sockets.

Each producer binds ``ipc://p{i}.ipc`` (relative to the case folder, the working directory, so
the path stays short) with an XPUB socket: it sees its subscribers' subscriptions and starts once
every consumer has subscribed. Consumers connect a SUB socket to every producer. Producers send
without a copy (``copy=False``: zmq keeps a reference to the buffer) from a fresh buffer per
message, since zmq may still be reading the previous one; consumers receive a ``zmq.Frame``
without a copy and read the stamp from its buffer.

Round trip: the ping binds ``ping.ipc`` (XPUB), the echo binds ``echo.ipc`` (XPUB); each
subscribes to the other. The echo sends back the very frame it received.
"""

from __future__ import annotations

import time

import common
import numpy as np
import zmq

SUBSCRIBED_TIMEOUT_S = 30.0


def hwm(cfg: dict) -> int:
    """Messages queued per socket: about 256 MiB worth, 16..10000."""
    return max(16, min(10_000, (256 << 20) // cfg["size"]))


def xpub(ctx: zmq.Context, cfg: dict, endpoint: str) -> zmq.Socket:
    sock = ctx.socket(zmq.XPUB)
    sock.setsockopt(zmq.XPUB_VERBOSE, 1)  # one subscription message per subscriber
    # At the high-water mark a PUB socket drops; with XPUB_NODROP, send blocks instead.
    sock.setsockopt(zmq.XPUB_NODROP, 1)
    sock.setsockopt(zmq.SNDHWM, hwm(cfg))
    sock.setsockopt(zmq.LINGER, 5000)
    sock.bind(endpoint)
    return sock


def wait_subscribers(sock: zmq.Socket, n: int) -> None:
    seen = 0
    deadline = time.monotonic() + SUBSCRIBED_TIMEOUT_S
    while seen < n:
        left = deadline - time.monotonic()
        if left <= 0 or not sock.poll(int(left * 1000)):
            raise SystemExit(f"only {seen} of {n} subscribers after {SUBSCRIBED_TIMEOUT_S:g} s")
        if sock.recv()[:1] == b"\x01":
            seen += 1


def sub(ctx: zmq.Context, cfg: dict, endpoints: list[str]) -> zmq.Socket:
    sock = ctx.socket(zmq.SUB)
    sock.setsockopt(zmq.RCVHWM, hwm(cfg))
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SUBSCRIBE, b"")
    for endpoint in endpoints:
        sock.connect(endpoint)
    return sock


def producer(cfg: dict, index: int) -> None:
    ctx = zmq.Context()
    sock = xpub(ctx, cfg, f"ipc://p{index}.ipc")
    common.ready(cfg, "producer", index)
    wait_subscribers(sock, cfg["consumers"])
    size, loan = cfg["size"], cfg["loan"]
    payload = np.zeros(size, dtype=np.uint8)
    stamp = payload[:8].view("<i8")
    cpu = common.ProducerCpu(cfg, index)
    for i in common.paced(cfg["count"], cfg["rate_hz"], cfg["budget_s"], (index, cfg["producers"])):
        cpu.tick(i)
        if loan:
            buf = np.empty(size, dtype=np.uint8)  # zmq owns it until sent: no reuse
            buf[:8].view("<i8")[0] = time.monotonic_ns()
            sock.send(buf, copy=False)
        else:
            stamp[0] = time.monotonic_ns()
            sock.send(payload, copy=True)
    cpu.done()
    sock.close()  # lingers until every message is out
    ctx.term()


def consumer(cfg: dict, index: int) -> None:
    ctx = zmq.Context()
    sock = sub(ctx, cfg, [f"ipc://p{p}.ipc" for p in range(cfg["producers"])])
    rec = common.Recorder(cfg, index)
    unpack = common.STAMP.unpack_from
    common.ready(cfg, "consumer", index)
    spin = cfg["spin"]
    while True:
        if spin:
            try:
                frame = sock.recv(zmq.NOBLOCK, copy=False)
            except zmq.Again:
                continue
        else:
            frame = sock.recv(copy=False)
        sent = unpack(frame.buffer, 0)[0]
        if rec.record(sent, time.monotonic_ns()):
            break
        del frame
    rec.finish()


def echo(cfg: dict, index: int) -> None:
    ctx = zmq.Context()
    out = xpub(ctx, cfg, "ipc://echo.ipc")
    inp = sub(ctx, cfg, ["ipc://ping.ipc"])
    common.exit_on_stdin_closed()
    common.ready(cfg, "echo", index)
    while True:
        frame = inp.recv(copy=False)
        out.send(frame, copy=False)


def ping(cfg: dict, index: int) -> None:
    ctx = zmq.Context()
    out = xpub(ctx, cfg, "ipc://ping.ipc")
    inp = sub(ctx, cfg, ["ipc://echo.ipc"])
    rtts = common.RoundTrips(cfg)
    wait_subscribers(out, 1)
    unpack = common.STAMP.unpack_from
    # The echo's answers only reach us once our subscription got to it: probe until one does.
    probe = np.zeros(8, dtype=np.uint8)
    deadline = time.monotonic() + SUBSCRIBED_TIMEOUT_S
    while not inp.poll(100):
        if time.monotonic() > deadline:
            raise SystemExit("the echo never answered")
        out.send(probe)
    while inp.poll(200):
        inp.recv()
    payload = np.zeros(cfg["size"], dtype=np.uint8)
    stamp = payload[:8].view("<i8")
    for _ in common.paced(cfg["count"], cfg["rate_hz"], cfg["budget_s"]):
        stamp[0] = t0 = time.monotonic_ns()
        out.send(payload, copy=False)
        while inp.poll(10_000):
            frame = inp.recv(copy=False)
            if unpack(frame.buffer, 0)[0] == t0:
                rtts.rtts.append(time.monotonic_ns() - t0)
                break
        else:
            break
    rtts.finish()


if __name__ == "__main__":
    role, index, cfg = common.args()
    {"producer": producer, "consumer": consumer, "echo": echo, "ping": ping}[role](cfg, index)

"""iceoryx2: a publish-subscribe service of u8 slices in shared memory, plus an event service
whose listener the consumers sleep on (a publisher notifies it after each send).

Producers loan an uninitialised slice of the case size (``loan_slice_uninit``), write the stamp
into it and send it: no copy. With ``loan`` off they write a numpy array and copy it into the
loaned slice. Consumers read the stamp from the received sample's payload memory (zero-copy).
The service is lossless (no safe overflow, publishers retry until delivered) so that unpaced
runs measure delivered messages, not drops.

Round trip: services ``…/ping`` and ``…/echo``, each with its event service; the echo copies the
received payload into a slice it loaned from its own publisher (a sample belongs to its
publisher's memory and cannot be sent on).
"""

from __future__ import annotations

import ctypes
import time

import common
import iceoryx2 as iox
import numpy as np

DISCOVERY_TIMEOUT_S = 30.0


def buffer_size(cfg: dict) -> int:
    """Samples a subscriber may hold: deep queues for small messages (unpaced runs), shallow ones
    for big messages (every slot is a full-size block in the publisher's segment)."""
    return 64 if cfg["size"] <= 65536 else 4


class Channel:
    """One topic: the publish-subscribe service and its event service."""

    def __init__(self, node: iox.Node, cfg: dict, name: str, publishers: int, subscribers: int) -> None:
        nodes = cfg["producers"] + cfg["consumers"] + 2
        self.cfg = cfg
        self.data = self._open(
            lambda: (
                node.service_builder(iox.ServiceName.new(name))
                .publish_subscribe(iox.Slice[ctypes.c_uint8])
                .max_publishers(publishers)
                .max_subscribers(subscribers)
                .max_nodes(nodes)
                .history_size(0)
                .subscriber_max_buffer_size(buffer_size(cfg))
                .enable_safe_overflow(False)
                .open_or_create()
            )
        )
        self.event = self._open(
            lambda: (
                node.service_builder(iox.ServiceName.new(name + "/event"))
                .event()
                .max_notifiers(publishers)
                .max_listeners(subscribers)
                .max_nodes(nodes)
                .open_or_create()
            )
        )

    @staticmethod
    def _open(build):
        # Several processes open the same service at once: one creates it, the others may find it
        # half-created and retry.
        deadline = time.monotonic() + 10
        while True:
            try:
                return build()
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def publisher(self):
        pub = (
            self.data.publisher_builder()
            .initial_max_slice_len(self.cfg["size"])
            .backpressure_strategy(iox.BackpressureStrategy.RetryUntilDelivered)
            .create()
        )
        return pub, self.event.notifier_builder().create()

    def subscriber(self, publishers: int, ready=None):
        """A listener, then (once `publishers` publishers exist) a subscriber. A subscriber made
        before the publisher connects in a way that ignores the publisher's backpressure
        (RetryUntilDelivered): samples beyond the buffer are dropped, see iceoryx2 issue #1697."""
        listener = self.event.listener_builder().create()
        if ready:
            ready()
        common.wait_until(
            lambda: self.data.dynamic_config.number_of_publishers >= publishers,
            DISCOVERY_TIMEOUT_S,
            f"{publishers} publishers",
        )
        sub = self.data.subscriber_builder().buffer_size(buffer_size(self.cfg)).create()
        return sub, listener

    def wait_subscribers(self, n: int) -> None:
        dynamic = self.data.dynamic_config
        common.wait_until(lambda: dynamic.number_of_subscribers >= n, DISCOVERY_TIMEOUT_S, f"{n} subscribers")


def make_node() -> iox.Node:
    iox.set_log_level(iox.LogLevel.Warn)
    return iox.NodeBuilder.new().create(iox.ServiceType.Ipc)


def send(pub, notifier, size: int) -> int:
    """Loans a slice, stamps it and sends it; returns the stamp."""
    sample = pub.loan_slice_uninit(size)
    view = sample.payload().as_memory_view()
    t = time.monotonic_ns()
    common.STAMP.pack_into(view, 0, t)
    sample.assume_init().send()
    notifier.notify()
    return t


def producer(cfg: dict, index: int) -> None:
    node = make_node()
    chan = Channel(node, cfg, cfg["service"], cfg["producers"], cfg["consumers"])
    pub, notifier = chan.publisher()
    chan.wait_subscribers(cfg["consumers"])
    pub.update_connections()
    size = cfg["size"]
    payload = np.zeros(size, dtype=np.uint8)
    stamp = payload[:8].view("<i8")
    cpu = common.ProducerCpu(cfg, index)
    for i in common.paced(cfg["count"], cfg["rate_hz"], cfg["budget_s"], (index, cfg["producers"])):
        cpu.tick(i)
        if cfg["loan"]:
            send(pub, notifier, size)
        else:
            stamp[0] = time.monotonic_ns()
            sample = pub.loan_slice_uninit(size)
            ctypes.memmove(sample.payload_ptr, payload.ctypes.data, size)
            sample.assume_init().send()
            notifier.notify()
    cpu.done()
    # Delivered samples live in our segment: stay (a while) until every subscriber is done.
    deadline = time.monotonic() + 10 + cfg["size"] * cfg["count"] / 1e9
    while chan.data.dynamic_config.number_of_subscribers and time.monotonic() < deadline:
        time.sleep(0.05)


def consumer(cfg: dict, index: int) -> None:
    node = make_node()
    chan = Channel(node, cfg, cfg["service"], cfg["producers"], cfg["consumers"])
    rec = common.Recorder(cfg, index)
    sub, listener = chan.subscriber(cfg["producers"], lambda: common.ready(cfg, "consumer", index))
    unpack = common.STAMP.unpack_from
    spin = cfg["spin"]
    while True:
        sample = sub.receive()
        if sample is None:
            if not spin:
                listener.blocking_wait()
            continue
        sent = unpack(sample.payload().as_memory_view(), 0)[0]
        if rec.record(sent, time.monotonic_ns()):
            break
        del sample
    rec.finish()
    del sample
    sub.delete()


def echo(cfg: dict, index: int) -> None:
    node = make_node()
    out_chan = Channel(node, cfg, cfg["service"] + "/echo", 1, 1)
    pub, notifier = out_chan.publisher()
    common.exit_on_stdin_closed()
    inp_chan = Channel(node, cfg, cfg["service"] + "/ping", 1, 1)
    inp, listener = inp_chan.subscriber(1, lambda: common.ready(cfg, "echo", index))
    while True:
        sample = inp.receive()
        if sample is None:
            listener.blocking_wait()
            continue
        n = sample.payload().len()
        reply = pub.loan_slice_uninit(n)
        ctypes.memmove(reply.payload_ptr, sample.payload_ptr, n)
        reply.assume_init().send()
        notifier.notify()
        del sample


def ping(cfg: dict, index: int) -> None:
    node = make_node()
    out_chan = Channel(node, cfg, cfg["service"] + "/ping", 1, 1)
    pub, notifier = out_chan.publisher()
    inp, listener = Channel(node, cfg, cfg["service"] + "/echo", 1, 1).subscriber(1)
    rtts = common.RoundTrips(cfg)
    out_chan.wait_subscribers(1)
    pub.update_connections()
    unpack = common.STAMP.unpack_from
    timeout = iox.Duration.from_secs(10)
    size = cfg["size"]
    for _ in common.paced(cfg["count"], cfg["rate_hz"], cfg["budget_s"]):
        t0 = send(pub, notifier, size)
        answered = False
        while not answered:
            sample = inp.receive()
            if sample is None:
                if not listener.timed_wait(timeout):
                    break
                continue
            answered = unpack(sample.payload().as_memory_view(), 0)[0] == t0
            if answered:
                rtts.rtts.append(time.monotonic_ns() - t0)
            del sample
        if not answered:
            break
    rtts.finish()


if __name__ == "__main__":
    role, index, cfg = common.args()
    {"producer": producer, "consumer": consumer, "echo": echo, "ping": ping}[role](cfg, index)

"""A Foxglove WebSocket client for the `foxglove` scenario, as the Foxglove app is one: it connects
(subprotocol ``foxglove.sdk.v1``, which ``nerve foxglove`` and foxglove-sdk's server offer, or the
older ``foxglove.websocket.v1``), subscribes to the channels of its streams once they are
advertised and counts what arrives: messages and payload bytes per stream, and for each message
the stamp and sequence number its sender wrote into the first 16 bytes of its data
(benches/nodes/foxglove_node.py), with the moment it was in hand.

A binary ``MessageData`` frame is opcode 1, the subscription id (uint32), the log time (uint64)
and the payload: here the message's CDR.
"""

from __future__ import annotations

import contextlib
import json
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

SUBPROTOCOLS = ["foxglove.sdk.v1", "foxglove.websocket.v1"]
MESSAGE_DATA = 1
FRAME = struct.Struct("<BIQ")  # opcode, subscription id, log time
HEADER = struct.Struct("<qq")  # the sender's stamp and sequence number, at the data's start
#: How long a blocked receive waits before it looks whether the client is closing, in seconds.
TICK = 0.2
#: Seconds to wait for a connection or an advertisement at most.
TIMEOUT = 30
#: No proxy (loopback only), no keepalive pings, and no compression offered (Foxglove's server
#: negotiates none anyway): the same socket to both servers. Messages are up to 1.6 MB.
SOCKET = {"proxy": None, "open_timeout": TIMEOUT, "ping_interval": None, "compression": None, "max_size": None}


@dataclass
class Stream:
    """One channel as the client sees it: its topic, where the stamp lies in its payload and the
    payload's size (every message of a stream has the same), and what arrived."""

    topic: str
    offset: int
    size: int
    messages: int = 0
    bytes: int = 0
    sent_ns: list[int] = field(default_factory=list)
    received_ns: list[int] = field(default_factory=list)
    seq: list[int] = field(default_factory=list)

    def lost(self) -> int:
        """Messages missing between the first and the last that arrived (gaps in the sequence)."""
        return self.seq[-1] - self.seq[0] + 1 - len(self.seq) if self.seq else 0


def advertised(socket: ClientConnection, topics: set[str]) -> dict[str, int]:
    """The channel id of each of `topics`, once the server has advertised them all."""
    channels: dict[str, int] = {}
    end = time.monotonic() + TIMEOUT
    while not topics <= channels.keys():
        if time.monotonic() > end:
            raise RuntimeError(f"the server did not advertise {sorted(topics - channels.keys())} in {TIMEOUT} s")
        try:
            frame = socket.recv(timeout=TICK)
        except TimeoutError:
            continue
        if isinstance(frame, str):
            message = json.loads(frame)
            if message.get("op") == "advertise":
                channels.update({c["topic"]: c["id"] for c in message["channels"] if c["topic"] in topics})
    return channels


def wait_advertised(port: int, topics: set[str]) -> None:
    """Returns once the server on `port` advertises every one of `topics` (a client that
    connects afterwards gets them at once, and may subscribe as soon as it has them: the
    foxglove SDK's server may refuse a subscription to a channel advertised while the client
    was connected, for a moment; tests/test_foxglove.py's `Client.once_advertised`)."""
    with connect(f"ws://127.0.0.1:{port}", subprotocols=SUBPROTOCOLS, **SOCKET) as socket:
        advertised(socket, topics)


class Client:
    """Subscribed to `streams` (by name) on the server at `port` until `close`."""

    def __init__(self, port: int, streams: dict[str, Stream]) -> None:
        self.streams = streams
        self.errors: list[str] = []
        self.changed = threading.Condition()
        self.closing = threading.Event()
        self.stack = contextlib.ExitStack()
        self.socket = self.stack.enter_context(connect(f"ws://127.0.0.1:{port}", subprotocols=SUBPROTOCOLS, **SOCKET))
        try:
            channels = advertised(self.socket, {s.topic for s in streams.values()})
            self.by_id = dict(enumerate(streams))
            subscriptions = [{"id": i, "channelId": channels[streams[name].topic]} for i, name in self.by_id.items()]
            self.socket.send(json.dumps({"op": "subscribe", "subscriptions": subscriptions}))
        except BaseException:
            self.stack.close()
            raise
        self.reader = threading.Thread(target=self._read, name="foxglove-client", daemon=True)
        self.reader.start()

    def counts(self) -> dict[str, tuple[int, int]]:
        """Messages and payload bytes received so far, per stream."""
        with self.changed:
            return {name: (s.messages, s.bytes) for name, s in self.streams.items()}

    def wait(self, condition: Callable[[dict[str, int]], bool], seconds: float) -> bool:
        """Whether `condition` of the messages received per stream came true (or the client
        failed) within `seconds`: woken by every message, not by a timer."""

        def met() -> bool:
            return bool(self.errors) or condition({name: s.messages for name, s in self.streams.items()})

        with self.changed:
            return self.changed.wait_for(met, seconds)

    def close(self) -> None:
        self.closing.set()
        self.reader.join(TIMEOUT)
        self.stack.close()

    def _read(self) -> None:
        try:
            while not self.closing.is_set():
                try:
                    frame = self.socket.recv(timeout=TICK)
                except TimeoutError:
                    continue
                received = time.monotonic_ns()
                if isinstance(frame, str):
                    message = json.loads(frame)
                    if message.get("op") == "status" and message.get("level", 0) >= 2:
                        raise RuntimeError(f"the server: {message.get('message')}")
                    continue
                opcode, subscription, _ = FRAME.unpack_from(frame)
                if opcode != MESSAGE_DATA:
                    continue
                stream = self.streams[self.by_id[subscription]]
                size = len(frame) - FRAME.size
                if size != stream.size:
                    raise RuntimeError(f"{stream.topic}: a message of {size} bytes, not {stream.size}")
                sent, seq = HEADER.unpack_from(frame, FRAME.size + stream.offset)
                with self.changed:
                    stream.messages += 1
                    stream.bytes += size
                    stream.sent_ns.append(sent)
                    stream.received_ns.append(received)
                    stream.seq.append(seq)
                    self.changed.notify_all()
        except (OSError, ConnectionClosed, RuntimeError, KeyError, ValueError, struct.error) as e:
            with self.changed:
                self.errors.append(f"{type(e).__name__}: {e}")
                self.changed.notify_all()

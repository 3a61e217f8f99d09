"""What an open page of `nerve view` asks of it, without a browser: the graph once a second (which
is what turns the dashboard's statistics on), channels shown one message after the other, as
the page's script asks for them, and the transform tree (crates/nerve-view/assets/app.js).

A channel's WebSocket gets ``next`` and answers with a JSON header; when its ``kind`` is
``image`` a binary message of RGBA pixels follows, when it is ``points`` one of x, y, z float32
triples. The page asks again once it has both. The
transform tree's WebSocket sends the tree once a second unasked.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
import urllib.request
from collections import Counter

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

#: How often the page asks for the graph, in seconds (the page's own interval).
GRAPH_EVERY = 1.0
#: How long a blocked receive waits before it looks whether the page is closing, in seconds.
TICK = 0.2
#: Seconds to wait for a connection or an answer from the dashboard at most.
TIMEOUT = 30
#: How the page's WebSockets connect: as a browser's do, without keepalive pings (the client's
#: default is one every 20 s).
SOCKET = {"proxy": None, "open_timeout": TIMEOUT, "ping_interval": None}
#: The transform tree's key in `Page.frames` and `Page.latest`: its endpoint, which is no channel's
#: key (a topic's name, never with a leading `/`).
TRANSFORMS = "/api/tf"
# Loopback only, whatever proxy the environment names.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Page:
    """A page open on the dashboard at ``http://127.0.0.1:PORT``, until ``close``."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.closing = threading.Event()
        self.channels: set[str] = set()  # what the last graph listed
        self.polls = 0
        self.frames: dict[str, Counter[str]] = {}  # per channel key, messages received by kind
        self.latest: dict[str, dict] = {}  # per channel key (and TRANSFORMS), the last header shown
        self.opened: set[str] = set()  # channels whose first `next` went out
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._poll_graph, name="page-graph", daemon=True)]
        self.threads[0].start()

    def __enter__(self) -> Page:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def lists(self, keys: list[str]) -> bool:
        """Whether the last graph listed every channel of `keys` (or the page failed)."""
        with self.lock:
            return set(keys) <= self.channels or bool(self.errors)

    def open_channel(self, key: str) -> None:
        """Shows channel `key` (`~RUN/NODE/OUTPUT`), as a click on its edge does."""
        with self.lock:
            self.frames[key] = Counter()
        thread = threading.Thread(target=self._show, args=(key,), name=f"page-{key}", daemon=True)
        self.threads.append(thread)
        thread.start()

    def open_transforms(self) -> None:
        """Shows the transform tree, as a click on the Transforms tab does: its trees count in
        `frames[TRANSFORMS]`, and the last one is `latest[TRANSFORMS]`."""
        with self.lock:
            self.frames[TRANSFORMS] = Counter()
        thread = threading.Thread(target=self._transforms, name="page-tf", daemon=True)
        self.threads.append(thread)
        thread.start()

    def showing(self, keys: list[str]) -> bool:
        """Whether every channel of `keys` has asked for its first message (or failed)."""
        with self.lock:
            return set(keys) <= self.opened or bool(self.errors)

    def shown(self, keys: list[str]) -> bool:
        """Whether the page has shown a message of every channel of `keys` (`TRANSFORMS`: the
        transform tree), or failed."""
        with self.lock:
            return set(keys) <= self.latest.keys() or bool(self.errors)

    def close(self) -> None:
        self.closing.set()
        for thread in self.threads:
            thread.join(TIMEOUT)

    def _poll_graph(self) -> None:
        while True:
            try:
                with OPENER.open(f"http://127.0.0.1:{self.port}/api/graph", timeout=TIMEOUT) as r:
                    graph = json.load(r)
                with self.lock:
                    self.channels, self.polls = set(graph.get("channels") or []), self.polls + 1
            except OSError as e:
                with self.lock:
                    self.errors.append(f"/api/graph: {e}")
                return
            if self.closing.wait(GRAPH_EVERY):
                return

    def _show(self, key: str) -> None:
        url = f"ws://127.0.0.1:{self.port}/api/channel?key={urllib.parse.quote(key, safe='')}"
        try:
            # An RGBA frame of 640x480 is 1.2 MB: past the client's default bound of 1 MiB.
            with connect(url, max_size=None, **SOCKET) as socket:
                while not self.closing.is_set():
                    socket.send("next")
                    with self.lock:
                        self.opened.add(key)
                    header = self._receive(socket)
                    if header is None:
                        return
                    shown = json.loads(header)
                    if "error" in shown:
                        raise RuntimeError(shown["error"])
                    if shown["kind"] in ("image", "points"):
                        body = self._receive(socket)
                        if body is None:
                            return
                        check_body(shown, body)
                    with self.lock:
                        self.frames[key][shown["kind"]] += 1
                        self.latest[key] = shown
        except (OSError, ConnectionClosed, RuntimeError, KeyError, ValueError) as e:
            with self.lock:
                self.errors.append(f"{key}: {type(e).__name__}: {e}")

    def _transforms(self) -> None:
        try:
            with connect(f"ws://127.0.0.1:{self.port}{TRANSFORMS}", **SOCKET) as socket:
                while (tree := self._receive(socket)) is not None:
                    shown = json.loads(tree)
                    if "error" in shown:
                        raise RuntimeError(shown["error"])
                    with self.lock:
                        self.frames[TRANSFORMS]["tree"] += 1
                        self.latest[TRANSFORMS] = shown
        except (OSError, ConnectionClosed, RuntimeError, ValueError) as e:
            with self.lock:
                self.errors.append(f"transforms: {type(e).__name__}: {e}")

    def _receive(self, socket: ClientConnection) -> str | bytes | None:
        """The next message, or None once the page is closing. It waits as long as the channel
        has nothing new: the page never asks twice."""
        while not self.closing.is_set():
            try:
                return socket.recv(timeout=TICK)
            except TimeoutError:
                continue
        return None


def check_body(shown: dict, body: str | bytes) -> None:
    """The binary message after a header is what the header says: RGBA pixels of its size, or
    `count` x, y, z float32 triples."""
    if shown["kind"] == "image":
        expected, what = shown["width"] * shown["height"] * 4, f"RGBA for {shown['width']}x{shown['height']}"
    else:
        expected, what = shown["count"] * 12, f"{shown['count']} points"
    if not isinstance(body, bytes) or len(body) != expected:
        raise RuntimeError(f"{len(body)} bytes of {what}")

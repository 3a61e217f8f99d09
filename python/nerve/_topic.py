"""Topic subscribers with optional callbacks run on a worker pool."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, TypedDict

from nerve import _nerve


class Message(TypedDict):
    """A topic's message, shaped like a node's INPUT event; ``id`` is the topic. ``value`` is a
    ``pyarrow.Array`` viewing shared memory, or, from a publisher of this same process, the very
    object it sent; ``metadata`` holds the publisher's parameters and the send ``timestamp``."""

    type: Literal["INPUT"]
    id: str
    value: Any
    metadata: dict[str, Any]


_log = logging.getLogger("nerve.topic")
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
#: How often a callback dispatcher looks up from waiting, to notice ``close()``.
_POLL_S = 0.1


def _workers() -> int:
    return min(32, (os.cpu_count() or 1) + 4)


def _shared_pool() -> ThreadPoolExecutor:
    """The process's pool for concurrent callbacks, made on first use."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=_workers(), thread_name_prefix="nerve-callback")
        return _pool


class Subscriber:
    """Receives the messages of ``topic`` from publishers in this process and in other processes
    of the host, with no broker; it keeps receiving while publishers come, go and restart.

    A message is a dict like a node's INPUT event: ``type`` ("INPUT"), ``id`` (the topic),
    ``value`` (a ``pyarrow.Array`` viewing shared memory, or the very object a publisher of this
    process sent) and ``metadata`` (with the send ``timestamp``).

    Without ``callback``, call :meth:`recv` or iterate. With one, messages are handed to it on a
    worker thread: ``mode="serial"`` runs one call at a time, in order; ``mode="concurrent"``
    runs several messages of this subscriber in parallel on the shared worker pool (useful when
    the callback releases the GIL: numpy, I/O, sleeping). Call :meth:`close` (or use ``with``)
    to stop the callbacks.

    ``queue_size`` messages wait per publisher while the subscriber is busy; past that the
    oldest are dropped (counted in :attr:`dropped`), never the newest, and the publisher never
    waits. ``keep_latest=True`` keeps only the newest message.
    """

    def __init__(
        self,
        topic: str,
        *,
        domain: int = 0,
        scope: str = "network",
        queue_size: int = 10,
        keep_latest: bool = False,
        callback: Callable[[Message], object] | None = None,
        mode: Literal["serial", "concurrent"] = "serial",
    ) -> None:
        if mode not in ("serial", "concurrent"):
            raise ValueError(f"mode must be 'serial' or 'concurrent', not {mode!r}")
        self._inner = _nerve.Subscriber(
            topic, domain=domain, scope=scope, queue_size=queue_size, keep_latest=keep_latest
        )
        self._callback = callback
        self._mode = mode
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        if callback is not None:
            self._thread = threading.Thread(
                target=self._dispatch, name=f"nerve-subscriber-{self._inner.topic}", daemon=True
            )
            self._thread.start()

    @property
    def topic(self) -> str:
        """The topic's name (without a leading ``/``)."""
        return self._inner.topic

    @property
    def publisher_count(self) -> int:
        """Publishers reaching this subscriber now."""
        return self._inner.publisher_count

    @property
    def dropped(self) -> int:
        """Messages lost so far because the queue was full."""
        return self._inner.dropped

    def recv(self, timeout: float | None = None) -> Message | None:
        """The next message, waiting up to ``timeout`` seconds (forever with ``None``, not at all
        with ``0``); ``None`` on timeout."""
        if self._callback is not None:
            raise RuntimeError("this subscriber hands its messages to its callback; recv() is not available")
        return self._inner.recv(timeout)

    def __iter__(self) -> Iterator[Message]:
        while True:
            message = self.recv()
            if message is not None:
                yield message

    def close(self) -> None:
        """Stops handing messages to the callback (waits for the dispatcher, not for calls already
        running on the pool)."""
        self._closed.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def __enter__(self) -> Subscriber:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Subscriber(topic={self.topic!r}, mode={self._mode!r})"

    def _dispatch(self) -> None:
        concurrent = self._mode == "concurrent"
        # Bounds the calls in flight, so a slow callback makes messages wait in the subscriber's
        # queue (where the oldest are dropped) instead of piling up in the pool.
        slots = threading.BoundedSemaphore(_workers())
        while not self._closed.is_set():
            message = self._inner.recv(_POLL_S)
            if message is None:
                continue
            if not concurrent:
                self._call(message)
                continue
            while not slots.acquire(timeout=_POLL_S):
                if self._closed.is_set():
                    return
            future = _shared_pool().submit(self._call, message)
            future.add_done_callback(lambda _f: slots.release())

    def _call(self, message: Message) -> None:
        callback = self._callback
        if callback is None:
            return
        try:
            callback(message)
        except Exception:
            _log.exception("callback of the subscriber of %r failed", self.topic)

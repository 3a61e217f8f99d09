"""Topic subscribers with optional callbacks run on a worker pool."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator
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


#: Subscribers whose callbacks run: they live until closed (nerve closes what is left at exit),
#: even when the program keeps no reference to them.
_calling: set[Subscriber] = set()
_calling_lock = threading.Lock()


def _workers() -> int:
    """Threads of a concurrent subscriber: as many calls at once as ``ThreadPoolExecutor``'s default."""
    return min(32, (os.cpu_count() or 1) + 4)


class Subscriber:
    """Receives the messages of ``topic`` from publishers in this process and in other processes
    of the host, with no broker; it keeps receiving while publishers come, go and restart.

    A message is a dict like a node's INPUT event: ``type`` ("INPUT"), ``id`` (the topic),
    ``value`` (a ``pyarrow.Array`` viewing shared memory, or the very object a publisher of this
    process sent) and ``metadata`` (with the send ``timestamp``).

    Without ``callback``, call :meth:`recv` or iterate. With one, each message is handed to it
    on a thread of nerve's, woken by the message itself: ``mode="serial"`` runs one call at a
    time, in order; ``mode="concurrent"`` runs several messages of this subscriber in parallel
    (useful when the callback releases the GIL: numpy, I/O, sleeping). Call :meth:`close` (or
    use ``with``) to stop the callbacks.

    ``queue_size`` messages wait per publisher while the subscriber is busy; past that the
    oldest are dropped (counted in :attr:`dropped`), never the newest, and the publisher never
    waits. ``keep_latest=True`` keeps only the newest message.

    In a process of a run, the topic is the run's own unless the run shares it (``share:``);
    ``shared=True`` means the global topic, ``run="R"`` run ``R``'s (from anywhere).
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
        shared: bool = False,
        run: str | None = None,
    ) -> None:
        if mode not in ("serial", "concurrent"):
            raise ValueError(f"mode must be 'serial' or 'concurrent', not {mode!r}")
        self._callback = callback
        self._mode = mode
        self._inner = _nerve.Subscriber(
            topic,
            domain=domain,
            scope=scope,
            queue_size=queue_size,
            keep_latest=keep_latest,
            callback=None if callback is None else self._call,
            workers=_workers() if mode == "concurrent" else 0,
            shared=shared,
            run=run,
        )
        if callback is not None:
            with _calling_lock:
                _calling.add(self)

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
        with ``0``); ``None`` on timeout. Not available with a callback (``RuntimeError``)."""
        return self._inner.recv(timeout)

    def __iter__(self) -> Iterator[Message]:
        while True:
            message = self.recv()
            if message is not None:
                yield message

    def close(self) -> None:
        """Stops handing messages to the callback and unsubscribes; waits for the calls under
        way, except the caller's own (a callback may close its subscriber)."""
        self._inner.close()
        with _calling_lock:
            _calling.discard(self)

    def __enter__(self) -> Subscriber:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Subscriber(topic={self.topic!r}, mode={self._mode!r})"

    def _call(self, message: Message) -> None:
        callback = self._callback
        if callback is None:
            return
        try:
            callback(message)
        except Exception:
            _log.exception("callback of the subscriber of %r failed", self.topic)

"""Type stubs of the nerve extension module."""

from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from types import TracebackType
from typing import Any, Literal, TypedDict, final

import numpy as np
import pyarrow as pa
from typing_extensions import NotRequired, disjoint_base

from nerve._topic import Message

__version__: str
__all__ = [
    "Broadcaster",
    "Client",
    "ConnectError",
    "NerveError",
    "Node",
    "Publisher",
    "Sample",
    "SendError",
    "Service",
    "ServiceError",
    "StampedTransform",
    "StaticTransformBroadcaster",
    "Subscriber",
    "TransformBroadcaster",
    "TransformBuffer",
    "TransformError",
    "VersionMismatchError",
    "__version__",
    "monotonic_ns",
    "run_cli",
]

class NerveError(Exception): ...
class ConnectError(NerveError): ...
class VersionMismatchError(ConnectError): ...
class SendError(NerveError): ...

class Event(TypedDict):
    """One event: ``type`` is INPUT, INPUT_CLOSED, STOP or ERROR."""

    type: Literal["INPUT", "INPUT_CLOSED", "STOP", "ERROR"]
    id: NotRequired[str]
    value: NotRequired[pa.Array]
    metadata: NotRequired[dict[str, Any]]
    error: NotRequired[str]

SendData = bytes | bytearray | memoryview | np.ndarray | pa.Array | list[Any]

@final
class Sample:
    """Shared memory lent to fill in place; sent when the ``with`` block ends."""

    def send(self) -> None: ...
    def discard(self) -> None: ...
    def __len__(self) -> int: ...
    def __enter__(self) -> Sample: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None = None,
        _exc: BaseException | None = None,
        _tb: TracebackType | None = None,
    ) -> bool: ...

@final
class Node:
    """A dataflow node; ``Node("id")`` joins a running dataflow as a ``path: dynamic`` node."""

    def __new__(cls, node_id: str | None = None) -> Node: ...
    @property
    def id(self) -> str: ...
    def next(self, timeout: float | None = None) -> Event | None: ...
    def try_recv(self) -> Event | None: ...
    def drain(self) -> list[Event]: ...
    def recv_async(self, timeout: float | None = None) -> Awaitable[Event | None]: ...
    def __iter__(self) -> Iterator[Event]: ...
    def __next__(self) -> Event: ...
    def send_output(self, output_id: str, data: SendData, metadata: dict[str, Any] | None = None) -> None: ...
    def send_output_raw(self, output_id: str, data_len: int, metadata: dict[str, Any] | None = None) -> Sample: ...
    def close_outputs(self, outputs: list[str]) -> None: ...
    def dataflow_descriptor(self) -> dict[str, Any]: ...
    def node_config(self) -> dict[str, Any]: ...

@final
class Publisher:
    """Publishes on a topic to subscribers in this process and in other processes of the host."""

    def __new__(
        cls, topic: str, *, domain: int = 0, scope: str = "network", max_message: int | None = None
    ) -> Publisher: ...
    @property
    def topic(self) -> str: ...
    @property
    def subscriber_count(self) -> int: ...
    def send(self, data: SendData | Any, metadata: dict[str, Any] | None = None) -> None: ...
    def loan(self, data_len: int, metadata: dict[str, Any] | None = None) -> Sample: ...

@final
class Subscriber:
    """Receives a topic's messages (``nerve.Subscriber`` adds callbacks on top)."""

    def __new__(
        cls, topic: str, *, domain: int = 0, scope: str = "network", queue_size: int = 10, keep_latest: bool = False
    ) -> Subscriber: ...
    @property
    def topic(self) -> str: ...
    @property
    def publisher_count(self) -> int: ...
    @property
    def dropped(self) -> int: ...
    def recv(self, timeout: float | None = None) -> Message | None: ...

class ServiceError(NerveError): ...

#: What a service handler returns: the reply's data, or ``(data, metadata)``.
Answer = SendData | Any | tuple[SendData | Any, dict[str, Any]]

@final
class Service:
    """Serves a service: ``handler(request)`` answers each request (a message dict)."""

    def __new__(
        cls, name: str, handler: Callable[[Message], Answer], *, domain: int = 0, workers: int = 1
    ) -> Service: ...
    @property
    def name(self) -> str: ...
    def close(self) -> None: ...

@final
class Client:
    """Calls a service by name; a call never hangs (``TimeoutError``, ``ServiceError``)."""

    def __new__(cls, name: str, *, domain: int = 0) -> Client: ...
    @property
    def name(self) -> str: ...
    @property
    def server_count(self) -> int: ...
    def call(self, data: SendData | Any, metadata: dict[str, Any] | None = None, timeout: float = 10.0) -> Message: ...
    def call_async(
        self, data: SendData | Any, metadata: dict[str, Any] | None = None, timeout: float = 10.0
    ) -> Future[Message]: ...

class TransformError(NerveError): ...

#: A vector given to the transform API: a list, tuple or numpy array of numbers.
Vector = Sequence[float] | np.ndarray[Any, Any]
#: An item of ``send_many``: ``(parent, child, translation, rotation)``, optionally with a stamp.
TransformItem = tuple[str, str, Vector, Vector] | tuple[str, str, Vector, Vector, int | None]

@final
class StampedTransform:
    """The pose of frame ``child`` in frame ``parent`` at ``stamp`` (nanoseconds)."""

    def __new__(
        cls, parent: str, child: str, translation: Vector, rotation: Vector, stamp: int | None = None
    ) -> StampedTransform: ...
    @property
    def parent(self) -> str: ...
    @property
    def child(self) -> str: ...
    @property
    def stamp(self) -> int: ...
    @property
    def translation(self) -> np.ndarray[Any, np.dtype[np.float64]]: ...
    @property
    def rotation(self) -> np.ndarray[Any, np.dtype[np.float64]]: ...
    def apply(self, points: Vector | Sequence[Vector]) -> np.ndarray[Any, np.dtype[np.float64]]: ...
    def inverse(self) -> StampedTransform: ...
    def matrix(self) -> np.ndarray[Any, np.dtype[np.float64]]: ...

@disjoint_base
class Broadcaster:
    """Sends transforms; ``TransformBroadcaster`` and ``StaticTransformBroadcaster`` are its kinds."""

    def send(
        self, parent: str, child: str, translation: Vector, rotation: Vector, stamp: int | None = None
    ) -> None: ...
    def send_many(self, transforms: Iterable[TransformItem], stamp: int | None = None) -> None: ...

@final
class TransformBroadcaster(Broadcaster):
    """Publishes time-stamped transforms on topic ``tf``."""

    def __new__(cls, *, domain: int = 0) -> TransformBroadcaster: ...

@final
class StaticTransformBroadcaster(Broadcaster):
    """Publishes static transforms on topic ``tf_static``, also to listeners that start later."""

    def __new__(cls, *, domain: int = 0) -> StaticTransformBroadcaster: ...

@final
class TransformBuffer:
    """Listens to ``tf`` and ``tf_static``; looks transforms up between any two frames."""

    def __new__(cls, cache_seconds: float = 10.0, *, domain: int = 0) -> TransformBuffer: ...
    def lookup(
        self, target: str, source: str, time: int | None = None, timeout: float | None = None
    ) -> StampedTransform: ...
    def frames(self) -> list[str]: ...

def monotonic_ns() -> int: ...
def run_cli(argv: list[str]) -> int: ...

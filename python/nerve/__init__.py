"""nerve: robot dataflows of Python and Rust nodes over zero-copy shared memory.

A node is a process started by ``nerve run dataflow.yml``::

    from nerve import Node

    node = Node()
    for event in node:
        if event["type"] == "INPUT":
            image = event["value"].to_numpy(zero_copy_only=True)  # a view of shared memory
            node.send_output("mask", image > 128)
        elif event["type"] == "STOP":
            break

Any process can also publish and subscribe by topic name, with no dataflow::

    from nerve import Publisher, Subscriber

    poses = Subscriber("robot/pose", keep_latest=True)
    Publisher("robot/pose").send(numpy.array([1.0, 2.0, 0.5]))
"""

from nerve._nerve import (
    ConnectError,
    NerveError,
    Node,
    Publisher,
    Sample,
    SendError,
    VersionMismatchError,
    __version__,
    monotonic_ns,
)
from nerve._topic import Message, Subscriber

__all__ = [
    "ConnectError",
    "Message",
    "NerveError",
    "Node",
    "Publisher",
    "Sample",
    "SendError",
    "Subscriber",
    "VersionMismatchError",
    "__version__",
    "monotonic_ns",
]

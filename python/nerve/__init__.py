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
"""

from nerve._nerve import (
    ConnectError,
    NerveError,
    Node,
    Sample,
    SendError,
    VersionMismatchError,
    __version__,
    monotonic_ns,
)

__all__ = [
    "ConnectError",
    "NerveError",
    "Node",
    "Sample",
    "SendError",
    "VersionMismatchError",
    "__version__",
    "monotonic_ns",
]

"""``Node.logger``: a node's Python ``logging`` records, sent through ``Node.log`` into nerve's
log stream (the node's log file, ``nerve logs``)."""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nerve._nerve import Node


class _ToNode(logging.Handler):
    """Hands each record to its node; holds the node weakly, so that a logger, which lives as
    long as the process, does not keep a node that leaves (a dynamic one) connected."""

    def __init__(self, node: Node) -> None:
        super().__init__()
        self._node = weakref.ref(node)

    def emit(self, record: logging.LogRecord) -> None:
        node = self._node()
        if node is None:
            return
        try:
            node.log(record.levelno, self.format(record))
        except Exception:
            self.handleError(record)


def node_logger(node: Node) -> logging.Logger:
    """The logger ``nerve.node.<id>`` of ``node``, its records sent to ``node.log`` only (the
    level filter is nerve's: ``info`` and up unless ``NERVE_LOG`` says otherwise)."""
    logger = logging.getLogger(f"nerve.node.{node.id}")
    for handler in [h for h in logger.handlers if isinstance(h, _ToNode)]:
        logger.removeHandler(handler)
    logger.addHandler(_ToNode(node))
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    return logger

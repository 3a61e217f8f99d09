"""Python ``logging`` into nerve's log stream: ``Node.logger`` (a node's own logger) and, under
``nerve run``, the root logger, so that ``logging.info(...)`` anywhere in a node is a record of
the node (its level and logger kept) for its log file, ``nerve logs`` and the readers of the
run's logs (``dora/logs``, ``send_logs_as``)."""

from __future__ import annotations

import logging
import os
import weakref
from typing import TYPE_CHECKING

from nerve import _nerve

if TYPE_CHECKING:
    from nerve._nerve import Node

# ``min_log_level`` as the root logger's level: ``logging`` has nothing below ``DEBUG``.
_ROOT_LEVELS = {
    "stdout": logging.DEBUG,
    "trace": logging.DEBUG,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


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
            # The node's own logger: its name says no more than the node's id.
            node.log(record.levelno, self.format(record))
        except Exception:
            self.handleError(record)


class _ToRun(logging.Handler):
    """Hands each record to the run that started this process, as a record of its node."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            _nerve.log_record(record.levelno, self.format(record), record.name)
        except Exception:
            self.handleError(record)


def node_logger(node: Node) -> logging.Logger:
    """The logger ``nerve.node.<id>`` of ``node``, its records sent to ``node.log`` only (the
    level filter is nerve's: the node's ``min_log_level``, else ``info`` and up)."""
    logger = logging.getLogger(f"nerve.node.{node.id}")
    for handler in [h for h in logger.handlers if isinstance(h, _ToNode)]:
        logger.removeHandler(handler)
    logger.addHandler(_ToNode(node))
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    return logger


def forward_root() -> None:
    """Under ``nerve run``: the root logger's records go to the run, from the node's
    ``min_log_level`` up (``info`` unless it says otherwise), unless the program set up the
    root logger itself first (``logging.basicConfig`` before ``Node()``), which stays as it is."""
    root = logging.getLogger()
    if root.handlers:
        return
    root.addHandler(_ToRun())
    level = os.environ.get("NERVE_MIN_LOG_LEVEL", "info").lower()
    root.setLevel(_ROOT_LEVELS.get(level, logging.INFO))

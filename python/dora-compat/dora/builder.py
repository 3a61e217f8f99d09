"""dora-rs's ``dora.builder``: nerve's :mod:`nerve.builder`."""

from nerve.builder import DataflowBuilder, Node, Operator, Output

__all__ = ["DataflowBuilder", "Node", "Operator", "Output"]

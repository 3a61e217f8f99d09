"""dora-rs operators: classes named ``Operator`` whose ``on_event(event, send_output)`` returns a
:class:`DoraStatus`, run in one process per node.

A node written with ``operator:`` or ``operators:`` runs ``python -m nerve.operators``, which loads
each operator's file, makes one ``Operator()`` of each and hands it the node's events: the
``INPUT``, ``INPUT_CLOSED`` and ``INPUT_RECOVERED`` of its own inputs (their ids as the operator
declared them), and ``STOP`` and errors to all. ``send_output(id, data, metadata)`` sends on the
operator's output ``id``; other nodes read it as ``node/output`` (one ``operator:``) or
``node/operator/output`` (a list of ``operators:``).
"""

from __future__ import annotations

import importlib.util
import sys
from enum import Enum
from pathlib import Path
from typing import Any


class DoraStatus(Enum):
    """What ``on_event`` returns: go on, stop this operator, or stop every operator of the node."""

    CONTINUE = 0
    STOP = 1
    STOP_ALL = 2


class _Running:
    """One operator of the node, loaded."""

    def __init__(self, op_id: str, file: Path, prefix: str, descriptor: Any, node: Any) -> None:
        self.id = op_id
        self.prefix = prefix
        self.file = file
        # The operator's own folder first, so that it imports its sibling modules.
        sys.path.insert(0, str(file.parent))
        spec = importlib.util.spec_from_file_location(f"nerve_operator_{op_id}", file)
        if spec is None or spec.loader is None:
            raise ImportError(f"operator `{op_id}`: cannot load {file}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if not hasattr(module, "Operator"):
            raise ImportError(f"operator `{op_id}`: {file} defines no class `Operator`")
        self.operator = module.Operator()
        self.operator.dataflow_descriptor = descriptor

        def send_output(output_id: str, data: Any, metadata: dict[str, Any] | None = None) -> None:
            node.send_output(prefix + output_id, data, metadata or {})

        self.send_output = send_output

    def on_event(self, event: dict[str, Any]) -> DoraStatus:
        status = self.operator.on_event(event, self.send_output)
        value = getattr(status, "value", status)
        try:
            return DoraStatus(value)
        except ValueError:
            raise TypeError(
                f"operator `{self.id}` ({self.file}): on_event returned {status!r}, not a DoraStatus "
                "(CONTINUE, STOP or STOP_ALL)"
            ) from None


def run() -> None:
    """Runs the operators of the node this process is, until they stop or the node's events end."""
    from nerve import Node

    node = Node()
    config = node.node_config()
    descriptor = node.dataflow_descriptor()
    if "operator" in config:
        entries = [(config["operator"].get("id", "op"), config["operator"], "")]
    else:
        entries = [(entry["id"], entry, f"{entry['id']}/") for entry in config["operators"]]
    running: dict[str, _Running] = {}
    for op_id, entry, prefix in entries:
        source = entry["python"]
        if isinstance(source, dict):
            source = source["source"]
        running[op_id] = _Running(op_id, Path(source).resolve(), prefix, descriptor, node)
    single = "operator" in config

    for event in node:
        if event["type"] in ("INPUT", "INPUT_CLOSED", "INPUT_RECOVERED"):
            op_id, _, local = event["id"].partition("/") if not single else (next(iter(running)), "", event["id"])
            targets = [running[op_id]] if op_id in running else []
            event = {**event, "id": local}
        else:
            targets = list(running.values())
        for target in targets:
            status = target.on_event(event)
            if status is DoraStatus.STOP:
                running.pop(target.id, None)
            elif status is DoraStatus.STOP_ALL:
                running.clear()
        if not running or event["type"] == "STOP":
            break


if __name__ == "__main__":
    run()

"""dora-rs operators: classes named ``Operator`` whose ``on_event(event, send_output)`` returns a
:class:`DoraStatus`, run in one process per node.

A node written with ``operator:`` or ``operators:`` runs ``python -m nerve.operators``, which loads
each operator's file, makes one ``Operator()`` of each and hands it the node's events: the
``INPUT``, ``INPUT_CLOSED`` and ``INPUT_RECOVERED`` of its own inputs (their ids as the operator
declared them), and ``STOP`` and errors to all. ``send_output(id, data, metadata)`` sends on the
operator's output ``id``; other nodes read it as ``node/output`` (one ``operator:``) or
``node/operator/output`` (a list of ``operators:``). A ``shared-library:`` operator (dora-rs's C
operator API) is loaded into the same process (:mod:`nerve.operators.shared_library`).

An operator reading another's output of the same node gets the very array that was sent, handed
over inside the process (readers in other nodes get it through shared memory as usual).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nerve.operators.status import DoraStatus, status_of

# Set by nerve for a node made of operators: its operators and inputs fed inside the process.
HOST_PLAN_VAR = "NERVE_OPERATORS"


class _PythonOperator:
    """One operator of the node: a Python file's ``Operator`` class."""

    def __init__(self, op_id: str, prefix: str, file: Path, descriptor: Any, send: Callable[..., None]) -> None:
        self.id = op_id
        self.prefix = prefix
        self.file = file
        # The operator's own folder first, so that it imports its sibling modules.
        sys.path.insert(0, str(file.parent))
        module_spec = importlib.util.spec_from_file_location(f"nerve_operator_{op_id}", file)
        if module_spec is None or module_spec.loader is None:
            raise ImportError(f"operator `{op_id}`: cannot load {file}")
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        if not hasattr(module, "Operator"):
            raise ImportError(f"operator `{op_id}`: {file} defines no class `Operator`")
        self.operator = module.Operator()
        self.operator.dataflow_descriptor = descriptor
        self.send_output = send

    def on_event(self, event: dict[str, Any]) -> DoraStatus:
        returned = self.operator.on_event(event, self.send_output)
        return status_of(returned, f"operator `{self.id}` ({self.file}): on_event")

    def close(self) -> None:
        """Nothing to free: the object goes with the host."""


def _load(spec: dict[str, Any], descriptor: Any, host: _Host) -> Any:
    """The operator `spec` describes, loaded and initialised."""
    op_id, prefix = spec["id"], spec["prefix"]

    def send(output_id: str, data: Any, metadata: dict[str, Any] | None = None) -> None:
        host.send(prefix + output_id, data, metadata or {})

    if "python" in spec["source"]:
        return _PythonOperator(op_id, prefix, Path(spec["source"]["python"]), descriptor, send)
    from nerve.operators.shared_library import SharedLibraryOperator

    return SharedLibraryOperator(op_id, prefix, Path(spec["source"]["shared_library"]), send)


class _Host:
    """The node's operators and the messages they hand one another inside the process."""

    def __init__(self, node: Any, plan: dict[str, Any]) -> None:
        self.node = node
        descriptor = node.dataflow_descriptor()
        self.running: dict[str, Any] = {}
        for spec in plan["operators"]:
            self.running[spec["id"]] = _load(spec, descriptor, self)
        self.readers: dict[str, list[str]] = {}
        for input_id, output_id in plan["in_process"].items():
            self.readers.setdefault(output_id, []).append(input_id)
        self.handed: deque[dict[str, Any]] = deque()

    def owner(self, port: str) -> tuple[Any, str]:
        """The running operator whose port the node's `port` is, and the port's id for it. A lone
        operator's prefix is empty; in a list each is `<id>/`, and ids hold no `/`, so at most one
        matches."""
        for op in self.running.values():
            if port.startswith(op.prefix):
                return (op, port[len(op.prefix) :])
        return (None, port)

    def send(self, output_id: str, data: Any, metadata: dict[str, Any]) -> None:
        # Through the runtime too, for the node's other readers (and to check `data` against
        # the output's declared type); the node's own operators get the very same array.
        self.node.send_output(output_id, data, metadata)
        readers = self.readers.get(output_id)
        if readers:
            value = self.node._handover(output_id, data)
            stamped = {**metadata, "timestamp": self.node.timestamp()}
            for input_id in readers:
                self.handed.append({"type": "INPUT", "id": input_id, "value": value, "metadata": stamped})

    def stopped(self, op: Any) -> None:
        """Frees `op` and closes the inputs it fed inside the node."""
        op.close()
        for output_id, readers in self.readers.items():
            if output_id.startswith(op.prefix):
                self.handed.extend({"type": "INPUT_CLOSED", "id": input_id} for input_id in readers)

    def deliver(self, event: dict[str, Any]) -> None:
        """Hands `event` to the operators it is for, then what they handed one another."""
        pending = deque([event])
        while pending and self.running:
            event = pending.popleft()
            if event["type"] in ("INPUT", "INPUT_CLOSED", "INPUT_RECOVERED"):
                op, local = self.owner(event["id"])
                targets = [op] if op is not None else []
                event = {**event, "id": local}
            else:
                targets = list(self.running.values())
            for target in targets:
                if target.id not in self.running:
                    continue
                status = target.on_event(event)
                if status is DoraStatus.STOP:
                    del self.running[target.id]
                    self.stopped(target)
                elif status is DoraStatus.STOP_ALL:
                    self.close()
                pending.extend(self.handed)
                self.handed.clear()

    def close(self) -> None:
        """Stops and frees every operator still running."""
        while self.running:
            self.running.popitem()[1].close()


def run() -> None:
    """Runs the operators of the node this process is, until they stop or the node's events end."""
    from nerve import Node

    plan = os.environ.get(HOST_PLAN_VAR)
    if plan is None:
        raise SystemExit(f"nerve.operators runs a node made of operators under `nerve run`; {HOST_PLAN_VAR} is not set")
    host = _Host(Node(), json.loads(plan))
    try:
        for event in host.node:
            host.deliver(event)
            if not host.running or event["type"] == "STOP":
                break
    finally:
        host.close()

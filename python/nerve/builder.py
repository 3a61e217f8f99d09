"""Build a dataflow in Python instead of writing its YAML: dora-rs's builder API
(``DataflowBuilder``, ``add_node``, ``add_output``, ``add_input``, ``to_yaml``), plus ``run``.

```python
from nerve.builder import DataflowBuilder

flow = DataflowBuilder("demo")
camera = flow.add_node("camera").path("camera.py")
image = camera.add_output("image")
flow.add_node("detector").path("detector.py").add_input("image", image, queue_size=2)
flow.to_yaml("dataflow.yml")
```

The file is written in YAML's JSON form (every JSON document is YAML), which ``nerve validate``,
``nerve run`` and any YAML reader take as it is.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

QUEUE_POLICIES = ("drop_oldest", "backpressure")


class Output:
    """An output of a node, to connect an input to: ``str(output)`` is ``node/output``."""

    def __init__(self, node: Node, output_id: str) -> None:
        self.node = node
        self.output_id = output_id

    def __str__(self) -> str:
        return f"{self.node.id}/{self.output_id}"


class Operator:
    """An operator entry (dora-rs's ``operators:``): a Python file or a shared library."""

    def __init__(
        self,
        id: str,
        name: str | None = None,
        description: str | None = None,
        build: str | None = None,
        python: str | None = None,
        shared_library: str | None = None,
        send_stdout_as: str | None = None,
    ) -> None:
        self.id = id
        given = {
            "name": name,
            "description": description,
            "build": build,
            "python": python,
            "shared-library": shared_library,
            "send_stdout_as": send_stdout_as,
        }
        self.config: dict[str, Any] = {"id": id, **{k: v for k, v in given.items() if v is not None}}

    def to_dict(self) -> dict[str, Any]:
        return dict(self.config)


class Node:
    """A node entry; its setters return the node, so that calls chain. Any dataflow key can be
    given to ``DataflowBuilder.add_node`` as a keyword (``min_log_level="info"``)."""

    def __init__(self, id: str, **config: Any) -> None:
        self.id = id
        self.config: dict[str, Any] = {"id": id, **config}
        self.operators: list[Operator] = []

    def _set(self, key: str, value: Any) -> Node:
        self.config[key] = value
        return self

    def path(self, path: str) -> Node:
        return self._set("path", path)

    def args(self, args: str | list[str]) -> Node:
        return self._set("args", args)

    def env(self, env: dict[str, Any]) -> Node:
        return self._set("env", env)

    def build(self, build_command: str) -> Node:
        return self._set("build", build_command)

    def git(self, url: str, branch: str | None = None, tag: str | None = None, rev: str | None = None) -> Node:
        self._set("git", url)
        for key, value in (("branch", branch), ("tag", tag), ("rev", rev)):
            if value is not None:
                self._set(key, value)
        return self

    def add_operator(self, operator: Operator) -> Node:
        self.operators.append(operator)
        return self

    def add_output(self, output_id: str) -> Output:
        outputs = self.config.setdefault("outputs", [])
        if output_id not in outputs:
            outputs.append(output_id)
        return Output(self, output_id)

    def add_input(
        self,
        input_id: str,
        source: str | Output,
        queue_size: int | None = None,
        queue_policy: str | None = None,
    ) -> Node:
        """Connects input ``input_id`` to ``source`` (``node/output``, an :class:`Output`, a
        timer such as ``dora/timer/millis/100``, ``topic/NAME``, ``dora/logs``)."""
        if queue_policy is not None and queue_policy not in QUEUE_POLICIES:
            raise ValueError(f"queue_policy must be one of {', '.join(QUEUE_POLICIES)}, not {queue_policy!r}")
        if queue_size is not None and (not isinstance(queue_size, int) or queue_size < 1):
            raise ValueError(f"queue_size must be a positive integer, not {queue_size!r}")
        entry: str | dict[str, Any] = str(source)
        if queue_size is not None or queue_policy is not None:
            options = {"queue_size": queue_size, "queue_policy": queue_policy}
            entry = {"source": entry, **{k: v for k, v in options.items() if v is not None}}
        self.config.setdefault("inputs", {})[input_id] = entry
        return self

    def to_dict(self) -> dict[str, Any]:
        config = dict(self.config)
        if self.operators:
            config["operators"] = [op.to_dict() for op in self.operators]
        return config


class DataflowBuilder:
    """A dataflow under construction: its nodes, in the order they were added."""

    def __init__(self, name: str = "dora-dataflow") -> None:
        self.name = name
        self.nodes: list[Node] = []

    def add_node(self, id: str, **config: Any) -> Node:
        node = Node(id, **config)
        self.nodes.append(node)
        return node

    def to_dict(self) -> dict[str, Any]:
        return {"nodes": [node.to_dict() for node in self.nodes]}

    def to_yaml(self, path: str | os.PathLike[str] | None = None) -> str | None:
        """The dataflow's text, or, given ``path``, writes it there and returns None."""
        text = json.dumps(self.to_dict(), indent=2) + "\n"
        if path is None:
            return text
        Path(path).write_text(text)
        return None

    def run(self, *flags: str, path: str | os.PathLike[str] | None = None) -> int:
        """Writes the dataflow (to ``path``, else ``<name>.yml`` in the current folder) and runs
        it with ``nerve run`` and ``flags`` (``"--name", "demo"``) in this process, until it
        ends; its exit status."""
        from nerve._nerve import run_cli

        file = Path(path if path is not None else f"{self.name}.yml")
        self.to_yaml(file)
        return run_cli(["nerve", "run", str(file), *flags])

    def __enter__(self) -> DataflowBuilder:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

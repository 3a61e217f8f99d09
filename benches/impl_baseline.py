"""Another build of nerve beside the current one, in the same run (`--baseline PYTHON`): the
before and after of a change, taking turns with every other implementation, so that a slow
spell of the machine falls on both alike.

PYTHON is the interpreter of an environment where the other build is installed (`python3 -m
venv /tmp/before && /tmp/before/bin/pip install .` on the old commit); its `nerve run` starts
the Python nodes with that interpreter, so both ends use that build. Python cases only (the
Rust node is built from this tree), and the topic scenario's node cases.
"""

from __future__ import annotations

from pathlib import Path

from benches import impl_nerve, impl_topics
from benches.model import Case, Samples

NAME = "nerve baseline"
#: The topic scenario's cases that run a dataflow node, which both builds have.
NODE_TRANSPORTS = ("node-topic", "node-edge")


class Baseline:
    """The implementation the suite runs for `--baseline PYTHON`."""

    NAME = NAME

    def __init__(self, python: str) -> None:
        self.python = python

    def supports(self, case: Case) -> bool:
        if case.lang != "python":
            return False
        if case.scenario == "topics":
            return case.transport in NODE_TRANSPORTS
        return impl_nerve.supports(case)

    def run(self, case: Case, workdir: Path) -> Samples:
        if case.scenario == "topics":
            return impl_topics.run(case, workdir, self.python, NAME)
        return impl_nerve.run(case, workdir, self.python, NAME)

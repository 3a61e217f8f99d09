"""dora-rs's Python module names, served by nerve: a node written for dora-rs (``from dora import
Node``) runs on nerve unchanged. See nerve's docs/dora.md for what differs.

This module stands in for dora-rs's, and refuses to hide a real dora-rs installed beside it.
"""

from __future__ import annotations

from importlib import metadata


def _refuse_to_shadow() -> None:
    try:
        real = metadata.distribution("dora-rs")
    except metadata.PackageNotFoundError:
        return
    raise ImportError(
        f"dora-rs {real.version} is installed beside nerve-dora, and both provide the module `dora`: "
        "keep one. For dora-rs: `pip uninstall nerve-dora` then `pip install --force-reinstall dora-rs`; "
        "for nerve: `pip uninstall dora-rs nerve-dora` then `pip install nerve-dora`."
    )


_refuse_to_shadow()

from nerve import DoraStatus, Node, Sample, __version__  # noqa: E402
from nerve.builder import DataflowBuilder  # noqa: E402

__all__ = ["DataflowBuilder", "DoraStatus", "Node", "Sample", "__version__"]

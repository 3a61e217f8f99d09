"""Type stubs of message packages, so editors complete class and field names.

``python -m nerve.msg stubs [PACKAGE ...] [--out DIR]`` writes ``<package>.pyi`` for each
package (every package the registry finds when none is named) into ``nerve/msg`` of the
installed package, or into DIR. The packages shipped with nerve come with theirs.
"""

from __future__ import annotations

from typing import Any

from nerve import _nerve
from nerve.msg import _PARTS, _types_of

_PY = {"bool": "bool", "float32": "float", "float64": "float"}


def _element(base: tuple[str, Any], package: str, used: set[str]) -> str:
    kind, what = base
    if kind == "string":
        return "str"
    if kind == "primitive":
        return _PY.get(what, "int")
    other, _, name = what.split("/")
    if other == package:
        return name if "_" not in name else f"_{name}"
    used.add(other)
    return f"{other}.{name}"


def _types(field: dict[str, Any], package: str, used: set[str]) -> tuple[str, str]:
    """The field's attribute type and the type its keyword argument takes."""
    element = _element(field["base"], package, used)
    message = field["base"][0] == "message"
    given = f"{element} | dict[str, Any]" if message else element
    if field["count"] is None:
        return element, given
    if field["base"][0] == "primitive" and element != "bool":
        return f"np.ndarray | list[{element}]", f"Sequence[{element}] | np.ndarray"
    return f"list[{element}]", f"Sequence[{given}]"


def _class(name: str, spec: dict[str, Any], package: str, used: set[str]) -> list[str]:
    lines = [f"class {name}(Message):", f'    """``{spec["name"]}``."""', ""]
    for constant, value in spec["constants"].items():
        lines.append(f"    {constant}: ClassVar[{type(value).__name__}]")
    params = []
    for field in spec["fields"]:
        attribute, given = _types(field, package, used)
        lines.append(f"    {field['name']}: {attribute}")
        params.append(f"        {field['name']}: {given} = ...,")
    if params:
        lines += ["    def __init__(", "        self,", "        *,", *params, "    ) -> None: ..."]
    else:
        lines.append("    def __init__(self) -> None: ...")
    lines += [
        "    @classmethod",
        f"    def from_arrow(cls, value: pa.Array, row: int = 0) -> {name}: ...",
        "    @classmethod",
        f"    def from_cdr(cls, data: bytes) -> {name}: ...",
        "",
    ]
    return lines


def stub(package: str) -> str:
    """The ``.pyi`` text of message package ``package``."""
    used: set[str] = set()
    body: list[str] = []
    for full in _types_of(package):
        _, kind, name = full.split("/")
        if kind == "msg":
            body += _class(name, _nerve.msg_definition(full), package, used)
            continue
        parts = _PARTS[kind]
        for part in parts:
            body += _class(f"_{name}_{part}", _nerve.msg_definition(f"{full}_{part}"), package, used)
        body += [f"class _{name}:", f'    """The parts of ``{full}``."""', ""]
        body += [f"    {part}: type[_{name}_{part}]" for part in parts]
        body += ["", f"{name}: _{name}", ""]
    text = "\n".join(body)
    typing = [name for name in ("Any", "ClassVar") if f"{name}[" in text or f"{name}]" in text]
    imports = [f'"""Message types of `{package}`: written by `python -m nerve.msg stubs`, for editors."""', ""]
    if "Sequence[" in text:
        imports.append("from collections.abc import Sequence")
    if typing:
        imports.append(f"from typing import {', '.join(typing)}")
    if imports[-1]:
        imports.append("")
    if "np." in text:
        imports.append("import numpy as np")
    imports += ["import pyarrow as pa", "", f"from nerve.msg import {', '.join(['Message', *sorted(used)])}"]
    return "\n".join([*imports, "", text]).rstrip() + "\n"

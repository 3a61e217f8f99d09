"""ROS 2 message types as Python classes whose values are Arrow values.

One module per package, one class per type, for every type the registry finds (the interfaces
shipped with nerve, ``NERVE_TYPES_PATH`` — where a dataflow's ``types:`` folders reach its
nodes — and installed ROS 2 packages, ``AMENT_PREFIX_PATH``; both read as they are when a type
is first used, a class once made keeping its definition)::

    from nerve.msg import sensor_msgs

    image = sensor_msgs.Image(height=480, width=640, encoding="rgb8", step=640 * 3, data=frame)
    node.send_output("image", image)                          # sent as its Arrow struct
    seen = sensor_msgs.Image.from_arrow(event["value"])        # attribute access
    pixels = seen.data                                         # a numpy view, no copy

A field left out takes its ROS 2 default; a nested message may be given as an instance or a
dict, a sequence of messages as a list of either, an array field as a list or a numpy array.
A service type has ``Request`` and ``Response`` classes (``std_srvs.SetBool.Request``), an
action type ``Goal``, ``Result`` and ``Feedback``.

``to_cdr``, ``from_cdr`` and ``type_hash`` speak ROS 2's wire format and REP 2011 hashes.
"""

from __future__ import annotations

import difflib
import importlib.abc
import importlib.machinery
import keyword
import os
import sys
import types
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from nerve import _nerve

__all__ = ["Message", "from_cdr", "message_class", "to_cdr", "type_hash"]

_ZERO = {"bool": False, "float32": 0.0, "float64": 0.0}


class _Field:
    """One field of a message class: its name, element type, count and default."""

    __slots__ = ("base", "bound", "count", "default", "kind", "name", "size")

    def __init__(self, spec: dict[str, Any]) -> None:
        self.name: str = spec["name"]
        self.kind, self.base = spec["base"]
        count = spec["count"]
        self.count: str | None = count[0] if count else None
        self.size: int | None = count[1] if count else None
        self.bound: int | None = self.base if self.kind == "string" else None
        self.default = spec["default"]

    def nested(self) -> type[Message]:
        return message_class(self.base)

    def zero(self) -> Any:
        """One element's value when the file gives none."""
        if self.kind == "message":
            return self.nested()()
        if self.kind == "string":
            return ""
        return _ZERO.get(self.base, 0)

    def initial(self) -> Any:
        """The field's value when it is left out: a fresh one each time."""
        if self.default is not None:
            return list(self.default) if isinstance(self.default, list) else self.default
        if self.count == "fixed":
            return [self.zero() for _ in range(self.size or 0)]
        return [] if self.count else self.zero()


class Message:
    """Base of every message class: keyword construction, ``to_arrow``, ``from_arrow``, CDR."""

    __slots__ = ()
    #: The canonical type name, ``pkg/msg/Type``.
    TYPE: ClassVar[str]
    _fields: ClassVar[tuple[_Field, ...]]
    _by_name: ClassVar[dict[str, _Field]]
    #: Where a message read from Arrow takes the fields not used yet (see ``from_arrow``).
    _source: Any
    _arrow: ClassVar[pa.DataType | None]

    def __init__(self, /, **values: Any) -> None:
        # Used only by a class with a field named like a Python keyword; every other class
        # gets a compiled one from `_compiled_init`: the same checks, a third less time.
        for f in self._fields:
            setattr(self, f.name, self._accept(f, values.pop(f.name)) if f.name in values else f.initial())
        if values:
            _unknown_field(type(self), values)

    @classmethod
    def _accept(cls, f: _Field, value: Any) -> Any:
        """``value`` for field ``f``, nested messages made instances; sizes checked."""
        where = f"{cls.TYPE}.{f.name}"
        if f.count is None:
            return _one(f, value, where)
        if isinstance(value, (str, bytes, dict)) or not isinstance(value, (Sequence, np.ndarray)):
            raise TypeError(f"{where}: a sequence is expected, not {type(value).__name__}")
        n = value.size if isinstance(value, np.ndarray) else len(value)
        if f.count == "fixed" and n != f.size:
            raise ValueError(f"{where}: exactly {f.size} elements are expected, not {n}")
        if f.count == "bounded" and f.size is not None and n > f.size:
            raise ValueError(f"{where}: at most {f.size} elements are allowed, not {n}")
        if f.kind in ("message", "string"):
            return [_one(f, v, f"{where}[{i}]") for i, v in enumerate(value)]
        return value

    @classmethod
    def arrow_type(cls) -> pa.DataType:
        """The Arrow struct type of this message."""
        if cls._arrow is None:
            cls._arrow = _nerve.msg_arrow_type(cls.TYPE)
        return cls._arrow

    def to_arrow(self) -> pa.StructArray:
        """This message as a one-row Arrow struct array; numeric arrays given as numpy arrays
        of the field's type are not copied."""
        return _nerve.msg_to_arrow(self)

    def __arrow_array__(self, type: pa.DataType | None = None) -> pa.StructArray:
        return self.to_arrow()

    @classmethod
    def from_arrow(cls, value: pa.Array, row: int = 0) -> Any:
        """Row ``row`` of ``value`` (a struct array of this type, as an input event's
        ``value``) as an instance. Its fields are read from the value as they are first
        used (numeric array fields as numpy views of its buffers), so the instance keeps
        the value, and the message's shared memory, while it lives. A subscriber in the
        publisher's own process is handed the very object sent: an instance is returned as
        it is."""
        if isinstance(value, cls):
            return value
        if not isinstance(value, pa.Array):
            raise TypeError(f"{cls.TYPE}.from_arrow: a pyarrow struct array is expected, not {type(value).__name__}")
        return cls._reading(_nerve.msg_fields(value, cls.TYPE, row))

    @classmethod
    def _reading(cls, source: Any) -> Any:
        """An instance whose fields ``source`` (a ``_nerve.msg_fields`` value) gives on first use."""
        out = cls.__new__(cls)
        out._source = source
        return out

    def __getattr__(self, name: str) -> Any:
        # Only reached for a slot not set yet: a field of a message read from Arrow, on its
        # first use (set then, so the next use is a plain attribute read).
        f = self._by_name.get(name)
        if f is not None:
            try:
                source = object.__getattribute__(self, "_source")
            except AttributeError:
                source = None
            if source is not None:
                value = source.get(name)
                if f.kind == "message":
                    nested = f.nested()
                    value = [nested._reading(v) for v in value] if f.count else nested._reading(value)
                setattr(self, name, value)
                return value
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __getstate__(self) -> dict[str, Any]:
        # Every field, read from the Arrow value if not yet: a copy or a pickle of a message
        # read from Arrow stands on its own, without the value (nor its shared memory).
        return {f.name: getattr(self, f.name) for f in self._fields}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    def to_cdr(self) -> bytes:
        """This message in ROS 2's wire format (CDR, little-endian, with its header)."""
        return _nerve.msg_to_cdr(self.to_arrow(), self.TYPE)

    @classmethod
    def from_cdr(cls, data: bytes) -> Any:
        """An instance from ROS 2 CDR bytes."""
        return cls.from_arrow(_nerve.msg_from_cdr(data, cls.TYPE))

    def to_dict(self) -> dict[str, Any]:
        """Field names to values, nested messages as dicts too."""
        return {f.name: _plain(getattr(self, f.name)) for f in self._fields}

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(_same(getattr(self, f.name), getattr(other, f.name)) for f in self._fields)

    __hash__ = None  # type: ignore[assignment]  # mutable, like a dataclass

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={_short(getattr(self, f.name))}" for f in self._fields)
        return f"{type(self).__name__}({shown})"


def _one(f: _Field, value: Any, where: str) -> Any:
    if f.kind == "message":
        cls = f.nested()
        if isinstance(value, cls):
            return value
        if isinstance(value, dict):
            return cls(**value)
        raise TypeError(f"{where}: a {cls.TYPE} or a dict is expected, not {type(value).__name__}")
    if f.kind == "string":
        if not isinstance(value, str):
            raise TypeError(f"{where}: a str is expected, not {type(value).__name__}")
        if f.bound is not None and len(value) > f.bound:
            raise ValueError(f"{where}: at most {f.bound} characters are allowed, not {len(value)}")
    return value


def _unknown_field(cls: type[Message], values: dict[str, Any]) -> None:
    name = next(iter(values))
    known = [f.name for f in cls._fields]
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean `{close[0]}`?" if close else f"; its fields: {', '.join(known)}"
    raise TypeError(f"{cls.TYPE} has no field `{name}`{hint}")


_MISSING = object()


def _compiled_init(name: str, fields: tuple[_Field, ...]) -> Any:
    """An ``__init__`` for the class of ``name`` with one keyword parameter per field: what
    ``Message.__init__`` does, without its loop and lookups per field (as ``dataclasses``
    does): building a message is on the send path of every typed message. ``None`` when a
    field's name is a Python keyword (it cannot be a parameter)."""
    if any(keyword.iskeyword(f.name) for f in fields):
        return None
    env: dict[str, Any] = {"_MISSING": _MISSING, "_unknown_field": _unknown_field}
    params, lines = [], []
    for i, f in enumerate(fields):
        env[f"_f{i}"] = f
        params.append(f"{f.name}=_MISSING")
        if f.count is None and f.kind == "primitive":
            # Numbers are checked against the field's type when the message becomes Arrow.
            env[f"_d{i}"] = f.initial()
            given = f.name
            missing = f"_d{i}"
        else:
            given = f"_self._accept(_f{i}, {f.name})"
            missing = f"_f{i}.initial()"
        lines.append(f"    _self.{f.name} = {missing} if {f.name} is _MISSING else {given}")
    params.append("**_unknown")
    body = "\n".join(["    if _unknown:", "        _unknown_field(_self.__class__, _unknown)", *lines])
    # Every other name is one no ROS field can have (they begin with a letter): `_self`, not
    # `self`, and no builtin such as `type` (a field of visualization_msgs/Marker).
    source = f"def __init__(_self, {'*, ' if fields else ''}{', '.join(params)}):\n{body}\n"
    exec(compile(source, f"<nerve.msg {name}>", "exec"), env)
    return env["__init__"]


def _plain(v: Any) -> Any:
    if isinstance(v, Message):
        return v.to_dict()
    if isinstance(v, list):
        return [_plain(i) for i in v]
    return v


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    return bool(a == b)


def _short(v: Any) -> str:
    if isinstance(v, np.ndarray) and v.size > 8:
        return f"<{v.size} of {v.dtype}>"
    if isinstance(v, list) and len(v) > 8:
        return f"[{len(v)} items]"
    return repr(v)


_classes: dict[str, type[Message]] = {}


def message_class(name: str) -> type[Message]:
    """The class of message type ``name`` (``sensor_msgs/msg/Image``, ``sensor_msgs/Image``,
    or a part of a service or action such as ``std_srvs/srv/SetBool_Request``)."""
    if name in _classes:
        return _classes[name]
    spec = _nerve.msg_definition(name)
    canonical = spec["name"]
    if canonical not in _classes:
        fields = tuple(_Field(f) for f in spec["fields"])
        attrs: dict[str, Any] = {
            "__slots__": (*(f.name for f in fields), "_source"),
            "__module__": f"nerve.msg.{canonical.split('/')[0]}",
            "__doc__": f"``{canonical}``: fields {', '.join(f.name for f in fields) or '(none)'}.",
            "TYPE": canonical,
            "_fields": fields,
            "_by_name": {f.name: f for f in fields},
            "_arrow": None,
            **spec["constants"],
        }
        init = _compiled_init(canonical, fields)
        if init is not None:
            attrs["__init__"] = init
        _classes[canonical] = type(canonical.rsplit("/", 1)[1], (Message,), attrs)
    _classes[name] = _classes[canonical]
    return _classes[name]


class _Interface:
    """A service's or action's parts, as classes (``Request``, ``Response`` / ``Goal``…)."""

    def __init__(self, name: str, parts: tuple[str, ...]) -> None:
        self.TYPE = name
        for part in parts:
            setattr(self, part, message_class(f"{name}_{part}"))

    def __repr__(self) -> str:
        return f"<interface {self.TYPE}>"


_PARTS = {"srv": ("Request", "Response"), "action": ("Goal", "Result", "Feedback")}


class _Package(types.ModuleType):
    """``nerve.msg.<package>``: its types, made on first use."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        package = self.__name__.rsplit(".", 1)[1]
        for kind in ("msg", "srv", "action"):
            full = f"{package}/{kind}/{name}"
            if full in _known():
                found = message_class(full) if kind == "msg" else _Interface(full, _PARTS[kind])
                setattr(self, name, found)
                return found
        names = [t.rsplit("/", 1)[1] for t in _types_of(package)]
        close = difflib.get_close_matches(name, names, n=1)
        hint = f"; did you mean `{close[0]}`?" if close else ""
        raise AttributeError(f"message package `{package}` has no type `{name}`{hint}")

    def __dir__(self) -> list[str]:
        return sorted({t.rsplit("/", 1)[1] for t in _types_of(self.__name__.rsplit(".", 1)[1])})


_types: dict[tuple[str | None, str | None], frozenset[str]] = {}


def _known() -> frozenset[str]:
    """Every type the registry finds, listed again when the folders it searches change."""
    env = (os.environ.get("NERVE_TYPES_PATH"), os.environ.get("AMENT_PREFIX_PATH"))
    if env not in _types:
        _types[env] = frozenset(_nerve.msg_types())
    return _types[env]


def _packages() -> set[str]:
    return {t.split("/", 1)[0] for t in _known()}


def _types_of(package: str) -> list[str]:
    """The full names of ``package``'s types (messages, services, actions), sorted."""
    return sorted(t for t in _known() if t.startswith(f"{package}/"))


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Makes ``import nerve.msg.<package>`` find every package the registry knows."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        prefix, _, package = fullname.rpartition(".")
        if prefix != __name__ or package not in _packages():
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _Package(spec.name)
        module.__doc__ = f"Message types of package `{spec.name.rsplit('.', 1)[1]}`."
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


sys.meta_path.append(_Finder())


def __getattr__(name: str) -> types.ModuleType:
    if name.startswith("__") or name not in _packages():
        close = difflib.get_close_matches(name, sorted(_packages()), n=1)
        hint = f"; did you mean `{close[0]}`?" if close else ""
        raise AttributeError(f"no message package `{name}` (NERVE_TYPES_PATH, AMENT_PREFIX_PATH, shipped){hint}")
    return importlib.import_module(f"{__name__}.{name}")


def _arrow_of(value: Any, name: str) -> pa.Array:
    if isinstance(value, Message):
        return value.to_arrow()
    if isinstance(value, dict):
        return message_class(name)(**value).to_arrow()
    return value


def to_cdr(value: Any, type_name: str, row: int = 0) -> bytes:
    """``value`` (a message, a dict of its fields, or an Arrow struct array, then its row
    ``row``) in ROS 2's wire format: CDR, little-endian, with its header."""
    return _nerve.msg_to_cdr(_arrow_of(value, type_name), type_name, row)


def from_cdr(data: bytes, type_name: str) -> pa.StructArray:
    """ROS 2 CDR bytes as a one-row Arrow struct array of ``type_name``
    (``message_class(type_name).from_cdr(data)`` gives an instance)."""
    return _nerve.msg_from_cdr(data, type_name)


def type_hash(type_name: str) -> str:
    """ROS 2's hash of ``type_name`` (``RIHS01_…``, REP 2011)."""
    return _nerve.msg_type_hash(type_name)

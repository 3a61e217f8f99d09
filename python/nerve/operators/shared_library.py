"""Shared-library operators: libraries implementing dora-rs's C operator API (``operator_api.h``),
loaded into the node's process and called through :mod:`ctypes`.

The structs mirror ``operator_types.h`` (dora's layout) and, for the two the operator only passes
back (``Input_t``, ``SendOutput_t``), nerve's own, shared with ``crates/nerve-c/src/dora_operator.rs``.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

from nerve.operators.status import DoraStatus, status_of


class _Vec(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p), ("len", ctypes.c_size_t), ("cap", ctypes.c_size_t)]


class _Result(ctypes.Structure):
    _fields_ = [("error", ctypes.POINTER(_Vec))]


class _InitResult(ctypes.Structure):
    _fields_ = [("result", _Result), ("operator_context", ctypes.c_void_p)]


class _OnEventResult(ctypes.Structure):
    _fields_ = [("result", _Result), ("status", ctypes.c_uint8)]


class _Input(ctypes.Structure):
    _fields_ = [("id", ctypes.c_char_p), ("data", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class _RawEvent(ctypes.Structure):
    _fields_ = [
        ("input", ctypes.POINTER(_Input)),
        ("input_closed", _Vec),
        ("stop", ctypes.c_bool),
        ("error", _Vec),
    ]


_SEND = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t
)


class _SendOutput(ctypes.Structure):
    _fields_ = [("env", ctypes.c_void_p), ("send", _SEND)]


_LINK_HINT = (
    "build it against nerve's library: "
    'cc -shared -fPIC ... $(PKG_CONFIG_PATH="$(nerve --lib-dir)/pkgconfig" pkg-config --cflags --libs nerve)'
)


def _text(vec: _Vec) -> bytes:
    return ctypes.string_at(vec.ptr, vec.len) if vec.ptr else b""


def _bytes_vec(data: bytes) -> tuple[_Vec, ctypes.Array[ctypes.c_char]]:
    """A `Vec_uint8_t` viewing `data`, and the buffer to keep alive while it is used."""
    buffer = ctypes.create_string_buffer(data, len(data))
    return _Vec(ctypes.cast(buffer, ctypes.c_void_p), len(data), len(data)), buffer


class SharedLibraryOperator:
    """One operator of the node: a library exporting ``dora_init_operator``,
    ``dora_on_event`` and ``dora_drop_operator``."""

    def __init__(self, op_id: str, prefix: str, file: Path, send: Callable[[str, Any], None]) -> None:
        self.id = op_id
        self.prefix = prefix
        self.file = file
        try:
            self.lib = ctypes.CDLL(str(file))
        except OSError as e:
            raise ImportError(f"operator `{op_id}`: cannot load {file}: {e} ({_LINK_HINT})") from None
        for name in ("dora_init_operator", "dora_on_event", "dora_drop_operator", "nerve_dora_free_error"):
            if not hasattr(self.lib, name):
                what = "dora's C operator API" if name.startswith("dora") else _LINK_HINT
                raise ImportError(f"operator `{op_id}`: {file} has no `{name}` ({what})")
        self.lib.dora_init_operator.restype = _InitResult
        self.lib.dora_init_operator.argtypes = []
        self.lib.dora_on_event.restype = _OnEventResult
        self.lib.dora_on_event.argtypes = [ctypes.POINTER(_RawEvent), ctypes.POINTER(_SendOutput), ctypes.c_void_p]
        self.lib.dora_drop_operator.restype = _Result
        self.lib.dora_drop_operator.argtypes = [ctypes.c_void_p]
        self.lib.nerve_dora_free_error.restype = None
        self.lib.nerve_dora_free_error.argtypes = [ctypes.POINTER(_Vec)]

        def send_output(_env: int, output_id: bytes, data: int, length: int, error: int, capacity: int) -> int:
            try:
                # A view of the operator's bytes, copied once, into shared memory.
                view = memoryview((ctypes.c_uint8 * length).from_address(data)).cast("B") if length else b""
                send(output_id.decode(), view)
                return 0
            except Exception as e:  # the operator gets it as its send's error
                message = f"{type(e).__name__}: {e}".encode()[: capacity - 1] + b"\0"
                ctypes.memmove(error, message, len(message))
                return -1

        # Kept alive with the operator: the library calls it while it runs.
        self._send = _SEND(send_output)
        self._sender = _SendOutput(None, self._send)
        init = self.lib.dora_init_operator()
        self._check(init.result, "dora_init_operator")
        self.context = init.operator_context
        self.dropped = False

    def _check(self, result: _Result, function: str) -> None:
        if result.error:
            text = _text(result.error.contents).decode(errors="replace")
            self.lib.nerve_dora_free_error(result.error)
            raise RuntimeError(f"operator `{self.id}` ({self.file}): {function} failed: {text}")

    def on_event(self, event: dict[str, Any]) -> DoraStatus:
        kind = event["type"]
        raw = _RawEvent()
        keep: list[Any] = []
        if kind == "INPUT":
            value = event["value"]
            data, length = None, 0
            if isinstance(value, pa.Array) and pa.types.is_uint8(value.type) and value.null_count == 0:
                # The message's own bytes, in shared memory: dora_read_data copies them.
                buffer = value.buffers()[1]
                data, length = (buffer.address + value.offset if buffer is not None else None), len(value)
            item = _Input(event["id"].encode(), data, length)
            keep.append((value, item))
            raw.input = ctypes.pointer(item)
        elif kind == "INPUT_CLOSED":
            raw.input_closed, buffer = _bytes_vec(event["id"].encode())
            keep.append(buffer)
        elif kind == "STOP":
            raw.stop = True
        elif kind == "ERROR":
            raw.error, buffer = _bytes_vec(str(event.get("error", "")).encode())
            keep.append(buffer)
        else:
            # dora's C operators know no other event (INPUT_RECOVERED).
            return DoraStatus.CONTINUE
        result = self.lib.dora_on_event(ctypes.byref(raw), ctypes.byref(self._sender), self.context)
        self._check(result.result, "dora_on_event")
        return status_of(result.status, f"operator `{self.id}` ({self.file}): dora_on_event")

    def close(self) -> None:
        """Calls ``dora_drop_operator``, once."""
        if not self.dropped:
            self.dropped = True
            self._check(self.lib.dora_drop_operator(self.context), "dora_drop_operator")

"""Arrays of several Arrow layouts, for the Arrow C++ test: sent by one node, checked by another."""

import pyarrow as pa


def cases() -> list[tuple[str, pa.Array]]:
    return [
        ("int64", pa.array([1, -2, None, 2**40], type=pa.int64())),
        ("float64", pa.array([0.5, 1.5, -3.25])),
        ("utf8", pa.array(["nerve", "", None, "über"])),
        ("list", pa.array([[1, 2], [], None, [3]], type=pa.list_(pa.int32()))),
        ("struct", pa.array([{"x": 1.0, "y": "a"}, {"x": 2.0, "y": None}])),
        ("bytes", pa.array(bytes(range(256)) * 4096, type=pa.uint8())),
    ]

"""The Python side of TypedNode.* (tests/c/msg_test.cpp): sends an every_msgs/Every filled as the
C++ test's filled() and a 1080p image whose byte i is i % 251, then checks the Every the C++
node sends back, field by field."""

import numpy as np
from nerve import Node
from nerve.msg import Message, every_msgs, sensor_msgs


def inner(name="", values=(), bits=()):
    return every_msgs.Inner(name=name, values=np.array(values, dtype=np.float64), bits=list(bits))


def filled():
    return every_msgs.Every(
        flag=False,
        i8=-7,
        u8=200,
        i16=-300,
        u16=60000,
        i32=-70000,
        u32=4000000000,
        i64=-5000000000,
        u64=10000000000000000000,
        f32=0.25,
        f64=1e-9,
        text="typed ✓",
        bounded_text="short",
        wide="wide",
        new=9,
        flags=[True, False, True, True, False, False, False, False, True],
        fixed_flags=[False, True, False],
        words=["alpha", "", "gamma"],
        pair_of_words=["left", "right"],
        samples=np.array([0.5, -1.5, 3.0], dtype=np.float32),
        quad=np.array([1, -2, 3, -4], dtype=np.int64),
        small_bytes=np.array([1, 2, 3], dtype=np.uint8),
        one=inner("one", [1.0, 2.0], [True]),
        many=[inner(f"many{i}", [float(i)] * i, [i % 2 == 0] * (i + 1)) for i in range(3)],
        two=[inner("first"), inner(values=[-1.0])],
        stamp={"sec": 12, "nanosec": 345},
    )


def plain(value):
    """A message as nested Python values, numpy arrays as lists, to compare."""
    if isinstance(value, Message):
        return {f.name: plain(getattr(value, f.name)) for f in type(value)._fields}
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def main() -> None:
    node = Node()
    node.send_output("every", filled())
    pixels = (np.arange(1920 * 1080 * 3) % 251).astype(np.uint8)
    header = {"stamp": {"sec": 1, "nanosec": 2}, "frame_id": "python"}
    image = sensor_msgs.Image(header=header, height=1080, width=1920, encoding="rgb8", step=1920 * 3, data=pixels)
    node.send_output("image", image)
    for event in node:
        if event["type"] == "INPUT":
            back = every_msgs.Every.from_arrow(event["value"])
            assert plain(back) == plain(filled()), f"{plain(back)}\n!=\n{plain(filled())}"
            print("typed_peer: the C++ Every is Python's")
            return
    raise SystemExit("typed_peer: no Every came back")


if __name__ == "__main__":
    main()

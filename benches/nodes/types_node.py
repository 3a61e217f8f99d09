"""Benchmark node for typed messages (the `types` scenario): a 1080p image sent as
``sensor_msgs/msg/Image`` beside the same bytes sent as a plain array, and the CDR codecs.

    types_node.py producer HOW WIDTH HEIGHT COUNT RATE_HZ OUT WARMUP
    types_node.py consumer HOW OUT WARMUP
    types_node.py codec IMPL TYPE SIZE MIN_COUNT SECONDS OUT

HOW is ``typed`` or ``plain``. The producer writes its stamp into the first 8 bytes of one
WIDTH x HEIGHT x 3 uint8 frame just before it sends: ``typed`` then builds a
``sensor_msgs.Image(…, data=frame)`` and sends it (the building is part of what is measured),
``plain`` sends the frame itself. The consumer reads the pixels back as a numpy view (``typed``:
``sensor_msgs.Image.from_arrow(event["value"]).data``; ``plain``:
``event["value"].to_numpy(zero_copy_only=True)``), reads the stamp from that view with
``struct``, takes the time, and then, outside the timed part, checks that the view is the
received buffer itself in shared memory (no copy): OUT.json counts those messages as ``views``.

``codec`` times CDR encode and decode of one message of TYPE (``sensor_msgs/msg/Image``, rgb8,
1920 wide; ``sensor_msgs/msg/PointCloud2``, x, y, z, intensity float32) whose data is SIZE bytes,
with IMPL ``nerve`` (``nerve.msg.to_cdr`` / ``from_cdr``) or ``rclpy``
(``rclpy.serialization.serialize_message`` / ``deserialize_message``): each at least MIN_COUNT
times and for at least SECONDS, one call timed at a time. OUT gets the times (ns) and the CDR
size, or the reason it could not run.
"""

import json
import os
import sys
import time

import numpy as np
from node_common import STAMP, paced, usage

WIDTH = 1920  # the codec cases' images: rgb8, this wide
POINT_STEP = 16  # x, y, z, intensity: float32 each
FIELDS = [("x", 0), ("y", 4), ("z", 8), ("intensity", 12)]
FLOAT32 = 7  # sensor_msgs/msg/PointField.FLOAT32


def producer(how: str, width: int, height: int, count: int, rate_hz: float, out: str, warmup: int) -> None:
    from nerve import Node

    if how not in ("typed", "plain"):
        raise SystemExit(f"HOW must be typed or plain, not {how!r}")
    node = Node()
    frame = np.zeros(height * width * 3, dtype=np.uint8)
    stamp = frame[:8].view("<i8")
    if how == "typed":
        from nerve.msg import sensor_msgs

        pixels = frame.reshape(height, width, 3)  # a view: the image a camera hands over

        def send() -> int:
            stamp[0] = t = time.monotonic_ns()
            image = sensor_msgs.Image(height=height, width=width, encoding="rgb8", step=width * 3, data=pixels)
            node.send_output("data", image)
            return t

    else:

        def send() -> int:
            stamp[0] = t = time.monotonic_ns()
            node.send_output("data", frame)
            return t

    warmup = warmup if count > 2 * warmup else 0
    used_from = None
    sends = []  # how long each send took, from the stamp to the return of send_output
    for i in paced(count, rate_hz):
        if i == warmup:
            used_from = usage()
        t = send()
        if i >= warmup:
            sends.append(time.monotonic_ns() - t)
    used_to = usage()
    # CPU time and the kernel's counts (page faults: a block of shared memory written for the
    # first time faults once per page) over the messages after the warm-up.
    used = {k: used_to[k] - used_from[k] if used_from else 0 for k in used_to}
    with open(out, "w") as f:
        json.dump(
            {
                **used,
                "cpu_messages": count - warmup,
                "messages": count,
                "send_us_p50": float(np.median(sends)) / 1000 if sends else None,
                "pid": os.getpid(),
            },
            f,
        )


class SharedMemory:
    """Whether an address lies in a mapping of a ``/dev/shm`` file (nerve's blocks): read from
    ``/proc/self/maps`` again only for an address of a mapping not seen yet."""

    def __init__(self) -> None:
        self.ranges: list[tuple[int, int]] = []

    def _read(self) -> None:
        self.ranges = []
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(maxsplit=5)
                if len(parts) == 6 and parts[5].startswith("/dev/shm/"):
                    start, end = (int(x, 16) for x in parts[0].split("-"))
                    self.ranges.append((start, end))

    def holds(self, address: int, size: int) -> bool:
        for again in (False, True):
            if again:
                self._read()
            if any(start <= address and address + size <= end for start, end in self.ranges):
                return True
        return False


def received_buffer(value, how: str):
    """The pixels' bytes as received: address and size of the (shared-memory) Arrow buffer."""
    values = value.field("data").values if how == "typed" else value
    return values.buffers()[1].address + values.offset, len(values)


def is_view(pixels: np.ndarray, value, how: str, shm: SharedMemory) -> bool:
    """Whether ``pixels`` is the received buffer itself: the same address and size, not owned
    by numpy, in shared memory."""
    address, size = received_buffer(value, how)
    return (
        not pixels.flags.owndata
        and pixels.__array_interface__["data"][0] == address
        and pixels.nbytes == size
        and shm.holds(address, size)
    )


def consumer(how: str, out: str, warmup: int) -> None:
    from nerve import Node

    if how == "typed":
        from nerve.msg import sensor_msgs

        def pixels_of(value) -> np.ndarray:
            return sensor_msgs.Image.from_arrow(value).data

    else:

        def pixels_of(value) -> np.ndarray:
            return value.to_numpy(zero_copy_only=True)

    node = Node()
    shm = SharedMemory()
    sent, received = [], []
    reads = []  # from the event's value in hand to the stamp read from the numpy view
    views = 0
    start_after = max(warmup, 1)
    used_from = None
    for event in node:
        if event["type"] == "INPUT":
            value = event["value"]
            t = time.monotonic_ns()
            pixels = pixels_of(value)
            s = STAMP.unpack_from(pixels)[0]
            r = time.monotonic_ns()
            sent.append(s)
            received.append(r)
            reads.append(r - t)
            views += is_view(pixels, value, how, shm)
            if len(sent) == start_after:
                used_from = usage()
            del event, value, pixels
        elif event["type"] == "STOP":
            break
    used_to = usage()
    np.savetxt(out, np.column_stack([sent, received]) if sent else np.zeros((0, 2)), fmt="%d")
    used = {k: used_to[k] - used_from[k] if used_from else 0 for k in used_to}
    with open(out + ".json", "w") as f:
        json.dump(
            {
                **used,
                "cpu_messages": len(sent) - start_after if used_from else 0,
                "messages": len(sent),
                "seconds": (received[-1] - received[0]) / 1e9 if len(sent) > 1 else 0.0,
                "views": views,
                "read_us_p50": float(np.median(reads[warmup:])) / 1000 if len(reads) > warmup else None,
                "pid": os.getpid(),
            },
            f,
        )


def fields(message: str, size: int, rng: np.random.Generator) -> dict:
    """One message of type ``message`` whose data is ``size`` bytes, as field values."""
    header = {"stamp": {"sec": 1_700_000_000, "nanosec": 123_456_789}, "frame_id": "camera"}
    if message == "sensor_msgs/msg/Image":
        if size % (WIDTH * 3):
            raise SystemExit(f"an rgb8 image {WIDTH} wide has a multiple of {WIDTH * 3} bytes, not {size}")
        data = rng.integers(0, 256, size, dtype=np.uint8)
        height = size // (WIDTH * 3)
        return dict(header=header, height=height, width=WIDTH, encoding="rgb8", step=WIDTH * 3, data=data)
    if message == "sensor_msgs/msg/PointCloud2":
        if size % POINT_STEP:
            raise SystemExit(f"a cloud of {POINT_STEP}-byte points has a multiple of {POINT_STEP} bytes, not {size}")
        points = size // POINT_STEP
        data = rng.standard_normal(points * 4, dtype=np.float32).view(np.uint8)
        return dict(
            header=header,
            height=1,
            width=points,
            fields=[{"name": n, "offset": o, "datatype": FLOAT32, "count": 1} for n, o in FIELDS],
            is_bigendian=False,
            point_step=POINT_STEP,
            row_step=size,
            data=data,
            is_dense=True,
        )
    raise SystemExit(f"no codec case for {message}")


def nerve_codec(message: str, values: dict):
    """nerve's encode and decode of ``values`` (a message instance in, an Arrow value out)."""
    import nerve.msg

    value = nerve.msg.message_class(message)(**values)

    def decode(data: bytes):
        return nerve.msg.from_cdr(data, message)

    return (lambda: nerve.msg.to_cdr(value, message)), decode, "decoded to a one-row pyarrow StructArray"


def rclpy_codec(message: str, values: dict):
    """rclpy's encode and decode of the same message (an rclpy message in, one out)."""
    import array
    import importlib

    from rclpy.serialization import deserialize_message, serialize_message

    package, _, name = message.split("/")
    module = importlib.import_module(f"{package}.msg")
    cls = getattr(module, name)
    std_msgs, builtin = importlib.import_module("std_msgs.msg"), importlib.import_module("builtin_interfaces.msg")
    plain = dict(values)
    header = plain.pop("header")
    msg = cls(header=std_msgs.Header(stamp=builtin.Time(**header["stamp"]), frame_id=header["frame_id"]))
    for key, v in plain.items():
        if key == "fields":
            v = [module.PointField(**f) for f in v]
        elif key == "data":
            # Straight from the numpy buffer: a temporary `bytes` freed here would change what
            # glibc does with the big blocks that follow (see `timed`), nerve's process has none.
            pixels, v = v, array.array("B")
            v.frombytes(pixels.data)
        setattr(msg, key, v)

    def decode(data: bytes):
        return deserialize_message(data, cls)

    return (lambda: serialize_message(msg)), decode, "decoded to a sensor_msgs.msg message (data: an array.array)"


def timed(fn, arg, min_count: int, seconds: float) -> tuple[list[int], float]:
    """ns of each call of ``fn(*arg)``, after two untimed ones (at least ``min_count`` calls and
    at least ``seconds``), and the page faults per call: a call whose output lands in memory
    the process just got from the kernel (glibc hands a big block back at every free unless an
    earlier free raised its thresholds) touches every page of it for the first time."""
    for _ in range(2):
        fn(*arg)
    times = []
    faults_from = usage()["minor_faults"]
    end = time.perf_counter_ns() + int(seconds * 1e9)
    while len(times) < min_count or time.perf_counter_ns() < end:
        t0 = time.perf_counter_ns()
        fn(*arg)
        times.append(time.perf_counter_ns() - t0)
    return times, (usage()["minor_faults"] - faults_from) / len(times)


def keep_freed_memory() -> bool:
    """Tells glibc to serve blocks up to 32 MiB from its heap and to keep what is freed there
    (``mallopt``), instead of mapping each big block afresh and unmapping it at its free."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        return bool(libc.mallopt(m_mmap_threshold, 32 << 20) and libc.mallopt(m_trim_threshold, 1 << 30))
    except (OSError, AttributeError):
        return False


def codec(impl: str, message: str, size: int, min_count: int, seconds: float, out: str) -> None:
    result: dict = {"impl": impl, "message": message}
    try:
        values = fields(message, size, np.random.default_rng(7))
        if impl == "rclpy":
            try:
                encode, decode, note = rclpy_codec(message, values)
            except ImportError as e:
                raise RuntimeError(f"rclpy is not importable here: {type(e).__name__}: {e}") from e
        elif impl == "nerve":
            encode, decode, note = nerve_codec(message, values)
        else:
            raise SystemExit(f"IMPL must be nerve or rclpy, not {impl!r}")
        data = encode()
        if len(data) < size:
            raise RuntimeError(f"{impl} wrote {len(data)} bytes for {size} bytes of data")
        result["cdr_bytes"] = len(data)
        result["encode_ns"], result["encode_faults"] = timed(encode, (), min_count, seconds)
        result["decode_ns"], result["decode_faults"] = timed(decode, (data,), min_count, seconds)
        # Again with glibc keeping freed blocks for the next call (no page faults): what the
        # codec costs beside what the allocator costs.
        if keep_freed_memory():
            result["kept_encode_ns"], result["kept_encode_faults"] = timed(encode, (), min_count, seconds)
            result["kept_decode_ns"], result["kept_decode_faults"] = timed(decode, (data,), min_count, seconds)
        result["note"] = note
    except RuntimeError as e:
        result["error"] = str(e)
    with open(out, "w") as f:
        json.dump(result, f)


def main() -> None:
    role, args = sys.argv[1], sys.argv[2:]
    if role == "producer":
        producer(args[0], int(args[1]), int(args[2]), int(args[3]), float(args[4]), args[5], int(args[6]))
    elif role == "consumer":
        consumer(args[0], args[1], int(args[2]))
    elif role == "codec":
        codec(args[0], args[1], int(args[2]), int(args[3]), float(args[4]), args[5])
    else:
        raise SystemExit(f"unknown role {role}")


if __name__ == "__main__":
    main()

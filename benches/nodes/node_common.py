"""What every benchmark node script shares, nerve's and the peers': the stamp every message
carries, the pacing and the CPU accounting.

The producer writes a `CLOCK_MONOTONIC` stamp into the first 8 bytes of a payload just before
sending; the consumer reads it back in place with ``struct``, as every peer's nodes do
(benches/peers/nodes/common.py).
"""

import resource
import struct
import time

STAMP = struct.Struct("<q")


def stamp_of(value) -> int:
    """The producer's stamp, read in place from what the consumer holds: a received array's data
    buffer (shared memory, for nerve), or the numpy array itself where one process publishes to
    itself. A numpy view of a pyarrow array (``value.to_numpy()``) would add pyarrow's own cost,
    a few µs cold and tens in the tail (docs/performance.md), to nerve's and dora-rs's figures
    and to no peer's."""
    if hasattr(value, "buffers"):
        if value.offset:
            raise SystemExit("a message arrived as a slice of an array; its stamp is not at byte 0")
        value = value.buffers()[1]
    return STAMP.unpack_from(value)[0]


# How long a paced producer stays after its last message at least (see `paced`).
LINGER_NS = 100_000_000


def _sleep_until(t_ns: int) -> None:
    delay = t_ns - time.monotonic_ns()
    if delay > 0:
        time.sleep(delay / 1e9)


def paced(count: int, rate_hz: float, slot: tuple[int, int] = (0, 1)):
    """Yields `count` times on an absolute schedule (no drift), or back to back at rate 0.

    The schedule lies on a grid of `CLOCK_MONOTONIC` periods, producer `i` of `n` (`slot`)
    shifted by i/n of a period. The producers of a fan-in then send at the same moments of
    their period whichever middleware started them and however long each took to start. With
    a start of their own, their phases were whatever the launch gave: messages collided in
    one implementation's run and not in another's, and the two measured different things.

    After the last message the loop ends only once the other producers of the schedule have
    sent their last too (their starts lie a few periods apart at most): a producer that exits at
    once tears its interpreter down, tens of milliseconds of CPU, while the others' last
    messages are on their way, and on two cores those messages wait for it. Some middlewares'
    producers stay anyway, until their readers are gone; now every implementation's do."""
    period = round(1e9 / rate_hz) if rate_hz > 0 else 0
    start = time.monotonic_ns() + 50_000_000
    if period:
        index, producers = slot
        start = (start // period + 1) * period + period * index // producers
    for i in range(count):
        if period:
            _sleep_until(start + i * period)
        yield i
    if period and count:
        _sleep_until(start + (count - 1) * period + max(LINGER_NS, 5 * period))


def usage() -> dict[str, int]:
    """This process's CPU time and the kernel's counts that say whether two runs did the same
    work (page faults, sleeps, preemptions and yields), for the difference of two calls."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "cpu_ns": int((r.ru_utime + r.ru_stime) * 1e9),
        "minor_faults": r.ru_minflt,
        "voluntary_switches": r.ru_nvcsw,
        "involuntary_switches": r.ru_nivcsw,
    }


def cpu_ns() -> int:
    """This process's CPU time so far (user and system)."""
    return usage()["cpu_ns"]


#: The view scenarios' cloud points: x, y, z float32 and 4 bytes of padding, PCL's PointXYZ.
POINT_STEP = 16
FLOAT32 = 7  # sensor_msgs/msg/PointField.FLOAT32


def view_messages(width: int, height: int, points: int):
    """The view and foxglove scenarios' camera and lidar: functions that build the WIDTH x HEIGHT
    rgb8 image and the cloud of POINTS points (x, y, z float32 in POINT_STEP bytes) around the same
    two buffers, and numpy views of their first 16 data bytes (where the senders stamp)."""
    import numpy as np
    from nerve.msg import sensor_msgs

    pixels = np.zeros((height, width, 3), dtype=np.uint8)
    xyz = np.random.default_rng(7).standard_normal((points, POINT_STEP // 4), dtype=np.float32)
    cloud = xyz.view(np.uint8).reshape(-1)
    fields = [{"name": n, "offset": o, "datatype": FLOAT32, "count": 1} for n, o in (("x", 0), ("y", 4), ("z", 8))]

    def image_message():
        return sensor_msgs.Image(height=height, width=width, encoding="rgb8", step=width * 3, data=pixels)

    def cloud_message():
        return sensor_msgs.PointCloud2(
            height=1,
            width=points,
            fields=fields,
            is_bigendian=False,
            point_step=POINT_STEP,
            row_step=points * POINT_STEP,
            data=cloud,
            is_dense=True,
        )

    return image_message, cloud_message, pixels.reshape(-1)[:16], cloud[:16]

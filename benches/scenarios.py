"""The benchmark cases, after the experiments of the papers in ../shared/papers (DORA: latency vs
size, vs rate, 1→N, N→1, CPU; ORC: round trip 10 B..100 MB; the walker study: worst case under
load), nerve's topic API on its three transports, two hosts on a shaped link (DORA's LAN experiment,
RIMAOS2C's bridge), typed messages (a ROS 2 image against plain bytes, CDR), nerve's C++ nodes
against its Rust and Python ones, what the dashboard costs a running graph, what forwarding to a
Foxglove client costs beside foxglove-sdk's own server, the walker study's eight modules on two
boards (its Table I), ORC's 1 kHz force loop closed by a Python controller and HyperGraph ROS's
visualisation case (the dashboard over a long SLAM run), in a full and a quick version."""

from __future__ import annotations

from benches.model import WARMUP, Case

KIB, MIB = 1024, 1024 * 1024
SIZES = [8, KIB, 64 * KIB, MIB, 4 * MIB, 32 * MIB, 64 * MIB]
RTT_SIZES = [10, KIB, 100 * KIB, 1_000_000, 10_000_000, 100_000_000]
SCENARIOS = [
    "latency-size",
    "latency-rate",
    "fan-out",
    "fan-in",
    "round-trip",
    "cpu",
    "throughput",
    "worst-case",
    "spin",
    "cpu-latency",
    "topics",
    "lan",
    "types",
    "cpp",
    "view",
    "foxglove",
    "walker",
    "control-loop",
    "viewer-soak",
]
#: Scenarios whose case is one long run: `--repeat` would only lengthen the suite.
ONE_RUN = {"viewer-soak"}
#: The types scenario's messages: a 1080p rgb8 image, one of a sixth of its height (the bytes of a
#: 640x480 one), and a 100 000-point cloud (16-byte points).
IMAGE_BYTES = 1920 * 1080 * 3
SMALL_IMAGE_BYTES = 1920 * 160 * 3
CLOUD_BYTES = 100_000 * 16
#: The view scenario's streams, from one producer (the foxglove scenario's too): a 640x480 rgb8
#: camera at 30 Hz and a lidar of 100 000 points (x, y, z float32 in 16 bytes) with every third
#: image, at 10 Hz.
VIEW_WIDTH, VIEW_HEIGHT, VIEW_IMAGE_HZ = 640, 480, 30.0
VIEW_POINTS, VIEW_POINT_STEP, VIEW_CLOUD_EVERY = 100_000, 16, 3
#: The control-loop scenario's loop (examples/force-control): a 24-byte frame either way at 1 kHz.
LOOP_FRAME_BYTES, LOOP_HZ = 24, 1000.0


def cases(scenario: str, quick: bool, messages: int | None = None) -> list[Case]:
    """The cases of one scenario; `quick` runs fewer messages (for CI and smoke checks),
    `messages` sets how many a paced case sends (300 by default: its p99 is about the third
    worst message; more gives steadier tail percentiles)."""
    n = messages or (60 if quick else 300)
    if scenario == "latency-size":
        return [Case(scenario, size, n) for size in SIZES]
    if scenario == "latency-rate":
        return [Case(scenario, 4 * MIB, n if rate < 200 else 4 * n, rate_hz=rate) for rate in (20.0, 50.0, 200.0)]
    if scenario == "fan-out":
        return [Case(scenario, size, n, consumers=k) for k in (4, 8) for size in (8, 4 * MIB)]
    if scenario == "fan-in":
        return [Case(scenario, size, n, producers=k) for k in (4, 8) for size in (8, 4 * MIB)]
    if scenario == "round-trip":
        return [Case(scenario, size, n if size < 10_000_000 else max(10, n // 10)) for size in RTT_SIZES]
    if scenario == "cpu":
        return [Case(scenario, size, n, loan=loan) for size in (4 * MIB, 32 * MIB) for loan in (True, False)]
    if scenario == "throughput":
        m = 100_000 if quick else 1_000_000
        # Python's 4 MiB case is sized for the peers that copy every message; the Rust case is
        # nerve's alone, and at its rate m // 100 messages took 25 to 105 ms: too short a run to
        # give a rate.
        return [
            Case(scenario, 8, m, rate_hz=0, lang="rust"),
            Case(scenario, 8, m, rate_hz=0),
            Case(scenario, 4 * MIB, m, rate_hz=0, lang="rust"),
            Case(scenario, 4 * MIB, m // 100, rate_hz=0),
        ]
    if scenario == "worst-case":
        w = 200 if quick else 1500
        # With and without `realtime:` (nerve only: the peers have no such setting).
        return [Case(scenario, size, w, stress=True, realtime=rt) for rt in (False, True) for size in (KIB, 4 * MIB)]
    if scenario == "spin":
        return [Case(scenario, size, n, spin=True) for size in (8, 4 * MIB)]
    if scenario == "cpu-latency":
        # Blocking waits on a machine whose idle CPUs poll: 1→1 at every size, and the fan-outs
        # whose spread halting CPUs decide.
        one = [Case(scenario, size, n, cpu_latency=True) for size in SIZES]
        return [*one, *(Case(scenario, 4 * MIB, n, consumers=k, cpu_latency=True) for k in (4, 8))]
    if scenario == "topics":
        # node-topic / node-edge: a dataflow node's topic input beside a dataflow edge, both
        # woken by the node's one doorbell.
        transports = ("process", "host", "node-topic", "node-edge", "network")
        return [Case(scenario, size, n, transport=t) for t in transports for size in (8, 64 * KIB, 4 * MIB)]
    if scenario == "lan":
        # From 4 MiB on, 50 Hz is more than a 1 Gbit/s link carries (4 MiB takes 33.5 ms on the
        # wire): lossless, messages queue; keep-latest, they drop. 20 Hz fits.
        sizes = [8, 4 * MIB] if quick else [8, KIB, 64 * KIB, MIB, 4 * MIB, 32 * MIB]
        both = ("cluster", "zenoh")
        by_size = [Case(scenario, s, n if s < 32 * MIB else n // 6, transport=t) for t in both for s in sizes]
        fits = [Case(scenario, 4 * MIB, n, rate_hz=20.0, transport=t) for t in both]
        latest = [Case(scenario, 4 * MIB, n, transport=t) for t in ("cluster-latest", "zenoh-drop")]
        # RIMAOS2C's skew between the subscribers of one stream, with the bridge and without it,
        # at a load the link carries even as four streams.
        four = [(t, s) for t in both for s in (8, MIB)]
        spread = [Case(scenario, s, n, rate_hz=20.0, consumers=4, transport=t) for t, s in four]
        return by_size + fits + latest + spread
    if scenario == "types":
        # Images sent typed and sent as plain bytes (two implementations taking turns in each
        # case; two sizes, so that what typing costs shows whether it grows with the size, as a
        # copy would), then CDR encode and decode of an image and a point cloud, each at least
        # `count` times and for a second (benches/impl_types.py).
        image = "sensor_msgs/msg/Image"
        k = 5 if quick else 20
        return [
            Case(scenario, IMAGE_BYTES, n, message=image),
            Case(scenario, SMALL_IMAGE_BYTES, n, message=image),
            Case(scenario, IMAGE_BYTES, k, rate_hz=0, message=image, codec=True),
            Case(scenario, CLOUD_BYTES, k, rate_hz=0, message="sensor_msgs/msg/PointCloud2", codec=True),
        ]
    if scenario == "cpp":
        # Cases name what C++ is compared with (benches/impl_cpp.py): C++ → C++ beside Rust → Rust
        # at every size and unpaced, C++ → Python and Python → C++ beside Python → Python.
        native = [8, 64 * MIB] if quick else SIZES
        mixed = [8, 64 * MIB] if quick else [8, MIB, 64 * MIB]
        m = 100_000 if quick else 1_000_000
        return [
            *(Case(scenario, size, n, lang="rust") for size in native),
            Case(scenario, 8, m, rate_hz=0, lang="rust"),
            *(Case(scenario, size, n) for size in mixed),
        ]
    if scenario in ("view", "foxglove"):
        # Both streams come from one run, with the dashboard open and without it
        # (benches/impl_view.py), or forwarded to a Foxglove client by `nerve foxglove` and by
        # foxglove-sdk's server (benches/impl_foxglove.py): a cloud with every third image, at
        # least 3 * WARMUP clouds so that some are left after the warm-up even with --quick.
        clouds = max(-(-n // VIEW_CLOUD_EVERY), 3 * WARMUP)
        image_bytes, cloud_hz = VIEW_WIDTH * VIEW_HEIGHT * 3, VIEW_IMAGE_HZ / VIEW_CLOUD_EVERY
        return [
            Case(scenario, image_bytes, clouds * VIEW_CLOUD_EVERY, VIEW_IMAGE_HZ, message="sensor_msgs/msg/Image"),
            Case(scenario, VIEW_POINTS * VIEW_POINT_STEP, clouds, cloud_hz, message="sensor_msgs/msg/PointCloud2"),
        ]
    if scenario == "walker":
        # The paper's three mappings of the modules to two boards (examples/walker/workload.py).
        return [Case(scenario, 0, 0, rate_hz=0, mapping=m, seconds=5 if quick else 20) for m in (1, 2, 3)]
    if scenario == "control-loop":
        # One case: the loop for 60 s, its readings the robot's periods (benches/impl_control.py).
        seconds = 5.0 if quick else 60.0
        return [Case(scenario, LOOP_FRAME_BYTES, round(seconds * LOOP_HZ), LOOP_HZ, seconds=seconds)]
    if scenario == "viewer-soak":
        # The SLAM example with the dashboard open on it, sampled for this long (benches/impl_viewer_soak.py).
        return [Case(scenario, 0, 0, rate_hz=0, seconds=60.0 if quick else 600.0)]
    raise ValueError(f"unknown scenario {scenario!r} (known: {', '.join(SCENARIOS)})")

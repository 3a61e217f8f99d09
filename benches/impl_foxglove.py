"""What forwarding to a Foxglove client costs (the `foxglove` scenario): ``nerve foxglove`` beside
foxglove-sdk's own WebSocket server doing the same.

The view scenario's streams: a 640x480 rgb8 ``sensor_msgs/msg/Image`` at 30 Hz and a 100 000-point
``PointCloud2`` at 10 Hz, as CDR under their ``ros2msg`` schemas, to one Foxglove client
(benches/foxglove_client.py) subscribed to both channels.

* nerve: a dataflow's producer sends both typed outputs (benches/nodes/foxglove_node.py);
  ``nerve foxglove --port 0 --address 127.0.0.1`` runs as a process of its own, subscribes to the
  outputs when the client subscribes to their channels, and encodes each message as CDR for it.
* foxglove-sdk: one Python process starts the package's server on 127.0.0.1 and logs the same
  CDR bytes (encoded once, before the run) on two channels on the same schedule: the server runs
  in the producing process, as the SDK is made to.

The CPU time of the measured process (the bridge; the SDK's producing process) is read from
/proc twice over the same run: for a window of the measured length with no client connected
(once a probe has seen both channels advertised), then with the client subscribed, from the
moment it has received its first WARMUP messages of each stream to the moment it has received
as many more images as the case counts. What forwarding costs is the second minus the first (at
the rate of the first): for the SDK that takes the producing out, for the bridge its idle work
(the topic discovery of every second). Both are the same subtraction, over the payload bytes
the client received in the window. nerve's producer node is measured the same way: what its CPU
changes by while the bridge subscribes is beside the bridge's row (the SDK's producing is in its
own).

Both streams run at once, but a case is one stream (the report's rows are per stream): a run
serves the image case and the cloud case, and runs once for both.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from websockets.exceptions import WebSocketException

from benches.foxglove_client import Client, Stream, wait_advertised
from benches.impl_nerve import nerve_run
from benches.impl_view import PATIENCE, cpu_ns, started
from benches.model import WARMUP, Case, Samples
from benches.scenarios import VIEW_CLOUD_EVERY, VIEW_HEIGHT, VIEW_IMAGE_HZ, VIEW_POINTS, VIEW_WIDTH

NODE = Path(__file__).resolve().parent / "nodes" / "foxglove_node.py"
#: The stream of each case, by its message type: the producer's output of that name.
STREAMS = {"sensor_msgs/msg/Image": "image", "sensor_msgs/msg/PointCloud2": "cloud"}
#: The dataflow run's name: the bridge's channels are `~NAME/producer/image` and `.../cloud`,
#: and the SDK's channels take the same names.
RUN_NAME = f"benchfox{os.getpid()}"
TOPICS = {stream: f"~{RUN_NAME}/producer/{stream}" for stream in STREAMS.values()}


def sdk_version() -> str:
    try:
        return importlib.metadata.version("foxglove-sdk")
    except importlib.metadata.PackageNotFoundError:
        return "?"


class Forwarder:
    """One server forwarding both streams to the client: `nerve foxglove` (`sdk` False) or
    foxglove-sdk's server in the producing process."""

    def __init__(self, sdk: bool, name: str) -> None:
        self.sdk, self.NAME = sdk, name

    def supports(self, case: Case) -> bool:
        return case.scenario == "foxglove"

    def run(self, case: Case, workdir: Path) -> Samples:
        stream = STREAMS[case.message]
        # The image case's count and the cloud case's name the same run.
        images = case.count * round(VIEW_IMAGE_HZ / case.rate_hz)
        folder = workdir / f"foxglove-{'sdk' if self.sdk else 'nerve'}--{images}"
        if not (folder / "run.json").exists():
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "run.json").write_text(json.dumps(self.measure(folder, images)))
        result = json.loads((folder / "run.json").read_text())
        samples = Samples(self.NAME, case, error=result["error"])
        got = result["streams"].get(stream)
        if got:
            samples.sent_ns, samples.received_ns = got["sent_ns"], got["received_ns"]
            samples.consumer, samples.lost = [0] * len(got["sent_ns"]), got["lost"]
        if result["cpu"]:
            samples.foxglove = result["cpu"]
        return samples

    def measure(self, folder: Path, images: int) -> dict:
        """Runs the server and its producer, the idle window, then the client's: what went wrong,
        what the client got of each stream, and the CPU of both windows."""
        result: dict = {"error": None, "streams": {}, "cpu": None}
        for left in ("ready", "stop"):
            (folder / left).unlink(missing_ok=True)
        try:
            streams = encode(folder)
            with contextlib.ExitStack() as stack:
                port, pids, procs = (self.start_sdk if self.sdk else self.start_nerve)(folder, stack)
                result["cpu"], got = window(port, pids, procs, streams, images)
                result["cpu"]["process"] = (
                    f"foxglove-sdk {sdk_version()}: server and producer in one Python process"
                    if self.sdk
                    else "the `nerve foxglove` process; the producer is a dataflow node of its own"
                )
                result["streams"] = {
                    name: {"sent_ns": s.sent_ns, "received_ns": s.received_ns, "lost": s.lost()}
                    for name, s in got.items()
                }
                (folder / "stop").touch()
                for proc in procs[-1:]:  # the producer's process ends at the stop
                    if proc.wait(timeout=PATIENCE) != 0:
                        raise RuntimeError(f"{' '.join(proc.args[:4])} failed ({proc.returncode})")
        except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired, WebSocketException) as e:
            result["error"] = f"{e}{last_words(folder)}"
        return result

    def start_nerve(self, folder: Path, stack: contextlib.ExitStack) -> tuple[int, dict[str, int], list]:
        """`nerve foxglove` on a free port of loopback, then the producer's dataflow: the port, the
        processes to measure (the bridge's; the producer's, which READY names) and to watch."""
        err = folder / "nerve-foxglove.err"
        command = [sys.executable, "-m", "nerve", "foxglove", "--port", "0", "--address", "127.0.0.1"]
        bridge = stack.enter_context(started(command, err))
        said = re.compile(r"ws://127\.0\.0\.1:(\d+)")
        port = int(until(lambda: said.search(err.read_text()), [bridge], "nerve foxglove to print its port").group(1))
        args = (
            VIEW_WIDTH,
            VIEW_HEIGHT,
            VIEW_POINTS,
            VIEW_IMAGE_HZ,
            VIEW_CLOUD_EVERY,
            folder / "ready",
            folder / "stop",
        )
        types = "{image: sensor_msgs/msg/Image, cloud: sensor_msgs/msg/PointCloud2}"
        spec = (
            "nodes:\n"
            f"  - id: producer\n    path: {NODE}\n    args: nerve {' '.join(str(a) for a in args)}\n"
            f"    outputs: [image, cloud]\n    output_types: {types}\n"
        )
        command = [*nerve_run(folder, spec), "--name", RUN_NAME]
        run = stack.enter_context(started(command, folder / "nerve-run.err"))
        # Whatever happens, the producer stops at its next tick before its run is stopped.
        stack.callback((folder / "stop").touch)
        until(lambda: (folder / "ready").exists(), [bridge, run], "the producer to start")
        return port, {"server": bridge.pid, "producer": int((folder / "ready").read_text())}, [bridge, run]

    def start_sdk(self, folder: Path, stack: contextlib.ExitStack) -> tuple[int, dict[str, int], list]:
        """The producing process with foxglove-sdk's server in it, which writes its port into READY."""
        args = (VIEW_IMAGE_HZ, VIEW_CLOUD_EVERY, folder, TOPICS["image"], TOPICS["cloud"], folder / "ready")
        command = [sys.executable, str(NODE), "sdk", *(str(a) for a in args), str(folder / "stop")]
        sdk = stack.enter_context(started(command, folder / "sdk.err"))
        stack.callback((folder / "stop").touch)
        until(lambda: (folder / "ready").exists(), [sdk], "the foxglove-sdk server to start")
        return int((folder / "ready").read_text()), {"server": sdk.pid}, [sdk]


def encode(folder: Path) -> dict[str, Stream]:
    """The CDR of both messages, encoded once by nerve (the bytes the bridge sends, which the SDK's
    process logs): the client's streams, each with its payload's size and the stamp's place."""
    command = [sys.executable, str(NODE), "encode", str(VIEW_WIDTH), str(VIEW_HEIGHT), str(VIEW_POINTS), str(folder)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=PATIENCE)
    if done.returncode != 0:
        raise RuntimeError(f"encoding the messages failed: {done.stderr.strip().splitlines()[-1:]}")
    return {
        stream: Stream(
            topic,
            offset=int((folder / f"{stream}.offset").read_text()),
            size=(folder / f"{stream}.cdr").stat().st_size,
        )
        for stream, topic in TOPICS.items()
    }


def window(port: int, pids: dict[str, int], procs: list, streams: dict[str, Stream], images: int) -> tuple[dict, dict]:
    """The CPU of the processes `pids` (`server`: the one that forwards; `producer`: nerve's node)
    over an idle window, then over the client's window of `images` images after its warm-up; what
    the client received in the second."""
    wait_advertised(port, {s.topic for s in streams.values()})
    seconds = images / VIEW_IMAGE_HZ
    idle_from, since = {who: cpu_ns(pid) for who, pid in pids.items()}, time.monotonic()
    until(lambda: time.monotonic() - since >= seconds, procs, "the idle window", seconds + PATIENCE)
    idle_cpu = {who: cpu_ns(pid) - idle_from[who] for who, pid in pids.items()}
    idle_seconds = time.monotonic() - since
    client = Client(port, streams)
    try:
        warm = client.wait(lambda n: min(n.values()) >= WARMUP, PATIENCE)
        check(client, warm, "the client's first messages")
        start, cpu_from, since = client.counts(), {who: cpu_ns(pid) for who, pid in pids.items()}, time.monotonic()
        ends = start["image"][0] + images
        done = client.wait(lambda n: n["image"] >= ends, seconds + PATIENCE)
        cpu = {who: cpu_ns(pid) - cpu_from[who] for who, pid in pids.items()}
        seconds = time.monotonic() - since
        end = client.counts()
        check(client, done, f"{images} images")
    finally:
        client.close()
    for proc in procs:
        if proc.poll() is not None:
            raise RuntimeError(f"{' '.join(proc.args[:4])} exited ({proc.returncode}) during the run")
    messages = {name: end[name][0] - start[name][0] for name in streams}
    received = sum(end[name][1] - start[name][1] for name in streams)
    sizes = {name: s.size for name, s in streams.items()}
    figures = {"cpu_ns": cpu["server"], "seconds": seconds, "idle_cpu_ns": idle_cpu["server"]}
    figures |= {"idle_seconds": idle_seconds, "bytes": received, "messages": messages, "sizes": sizes}
    if "producer" in pids:
        figures |= {"producer_cpu_ns": cpu["producer"], "producer_idle_cpu_ns": idle_cpu["producer"]}
    return figures, client.streams


def check(client: Client, came: bool, what: str) -> None:
    if client.errors:
        raise RuntimeError(f"the client: {client.errors[0]}")
    if not came:
        raise RuntimeError(f"waiting for {what}: not within {PATIENCE} s")


def until(condition: Callable, procs: list, what: str, seconds: float = PATIENCE):
    """What `condition` returns once it is true; an error if one of `procs` exits first, or after
    `seconds`."""
    end = time.monotonic() + seconds
    while not (met := condition()):
        if exited := [p for p in procs if p.poll() is not None]:
            raise RuntimeError(f"waiting for {what}: {' '.join(exited[0].args[:4])} exited ({exited[0].returncode})")
        if time.monotonic() > end:
            raise RuntimeError(f"waiting for {what}: nothing after {seconds:.0f} s")
        time.sleep(0.05)
    return met


def last_words(folder: Path) -> str:
    """The last line each process of the run wrote to its error output, if any."""
    said = []
    for path in sorted(folder.glob("*.err")):
        lines = path.read_text(errors="replace").strip().splitlines()
        if lines:
            said.append(f"{path.stem}: {lines[-1]}")
    return f" ({'; '.join(said)})" if said else ""


IMPLEMENTATIONS = (Forwarder(False, "nerve foxglove"), Forwarder(True, "foxglove-sdk server"))

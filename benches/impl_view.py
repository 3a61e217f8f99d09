"""The dashboard's cost (the `view` scenario), nerve only.

One dataflow: a producer sends a typed 640x480 rgb8 image at 30 Hz and a 100 000-point cloud at
10 Hz to one consumer, which times both (benches/nodes/view_node.py). It runs without a viewer,
and with ``nerve view`` running in a process of its own and a page open on it (benches/view_page.py:
the graph polled once a second, both outputs' channels shown): two implementations that take
turns, as every implementation of a case does. The page is open before the producer sends its
first message, and stays until the run has ended.

Both streams run in the same dataflow, but a case is one stream (the report's rows are per
stream): a run serves the image case and the cloud case, and runs once for both.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from benches.impl_nerve import nerve_run
from benches.model import Case, Samples, read_stamp_lines
from benches.scenarios import VIEW_CLOUD_EVERY, VIEW_HEIGHT, VIEW_IMAGE_HZ, VIEW_POINTS, VIEW_WIDTH
from benches.view_page import Page

NODE = Path(__file__).resolve().parent / "nodes" / "view_node.py"
#: The stream of each case, by its message type: the producer's output of that name.
STREAMS = {"sensor_msgs/msg/Image": "image", "sensor_msgs/msg/PointCloud2": "cloud"}
#: How long the harness waits for a process to start, print or stop, or for the page, in seconds.
PATIENCE = 120
#: The run's name: its channels are `~NAME/producer/image` and `~NAME/producer/cloud`.
RUN_NAME = f"benchview{os.getpid()}"
T = TypeVar("T")


class Viewer:
    """The dataflow run with the dashboard open on it (`viewer`) or without one."""

    def __init__(self, viewer: bool, name: str) -> None:
        self.viewer, self.NAME = viewer, name

    def supports(self, case: Case) -> bool:
        return case.scenario == "view"

    def run(self, case: Case, workdir: Path) -> Samples:
        stream = STREAMS[case.message]
        # The image case's count and the cloud case's name the same run.
        images = case.count * round(VIEW_IMAGE_HZ / case.rate_hz)
        folder = workdir / f"view-{'with' if self.viewer else 'without'}--{images}"
        if not (folder / "run.json").exists():
            (folder / "run.json").write_text(json.dumps(self.measure(folder, images)))
        result = json.loads((folder / "run.json").read_text())
        samples = Samples(self.NAME, case)
        samples.error = result["error"]
        read_stamp_lines(folder / f"{stream}.txt", 0, samples)
        if result["viewer"]:
            # The viewer's CPU over the run, and what the page got of this case's channel.
            samples.viewer = dict(result["viewer"], frames=result["viewer"]["frames"][stream])
        return samples

    def dataflow(self, folder: Path, images: int) -> str:
        args = (VIEW_WIDTH, VIEW_HEIGHT, VIEW_POINTS, images, VIEW_IMAGE_HZ, VIEW_CLOUD_EVERY)
        args += (folder / "ready", folder / "go")
        types = "{image: sensor_msgs/msg/Image, cloud: sensor_msgs/msg/PointCloud2}"
        return (
            "nodes:\n"
            f"  - id: producer\n    path: {NODE}\n    args: producer {' '.join(str(a) for a in args)}\n"
            f"    outputs: [image, cloud]\n    output_types: {types}\n"
            f"  - id: consumer\n    path: {NODE}\n    args: consumer {folder}\n"
            "    inputs: {image: producer/image, cloud: producer/cloud}\n"
            f"    input_types: {types}\n"
        )

    def measure(self, folder: Path, images: int) -> dict:
        """Runs the dataflow to its end: what went wrong, and what the viewer did (with one)."""
        command = [*nerve_run(folder, self.dataflow(folder, images)), "--name", RUN_NAME]
        result: dict = {"error": None, "viewer": None}
        try:
            with contextlib.ExitStack() as stack:
                shown = stack.enter_context(dashboard(folder)) if self.viewer else None
                run = stack.enter_context(started(command, folder / "nerve-run.err"))
                wait_for(lambda: (folder / "ready").exists(), [run], "the producer to start")
                if shown:
                    shown.open([f"~{RUN_NAME}/producer/{stream}" for stream in STREAMS.values()], run)
                (folder / "go").touch()
                if run.wait(timeout=1800) != 0:
                    lines = (folder / "nerve-run.err").read_text().strip().splitlines()
                    raise RuntimeError(f"nerve run failed: {lines[-1:]}")
                if shown:
                    result["viewer"] = shown.close()
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            result["error"] = str(e)
        return result


class Dashboard:
    """`nerve view` and a page open on it."""

    def __init__(self, view: subprocess.Popen[bytes], port: int) -> None:
        self.view, self.page = view, Page(port)
        self.cpu_from, self.page_from, self.since = 0, 0, 0.0

    def open(self, keys: list[str], run: subprocess.Popen[bytes]) -> None:
        """Shows the channels `keys` once the graph lists them; CPU counts from then."""
        wait_for(lambda: self.page.lists(keys), [run, self.view], "the graph to list the channels")
        for key in keys:
            self.page.open_channel(key)
        wait_for(lambda: self.page.showing(keys), [run, self.view], "the page to open the channels")
        if self.page.errors:
            raise RuntimeError(f"the page: {self.page.errors[0]}")
        # The harness does nothing else meanwhile: its CPU is the page's.
        self.cpu_from, self.page_from, self.since = cpu_ns(self.view.pid), time.process_time_ns(), time.monotonic()

    def close(self) -> dict:
        """Closes the page: the viewer's and the page's CPU since `open` and over how long, the
        graphs the page got and, per stream, the messages its channel showed by kind (`image`,
        `tree`)."""
        cpu, page_cpu = cpu_ns(self.view.pid) - self.cpu_from, time.process_time_ns() - self.page_from
        seconds = time.monotonic() - self.since
        self.page.close()
        if self.page.errors:
            raise RuntimeError(f"the page: {self.page.errors[0]}")
        frames = {key.rsplit("/", 1)[1]: dict(kinds) for key, kinds in self.page.frames.items()}
        polls = self.page.polls
        return {"cpu_ns": cpu, "page_cpu_ns": page_cpu, "seconds": seconds, "graph_polls": polls, "frames": frames}


@contextlib.contextmanager
def dashboard(folder: Path) -> Iterator[Dashboard]:
    """`nerve view` on a free port of loopback, in a process of its own (so its CPU is its
    own), with a page open on it."""
    err = folder / "nerve-view.err"
    with started([sys.executable, "-m", "nerve", "view", "--port", "0"], err) as view:
        said = re.compile(r"dashboard on http://127\.0\.0\.1:(\d+)")
        port = wait_for(lambda: said.search(err.read_text()), [view], "nerve view to print its port")
        shown = Dashboard(view, int(port.group(1)))
        try:
            yield shown
        finally:
            shown.page.close()


@contextlib.contextmanager
def started(command: list[str], err: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`command` running, its stderr into `err`; stopped as Ctrl-C stops it if still running at the end."""
    with open(err, "wb") as stderr:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=PATIENCE)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def wait_for(condition: Callable[[], T], procs: list[subprocess.Popen[bytes]], what: str) -> T:
    """What `condition` returns once it is true; an error if one of `procs` exits first, or
    after `PATIENCE` seconds."""
    end = time.monotonic() + PATIENCE
    while not (met := condition()):
        if exited := [p for p in procs if p.poll() is not None]:
            raise RuntimeError(f"waiting for {what}: {' '.join(exited[0].args[:4])} exited ({exited[0].returncode})")
        if time.monotonic() > end:
            raise RuntimeError(f"waiting for {what}: nothing after {PATIENCE} s")
        time.sleep(0.05)
    return met


def cpu_ns(pid: int) -> int:
    """The CPU time (user and system) process `pid` used so far, from /proc (10 ms ticks)."""
    with open(f"/proc/{pid}/stat") as f:
        # The fields after the command's name, which may hold spaces, in parentheses.
        fields = f.read().rsplit(")", 1)[1].split()
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


IMPLEMENTATIONS = (Viewer(False, "nerve without viewer"), Viewer(True, "nerve with viewer"))

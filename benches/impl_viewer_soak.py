"""The dashboard over a long run (the `viewer-soak` scenario), nerve only: HyperGraph ROS's
visualisation case (../shared/papers/004_207c7132367cb64c.txt, section V.C), where its viewer's
CPU and memory stay flat over a SLAM run while RViz's grow.

The SLAM example (examples/slam: a growing point cloud, the robot's pose and path, and the
map -> base transform, checked by its monitor) runs with `nerve view` in a process of its own
and a page open on it (benches/view_page.py): the graph once a second, the map, path and pose
channels, each asking for its next message as soon as it has the last, and the transform tree.
From the moment the page has shown a message of each, for the case's seconds, the CPU time and
resident memory of the `nerve view` process and of the page are read from /proc every
`SAMPLE_EVERY` seconds, with the size of the map the page showed last; then the run is stopped
as Ctrl-C stops it (its monitor's checks still stand). The page is this process's threads (the harness does
nothing else meanwhile but sample), so the page's figures are this process's.

A soak is one long run: `--repeat` does not repeat it (benches/scenarios.py, ONE_RUN).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

from benches.impl_nerve import nerve_run
from benches.impl_view import PATIENCE, Dashboard, cpu_ns, dashboard, started, wait_for
from benches.model import Case, Samples
from benches.soak import proc_stats, shm_objects
from benches.view_page import TRANSFORMS

SLAM = Path(__file__).resolve().parent.parent / "examples" / "slam"
#: Seconds between two samples of the processes.
SAMPLE_EVERY = 2.0
#: The run's name: its channels are `~NAME/mapper/map` and the like.
RUN_NAME = f"benchsoak{os.getpid()}"
OUTPUTS = ("map", "path", "pose")
#: What is sampled (`viewer["series"]` has a list of each, a value per sample): seconds since the
#: first sample; CPU time (ns) so far, resident memory and the shared memory in it (KiB) of the
#: viewer and of the page (the viewer's shared memory is the blocks of the messages it has
#: mapped); the points of the map the page showed last; the size of the run's objects in
#: /dev/shm (KiB), the mapper's blocks among them.
COLUMNS = (
    "seconds",
    *(f"{who}_{what}" for who in ("view", "page") for what in ("cpu_ns", "rss_kib", "shmem_kib")),
    "map_points",
    "run_shm_kib",
)


class ViewerSoak:
    """The SLAM example with the dashboard open on it, for `case.seconds`."""

    NAME = "nerve view"

    def supports(self, case: Case) -> bool:
        return case.scenario == "viewer-soak"

    def run(self, case: Case, workdir: Path) -> Samples:
        samples = Samples(self.NAME, case)
        try:
            samples.viewer = soak(workdir / f"viewer-soak--{case.seconds:g}s", case.seconds)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            samples.error = str(e)
        return samples


def soak(folder: Path, seconds: float) -> dict:
    """Runs the example with the page open, sampling for `seconds`: what `Dashboard.close` says
    of the page, the samples (`series`: `COLUMNS`), the transforms the page showed last and the
    last lines of the mapper's and the monitor's logs."""
    command = [*nerve_run(folder, dataflow(folder)), "--name", RUN_NAME]
    keys = [f"~{RUN_NAME}/mapper/{output}" for output in OUTPUTS]
    with contextlib.ExitStack() as stack:
        shown = stack.enter_context(dashboard(folder))
        run = stack.enter_context(started(command, folder / "nerve-run.err"))
        shown.open(keys, run)
        shown.page.open_transforms()
        wait_for(lambda: shown.page.shown([*keys, TRANSFORMS]), [run, shown.view], "the page's first messages")
        series = sampled(shown, run, seconds, keys[0], f"nerve.{run_id(folder / 'nerve-run.err')}.")
        ended = run.poll() is not None  # by itself, before the span was over
        run.send_signal(signal.SIGINT)
        if run.wait(timeout=PATIENCE) != 0 or ended:
            why = f"{last_line(folder / 'nerve-run.err')}; monitor: {last_line(folder / 'monitor.log')}"
            when = f"after {len(series['seconds'])} samples" if ended else "when stopped"
            raise RuntimeError(f"nerve run ended ({run.returncode}) {when}: {why}")
        tree = shown.page.latest.get(TRANSFORMS, {}).get("edges", [])
        page = shown.close()
    transforms = [f"{edge['parent']} → {edge['child']}" for edge in tree]
    logs = {node: last_line(folder / f"{node}.log") for node in ("mapper", "monitor")}
    return {**page, "series": series, "transforms": transforms, **logs}


def dataflow(folder: Path) -> str:
    """The example copied into `folder`, its mapper driving until stopped: its dataflow."""
    shutil.copytree(SLAM, folder, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "out"))
    spec, found = re.subn(r"--seconds \S+", "--seconds 0", (SLAM / "dataflow.yml").read_text())
    if found != 1:
        raise RuntimeError(f"{SLAM / 'dataflow.yml'} names the mapper's --seconds {found} times, not once")
    return spec


def run_id(err: Path) -> str:
    """The id of the run whose `nerve run` logs into `err` (it names its /dev/shm objects)."""
    said = re.search(r"run=([0-9a-f-]{36})", err.read_text())
    if not said:
        raise RuntimeError(f"no run id in {err}")
    return said.group(1)


def sampled(
    shown: Dashboard, run: subprocess.Popen[bytes], seconds: float, map_key: str, shm_prefix: str
) -> dict[str, list[float]]:
    """The samples (`COLUMNS`) taken every `SAMPLE_EVERY` seconds for `seconds` from now or until
    the run ends, the run's /dev/shm objects those named from `shm_prefix`; an error if the page
    fails meanwhile."""
    rows: list[list[float]] = []
    start = time.monotonic()
    for k in range(int(seconds / SAMPLE_EVERY) + 1):
        time.sleep(max(0.0, start + k * SAMPLE_EVERY - time.monotonic()))
        if run.poll() is not None:
            break
        if shown.page.errors:
            raise RuntimeError(f"the page: {shown.page.errors[0]}")
        with shown.page.lock:
            points = shown.page.latest[map_key]["total"]
        shm_kib = sum(o.st_size for o in shm_objects(shm_prefix).values()) // 1024
        rows.append([time.monotonic() - start, *usage(shown.view.pid), *usage(os.getpid()), points, shm_kib])
    return {column: [row[i] for row in rows] for i, column in enumerate(COLUMNS)}


def usage(pid: int) -> tuple[int, int, int]:
    """The CPU time (ns) process `pid` used so far, and its resident memory now and the shared
    memory in it (KiB)."""
    stats = proc_stats(pid)
    if stats is None:
        raise RuntimeError(f"process {pid} has exited")
    return cpu_ns(pid), stats.rss_kib, stats.shmem_kib


def last_line(path: Path) -> str:
    """The last line of a log, without its time: a node's summary, or why it failed."""
    lines = path.read_text().strip().splitlines() if path.exists() else []
    return re.sub(r"^\d{4}-\d\d-\d\dT\S+Z ", "", lines[-1]) if lines else f"nothing in {path.name}"


IMPLEMENTATIONS = (ViewerSoak(),)

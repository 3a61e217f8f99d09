"""The scheduler's tracepoints around a benchmark run, on the clock the bench stamps use, for
the profiles that ask what the kernel did with a message (stalls.py, realtime_placement.py).
Needs root and `perf`."""

import contextlib
import re
import signal
import subprocess
import time
from pathlib import Path


@contextlib.contextmanager
def recorded(trace: Path, events: list[str]):
    """Records `events` system-wide into `trace` while the block runs. `-k mono` stamps them
    with `CLOCK_MONOTONIC`, the clock of `time.monotonic_ns()`, so a message's stamps and the
    trace line up."""
    cmd = ["perf", "record", "-q", "-k", "mono", "-a", "-o", str(trace)]
    for event in events:
        cmd += ["-e", event]
    perf = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(1.0)  # recording before the first node starts
    try:
        yield
    finally:
        perf.send_signal(signal.SIGINT)
        if perf.wait() not in (0, -signal.SIGINT):
            raise SystemExit(f"perf record failed: {perf.stderr.read().decode().strip()}")


def lines(trace: Path) -> list[str]:
    """The recorded events as `perf script` prints them: task, pid, CPU, time, event, fields."""
    fields = "comm,pid,cpu,time,event,trace"
    out = subprocess.run(["perf", "script", "-i", str(trace), "-F", fields], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


# Lines of `lines` for the two scheduler events the profiles read: the task that ran the event
# (`comm`, `pid`), its CPU and the time in seconds, then the event's own fields.
_TASK = r"^\s*(?P<comm>.+?)\s+(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?P<time>[\d.]+):\s+"
#: `sched_waking`: the task woken and the CPU picked for it.
WAKING = re.compile(
    _TASK
    + r"sched:sched_waking: comm=(?P<woken_comm>.+?) pid=(?P<woken_pid>\d+) prio=\d+ target_cpu=(?P<target_cpu>\d+)"
)
#: `sched_switch`: the task leaving the CPU and the one taking it (pid 0: the CPU goes idle).
SWITCH = re.compile(
    _TASK
    + r"sched:sched_switch: prev_comm=.+? prev_pid=(?P<prev_pid>\d+) "
    + r".*==> next_comm=(?P<next_comm>.+?) next_pid=(?P<next_pid>\d+)"
)


def ns(seconds: str) -> int:
    """A `perf script` time (seconds, on `CLOCK_MONOTONIC` with `recorded`) in nanoseconds."""
    return round(float(seconds) * 1e9)

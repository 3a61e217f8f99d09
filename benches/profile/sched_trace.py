"""The scheduler's tracepoints around a benchmark run, on the clock the bench stamps use, for
the profiles that ask what the kernel did with a message (stalls.py, realtime_placement.py).
Needs root and `perf`."""

import contextlib
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

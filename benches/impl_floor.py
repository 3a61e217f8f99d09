"""The floor: a bare eventfd wake-up plus a shared-memory stamp between two Python processes,
with no middleware at all. No implementation can beat it on this machine."""

from __future__ import annotations

import mmap
import os
import struct
import time
from pathlib import Path

from benches.model import Case, Samples

NAME = "floor (eventfd + shm)"


def supports(case: Case) -> bool:
    # The floor carries only a stamp: one size per scenario is enough.
    cases = (("latency-size", 8), ("spin", 8), ("worst-case", 1024))
    return (case.scenario, case.size) in cases and not case.realtime


def run(case: Case, workdir: Path) -> Samples:
    samples = Samples(NAME, case)
    efd = os.eventfd(0, os.EFD_NONBLOCK if case.spin else 0)
    shm = mmap.mmap(-1, mmap.PAGESIZE)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # consumer
        os.close(read_end)
        lines = []
        for _ in range(case.count):
            while True:
                try:
                    os.eventfd_read(efd)
                    break
                except BlockingIOError:  # spin mode: poll
                    continue
            sent = struct.unpack_from("<q", shm, 0)[0]
            lines.append(f"{sent} {time.monotonic_ns()}")
        os.write(write_end, ("\n".join(lines) + "\n").encode())
        os._exit(0)
    os.close(write_end)
    period = 1e9 / case.rate_hz
    start = time.monotonic_ns() + 50_000_000
    for i in range(case.count):
        delay = start + i * period - time.monotonic_ns()
        if delay > 0:
            time.sleep(delay / 1e9)
        struct.pack_into("<q", shm, 0, time.monotonic_ns())
        os.eventfd_write(efd, 1)
    data = b""
    while chunk := os.read(read_end, 1 << 16):
        data += chunk
    os.waitpid(pid, 0)
    os.close(read_end)
    os.close(efd)
    for line in data.decode().split("\n"):
        if line:
            sent, received = line.split()
            samples.sent_ns.append(int(sent))
            samples.received_ns.append(int(received))
            samples.consumer.append(0)
    return samples

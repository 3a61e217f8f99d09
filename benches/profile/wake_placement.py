"""The bare floor (an eventfd wake-up and a stamp in shared memory between two Python
processes, 50 Hz) with the reader on the writer's vCPU, on the other one, or where the kernel
puts it: how much of a wake-up is the host waking a halted vCPU.

    python benches/profile/wake_placement.py [MESSAGES]
"""

import mmap
import os
import struct
import sys
import time

import numpy as np

PERIOD_NS = 20_000_000
WARMUP = 20


def reader(efd: int, shm: mmap.mmap, count: int, cpu: int | None, out: int) -> None:
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    lat = []
    for _ in range(count):
        os.eventfd_read(efd)
        lat.append(time.monotonic_ns() - struct.unpack_from("<q", shm, 0)[0])
    os.write(out, np.array(lat[WARMUP:], dtype=np.int64).tobytes())


def run(placement: str, count: int) -> np.ndarray:
    efd = os.eventfd(0)
    shm = mmap.mmap(-1, mmap.PAGESIZE)
    rd, wr = os.pipe()
    cpu = {"same vCPU": 0, "other vCPU": 1, "kernel's choice": None}[placement]
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            reader(efd, shm, count, cpu, wr)
        except BaseException:  # a child must never return into the caller
            code = 1
        os._exit(code)
    os.close(wr)
    own = os.sched_getaffinity(0)
    if cpu is not None:
        os.sched_setaffinity(0, {0})
    start = time.monotonic_ns() + 50_000_000
    for i in range(count):
        delay = start + i * PERIOD_NS - time.monotonic_ns()
        if delay > 0:
            time.sleep(delay / 1e9)
        struct.pack_into("<q", shm, 0, time.monotonic_ns())
        os.eventfd_write(efd, 1)
        if cpu == 0:
            os.sched_yield()  # the reader waits for this vCPU: give it at once, as nerve does
    os.sched_setaffinity(0, own)
    data = b""
    while chunk := os.read(rd, 1 << 16):
        data += chunk
    os.waitpid(pid, 0)
    return np.frombuffer(data, dtype=np.int64) / 1e3


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    if os.cpu_count() < 2:
        raise SystemExit("needs two CPUs")
    for placement in ("same vCPU", "other vCPU", "kernel's choice"):
        us = run(placement, count)
        p50, p90, p99 = np.percentile(us, [50, 90, 99])
        print(f"{placement:16s} p50 {p50:6.1f}  p90 {p90:6.1f}  p99 {p99:6.1f} µs  (n={len(us)})")


if __name__ == "__main__":
    main()

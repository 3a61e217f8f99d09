"""The floor: a bare eventfd wake-up plus a shared-memory stamp between two Python processes,
with no middleware at all. No implementation can beat it on this machine, in latency or in the
CPU a paced reader and writer spend per message."""

from __future__ import annotations

import json
import mmap
import os
import struct
import time
from pathlib import Path

from benches.model import WARMUP, Case, Samples, read_stamp_lines
from benches.nodes.node_common import cpu_ns

NAME = "floor (eventfd + shm)"


def supports(case: Case) -> bool:
    # The floor carries only a stamp, so its cost is the same at every size: one size per
    # scenario is enough, except beside nerve's 1→1 sizes, where it shows how noisy the host
    # was while each size ran (cases run one after the other), and with idle CPUs polling,
    # where its fan-outs stand beside nerve's at 4 MiB. In the CPU scenario it is the least a
    # Python process woken 50 times a second spends per message, at each size's run.
    cases = (("spin", 8), ("worst-case", 1024), ("fan-out", 8))
    every_size = case.scenario in ("latency-size", "cpu-latency") or (case.scenario == "cpu" and case.loan)
    return (every_size or (case.scenario, case.size) in cases) and not case.realtime


def _consume(efd: int, shm: mmap.mmap, count: int, out: Path) -> None:
    """A reader: waits on its eventfd (or polls it, spinning), reads the stamp, takes the time.

    A read returns every signal since the last one: a reader held off the CPU for a whole
    period wakes once for two stamps, and only the newer is still in memory (it is the one
    measured; the older is lost, as with a keep-latest queue). Its CPU time is counted from the
    end of the warm-up, as the other implementations' readers count theirs."""
    lines = []
    signals = 0
    cpu_from = None
    while signals < count:
        try:
            signals += os.eventfd_read(efd)
        except BlockingIOError:  # spin mode: poll
            continue
        sent = struct.unpack_from("<q", shm, 0)[0]
        lines.append(f"{sent} {time.monotonic_ns()}\n")
        if cpu_from is None and signals >= WARMUP:
            cpu_from = cpu_ns(), signals
    # Per message sent, as a middleware's reader counts them, whether or not one wake took two.
    cpu = {"cpu_ns": cpu_ns() - cpu_from[0], "cpu_messages": signals - cpu_from[1]} if cpu_from else {}
    out.with_suffix(".json").write_text(json.dumps(cpu))
    out.write_text("".join(lines))


def run(case: Case, workdir: Path) -> Samples:
    """One producer writes the stamp, then signals each reader's eventfd in turn (fan-out: the
    spread between readers of one stamp is the least any middleware's can be here)."""
    samples = Samples(NAME, case)
    folder = workdir / f"floor--{case.key}"
    folder.mkdir(parents=True, exist_ok=True)
    shm = mmap.mmap(-1, mmap.PAGESIZE)
    efds = [os.eventfd(0, os.EFD_NONBLOCK if case.spin else 0) for _ in range(case.consumers)]
    pids = []
    for c, efd in enumerate(efds):
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                _consume(efd, shm, case.count, folder / f"c{c}.txt")
            except BaseException:  # a child must never return into the harness
                code = 1
            os._exit(code)
        pids.append(pid)
    period = 1e9 / case.rate_hz
    start = time.monotonic_ns() + 50_000_000
    cpu_from = None
    for i in range(case.count):
        if i == WARMUP:
            cpu_from = cpu_ns()
        delay = start + i * period - time.monotonic_ns()
        if delay > 0:
            time.sleep(delay / 1e9)
        struct.pack_into("<q", shm, 0, time.monotonic_ns())
        for efd in efds:
            os.eventfd_write(efd, 1)
    if cpu_from is not None:
        samples.producer_cpu_ns = cpu_ns() - cpu_from
        samples.producer_cpu_messages = case.count - WARMUP
    failed = [pid for pid in pids if os.waitpid(pid, 0)[1] != 0]
    for efd in efds:
        os.close(efd)
    if failed:
        samples.error = f"{len(failed)} floor reader(s) failed"
        return samples
    for c in range(case.consumers):
        read_stamp_lines(folder / f"c{c}.txt", c, samples)
    cpu = json.loads((folder / "c0.json").read_text())
    samples.consumer_cpu_ns = cpu.get("cpu_ns")
    samples.consumer_cpu_messages = cpu.get("cpu_messages")
    if case.size > 8:
        samples.note = "carries the 8-byte stamp only"
    return samples

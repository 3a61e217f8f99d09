"""A CPU latency request of 0 µs held by the harness: idle CPUs poll instead of halting.

nerve's nodes ask for it themselves (`realtime: {cpu_latency_us: 0}`); the harness holds the
same request for every other implementation of a cpu-latency case."""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Iterator

DEVICE = "/dev/cpu_dma_latency"


@contextlib.contextmanager
def held() -> Iterator[None]:
    """While the block runs, no CPU of the machine enters an idle state slower than 0 µs to leave."""
    try:
        fd = os.open(DEVICE, os.O_WRONLY)
    except OSError as e:
        raise SystemExit(f"idle CPUs kept polling need write access to {DEVICE} (root): {e}") from e
    try:
        os.write(fd, struct.pack("=i", 0))
        yield
    finally:
        os.close(fd)

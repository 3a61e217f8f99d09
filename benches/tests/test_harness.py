"""The harness: the floor's reader, the producers' schedule, the order implementations run in."""

import itertools
import mmap
import os
import struct
import threading
import time

from benches.__main__ import in_turn
from benches.impl_floor import _consume
from benches.nodes.node_common import LINGER_NS, paced


def test_floor_reader_woken_once_for_two_stamps_does_not_wait_for_a_third(tmp_path):
    """A producer that catches up signals twice before its reader runs: one eventfd read takes
    both signals, and the reader must count them (it used to wait forever for one more)."""
    efd = os.eventfd(0)
    shm = mmap.mmap(-1, mmap.PAGESIZE)
    struct.pack_into("<q", shm, 0, 42)
    os.eventfd_write(efd, 1)
    os.eventfd_write(efd, 1)
    out = tmp_path / "c0.txt"
    reader = threading.Thread(target=_consume, args=(efd, shm, 2, out), daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive(), "the reader still waits for a signal that will never come"
    lines = out.read_text().splitlines()
    assert len(lines) == 1 and lines[0].split()[0] == "42", lines


def test_paced_producers_share_a_grid_and_stay_until_the_schedule_ends():
    """Producer i of n sends i/n of a period after the grid's period starts, and its loop ends
    only well after its last send: a producer that exits at once burns CPU on teardown while
    the other producers' last messages are on their way (docs/performance.md)."""
    period = 10_000_000  # 100 Hz
    sends = []
    for _ in paced(3, 100.0, (1, 4)):
        sends.append(time.monotonic_ns())
    ended = time.monotonic_ns()
    assert len(sends) == 3
    # Sleeps end at or after their deadline: each send lies just past its grid point.
    phases = [(t - period // 4) % period for t in sends]
    assert all(p < period // 2 for p in phases), phases
    # The linger counts from the last grid point, not from the send, which a busy machine delays.
    last_point = sends[-1] - phases[-1]
    assert ended - last_point >= LINGER_NS, (ended - last_point) / 1e6


def test_implementations_take_turns_in_orders_that_vary_from_round_to_round():
    impls = ["nerve", "topics", "lan", "floor", "dora-rs", "iceoryx2", "zenoh", "zeromq", "cyclonedds"]
    rounds = [in_turn(impls, t) for t in range(40)]
    assert all(sorted(r) == sorted(impls) for r in rounds), "every round runs every implementation once"
    assert in_turn(impls, 7) == rounds[7], "a rerun runs the same order"
    # What ran just before nerve, the previous round's last run when nerve opens a round.
    before = {(r if r.index("nerve") else p)[r.index("nerve") - 1] for p, r in itertools.pairwise(rounds)}
    assert len(before) >= 5, f"nerve ran right after only {sorted(before)}"

"""Benchmark node for dataflow middlewares with the dora node API (nerve, and dora-rs itself).

    dataflow_node.py producer SIZE COUNT RATE_HZ HOW OUT WARMUP [SLOT]
    dataflow_node.py consumer OUT WARMUP
    dataflow_node.py echo
    dataflow_node.py ping SIZE COUNT RATE_HZ OUT

SLOT (``i/n``, default ``0/1``) is the producer's place among the n of a fan-in (see
node_common.paced). HOW is how the producer sends: 1 (into a loaned block where the middleware
lends one), 0 (a numpy array, copied), or, for 8-byte stamps only, ``list`` (a Python list of
one int) or ``pyarrow`` (``pyarrow.array`` of that list, as dora nodes send).
BENCH_MIDDLEWARE=dora imports ``dora`` instead of ``nerve``: the node is otherwise the same.
CPU time counts only the messages after the first WARMUP (set-up and first allocations are
left out, as the latency tables leave out the first messages).
"""

import json
import os
import sys
import time

import numpy as np
import pyarrow as pa
from node_common import STAMP, cpu_ns, paced, stamp_of, usage

DORA = os.environ.get("BENCH_MIDDLEWARE") == "dora"
if DORA:
    from dora import Node
else:
    from nerve import Node


def as_message(payload: np.ndarray):
    """What `send_output` takes: nerve takes numpy arrays, dora wants a pyarrow array."""
    return pa.array(payload) if DORA else payload


def sender(node, size: int, how: str):
    """A function that sends one message of `size` bytes stamped with the time and returns the
    stamp: written into a loaned block where the middleware lends one (nerve), else into a numpy
    array that `send_output` copies; or the stamp alone in a list (see HOW above)."""
    if how in ("list", "pyarrow"):
        if size != 8:
            raise SystemExit(f"HOW={how} sends one 8-byte stamp, not {size} bytes")

        def send_list() -> int:
            t = time.monotonic_ns()
            node.send_output("data", [t] if how == "list" else pa.array([t], type=pa.int64()))
            return t

        return send_list
    if how == "1" and hasattr(node, "send_output_raw"):

        def send_loaned() -> int:
            with node.send_output_raw("data", size) as sample:
                t = time.monotonic_ns()
                STAMP.pack_into(sample, 0, t)
            return t

        return send_loaned
    payload = np.zeros(size, dtype=np.uint8)
    stamp = payload[:8].view("<i8")

    def send_copied() -> int:
        stamp[0] = t = time.monotonic_ns()
        node.send_output("data", as_message(payload))
        return t

    return send_copied


def producer(size: int, count: int, rate_hz: float, how: str, out: str, warmup: int, slot: str = "0/1") -> None:
    if how not in ("0", "1", "list", "pyarrow"):
        raise SystemExit(f"HOW must be 0, 1, list or pyarrow, not {how!r}")
    node = Node()
    send = sender(node, size, how)
    warmup = warmup if count > 2 * warmup else 0
    cpu_from = None
    index, producers = (int(x) for x in slot.split("/"))
    for i in paced(count, rate_hz, (index, producers)):
        if i == warmup:
            cpu_from = cpu_ns()
        send()
    used = cpu_ns() - cpu_from if cpu_from is not None else 0
    with open(out, "w") as f:
        json.dump({"cpu_ns": used, "cpu_messages": count - warmup, "messages": count, "pid": os.getpid()}, f)
    # A dora node that exits at once loses the messages still in flight; its adapter asks for
    # a moment's grace (nerve keeps them: they live in the readers' queues).
    time.sleep(float(os.environ.get("BENCH_LINGER_S", "0")))


def consumer(out: str, warmup: int, limit: int = 0) -> None:
    """Stamps every message until STOP, or until ``limit`` messages (a topic input never closes)."""
    node = Node()
    sent = []
    received = []
    # The clock starts once a message is in, so that it counts whole messages only.
    start_after = max(warmup, 1)
    used_from = first_wall = None
    for event in node:
        if event["type"] == "INPUT":
            s = stamp_of(event["value"])
            r = time.monotonic_ns()
            if first_wall is None:
                first_wall = r
            sent.append(s)
            received.append(r)
            if len(sent) == start_after:
                used_from = usage()
            del event
            if len(sent) == limit:
                break
        elif event["type"] == "STOP":
            break
    used_to, last_wall = usage(), time.monotonic_ns()
    np.savetxt(out, np.column_stack([sent, received]) if sent else np.zeros((0, 2)), fmt="%d")
    # Over the measured messages (after the warm-up): CPU time and the counts beside it.
    used = {k: used_to[k] - used_from[k] if used_from else 0 for k in used_to}
    with open(out + ".json", "w") as f:
        json.dump(
            {
                **used,
                "cpu_messages": len(sent) - start_after if used_from else 0,
                "messages": len(sent),
                "seconds": (received[-1] - first_wall) / 1e9 if len(sent) > 1 else 0.0,
                "wall_s": (last_wall - first_wall) / 1e9 if first_wall else 0.0,
                # nerve: messages whose arrays were made before they came (their block's
                # address was known); dora-rs has no such count.
                "imported_ahead": getattr(node, "arrays_imported_ahead", None),
                # Finds the node in a trace of the scheduler (`perf record -a`).
                "pid": os.getpid(),
            },
            f,
        )


def echo() -> None:
    node = Node()
    for event in node:
        if event["type"] == "INPUT":
            node.send_output("data", event["value"])
        elif event["type"] == "STOP":
            break


def ping(size: int, count: int, rate_hz: float, out: str) -> None:
    node = Node()
    # Loaned where the middleware lends blocks, as the peers' pings do: the one copy of a round
    # trip is the echo's.
    send = sender(node, size, "1")
    rtts = []
    for _ in paced(count, rate_hz):
        t0 = send()
        while True:
            event = node.next(timeout=10.0)
            if event is None or event["type"] != "INPUT":
                break
            if stamp_of(event["value"]) == t0:
                rtts.append(time.monotonic_ns() - t0)
                break
    np.savetxt(out, np.array(rtts, dtype=np.int64), fmt="%d")


def main() -> None:
    role, args = sys.argv[1], sys.argv[2:]
    if role == "producer":
        producer(int(args[0]), int(args[1]), float(args[2]), args[3], args[4], int(args[5]), *args[6:7])
    elif role == "consumer":
        consumer(args[0], int(args[1]), *(int(a) for a in args[2:3]))
    elif role == "echo":
        echo()
    elif role == "ping":
        ping(int(args[0]), int(args[1]), float(args[2]), args[3])
    else:
        raise SystemExit(f"unknown role {role}")


if __name__ == "__main__":
    main()

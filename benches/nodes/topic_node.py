"""Benchmark endpoints for nerve's topic API (no dataflow).

    topic_node.py inprocess TOPIC SIZE COUNT RATE_HZ OUT   publisher and subscriber in one process
    topic_node.py consumer TOPIC COUNT SCOPE OUT
    topic_node.py producer TOPIC SIZE COUNT RATE_HZ SCOPE

The producer stamps the first 8 bytes of each payload with ``time.monotonic_ns()`` just before
sending (a loan written in place across processes, the numpy object itself in one process); the
consumer reads it back with ``struct`` from the data it holds (the array's shared-memory buffer,
the very object in-process), as the dataflow benchmark's nodes do, and writes ``sent received``
lines to OUT.
"""

import sys
import threading
import time

import nerve
import numpy as np
from node_common import STAMP, paced, stamp_of


def consume(sub: nerve.Subscriber, count: int, out: str) -> None:
    lines = []
    for _ in range(count):
        m = sub.recv(30)
        if m is None:
            break
        sent = stamp_of(m["value"])
        lines.append(f"{sent} {time.monotonic_ns()}")
        del m
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


def produce(pub: nerve.Publisher, size: int, count: int, rate_hz: float, loan: bool) -> None:
    deadline = time.monotonic() + 60
    while pub.subscriber_count == 0:
        if time.monotonic() > deadline:
            sys.exit("no subscriber linked")
        time.sleep(0.01)
    time.sleep(0.2)  # let every link settle before the measured messages
    for _ in paced(count, rate_hz):
        if loan:
            # Written in place in shared memory, as the dataflow benchmark's producers do.
            with pub.loan(size) as sample:
                STAMP.pack_into(sample, 0, time.monotonic_ns())
        else:
            payload = np.zeros(size, dtype=np.uint8)  # a fresh object each time: in-process gets this
            payload[:8].view("<i8")[0] = time.monotonic_ns()
            pub.send(payload)


def main() -> None:
    role, topic, *rest = sys.argv[1:]
    if role == "inprocess":
        size, count, rate, out = int(rest[0]), int(rest[1]), float(rest[2]), rest[3]
        sub = nerve.Subscriber(topic, scope="process", queue_size=count)
        reader = threading.Thread(target=consume, args=(sub, count, out))
        reader.start()
        produce(nerve.Publisher(topic, scope="process"), size, count, rate, loan=False)
        reader.join()
    elif role == "consumer":
        count, scope, out = int(rest[0]), rest[1], rest[2]
        consume(nerve.Subscriber(topic, scope=scope, queue_size=count), count, out)
    else:
        size, count, rate, scope = int(rest[0]), int(rest[1]), float(rest[2]), rest[3]
        produce(nerve.Publisher(topic, scope=scope), size, count, rate, loan=True)


if __name__ == "__main__":
    main()

"""A standalone topic publisher for tests: sends numbered numpy arrays with a CRC.

Usage: topic_publisher.py TOPIC FIRST COUNT [--domain N] [--scope S] [--rate HZ] [--subscribers N]
Message ``i`` holds ``1 + i % 1000`` uint32 values, all equal to ``i``; metadata carries ``i``
and the CRC of the bytes. Waits for ``--subscribers`` subscribers (1) before the first send.
"""

import argparse
import sys
import time
import zlib

import nerve
import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("topic")
    ap.add_argument("first", type=int)
    ap.add_argument("count", type=int)
    ap.add_argument("--domain", type=int, default=0)
    ap.add_argument("--scope", default="network")
    ap.add_argument("--rate", type=float, default=0.0)
    ap.add_argument("--subscribers", type=int, default=1)
    ap.add_argument("--no-wait", action="store_true")
    args = ap.parse_args()
    pub = nerve.Publisher(args.topic, domain=args.domain, scope=args.scope)
    if not args.no_wait and not pub.wait_for_subscribers(args.subscribers, timeout=20):
        print("no subscriber", file=sys.stderr)
        return 1
    start = time.monotonic()
    for i in range(args.first, args.first + args.count):
        value = np.full(1 + i % 1000, i, dtype=np.uint32)
        pub.send(value, {"i": i, "crc": zlib.crc32(value.tobytes())})
        if args.rate:
            time.sleep(1 / args.rate)
    print(f"sent in {time.monotonic() - start:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""One module of the walker as a nerve node: `module.py NAME` (loc, pt, hm, ltp, stp, bc, hc, avi).

Activated by its `tick` input (a timer of the module's period), it publishes one message per
activation into a block it borrows from shared memory, and keeps the newest message of every
other input. It stops after WALKER_SECONDS (default 10) of activations. AVI also measures the
latency of every message it receives, prints the paper's Table I figures, and, if WALKER_RESULTS
names a file, writes every sample there.
"""

import argparse
import os
from pathlib import Path

from nerve import Node
from workload import Latencies, Module, activations, message_size, read_message, write_message


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("module")
    args = parser.parse_args()
    module = Module(args.module)
    output = module.spec.output
    todo = activations(module.name, float(os.environ.get("WALKER_SECONDS", "10")))
    latencies = Latencies() if module.name == "avi" else None

    node = Node()
    for event in node:
        if event["type"] == "STOP":
            break
        if event["type"] != "INPUT":
            continue
        if event["id"] == "tick":
            if latencies is not None and module.activated == 0:
                latencies.begin()
            body = module.activate()
            with node.send_output_raw(output, message_size(output)) as sample:
                write_message(sample, module.activated, body)
            if module.activated == todo:
                break
            continue
        stamp, seq, body = read_message(event["id"], event["value"].to_numpy(zero_copy_only=True))
        if latencies is not None:
            latencies.add(event["id"], stamp, seq)
        module.receive(event["id"], body)

    print(f"{module.name}: {module.activated} activations")
    if latencies is not None:
        print(latencies.summary())
        if results := os.environ.get("WALKER_RESULTS"):
            latencies.save(Path(results))


if __name__ == "__main__":
    main()

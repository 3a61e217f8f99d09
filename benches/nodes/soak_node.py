"""A node of the soak test (benches/soak.py): a source, a relay or a sink, checking every message.

    soak_node.py source REPORT     # on each timer tick, one message of SOAK_SIZE bytes per output
    soak_node.py relay REPORT      # checks each input message, sends one small message per output
    soak_node.py sink REPORT       # checks each input message

Every message carries its output's sequence number ``n`` (0, 1, 2, ...) in its metadata
(``{"seq": n}``) and, as a little-endian uint64, in its first and last 8 bytes; every other byte
is ``n % 256``, so that each message touches all of its shared memory, as a real image would.
A reader checks the stamps and the middle byte against the metadata, and the metadata against
the previous message of the same input, so a lost, repeated, reordered or overwritten message
is counted, never silently absorbed.

With SOAK_STALL_AT and SOAK_STALL_S, a reader stalls once, SOAK_STALL_AT seconds after its
first message, for SOAK_STALL_S seconds while it holds one message of each of its inputs: its
queues fill up, and each output it reads has as many blocks in use as it can ever have (its
queue's worth, the one the reader holds, the one its producer is writing). The soak wants
every block pool at its largest before it starts comparing /dev/shm.

A source sends for SOAK_SECONDS seconds from its first tick, then leaves its loop: its outputs
close, and every reader downstream drains its queue and ends once all of its inputs are closed.
The run therefore ends by itself and every message sent is accounted for (Ctrl-C would cut
queues short). On exit, every node writes the JSON file REPORT::

    {"node": id, "role": ..., "stopped": bool, "errors": n,
     "first_tick": t, "stop_tick": t,          # sources: CLOCK_MONOTONIC seconds
     "outputs": {output: {"sent": n}},
     "inputs": {input: {"source": "node/output", "received": n, "gaps": n, "missing": n,
                        "out_of_order": n, "corrupt": n, "closed": bool, "last_seq": n}}}
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from nerve import Node

#: Timer inputs tick the source; they carry no sequence number to check.
TIMER_PREFIXES = ("timer/", "dora/timer/")

#: Payloads at least this large are written straight into the shared block (no copy).
LOAN_FROM = 64 * 1024


@dataclass
class InputStats:
    """What one input received, and what was wrong with it."""

    source: str
    received: int = 0
    gaps: int = 0  # times a sequence number was skipped
    missing: int = 0  # sequence numbers skipped, in all
    out_of_order: int = 0  # a sequence number not above the previous one (repeat or reorder)
    corrupt: int = 0  # data whose stamps disagree with the metadata, or too short to hold them
    closed: bool = False
    last_seq: int = -1

    def check(self, value: Any, metadata: dict[str, Any]) -> None:
        """Counts one message: its stamps against its metadata, its seq against the previous one."""
        self.received += 1
        seq = int(metadata.get("seq", -1))
        # A zero-copy view: only the 16 stamped bytes are read, whatever the message size.
        data = value.to_numpy(zero_copy_only=True)
        if data.dtype != np.uint8 or data.size < 17:
            self.corrupt += 1
        else:
            head = int(data[:8].view("<u8")[0])
            tail = int(data[-8:].view("<u8")[0])
            if head != seq or tail != seq or int(data[data.size // 2]) != seq % 256:
                self.corrupt += 1
        if seq == self.last_seq + 1:
            self.last_seq = seq
        elif seq > self.last_seq + 1:
            self.gaps += 1
            self.missing += seq - self.last_seq - 1
            self.last_seq = seq
        else:
            self.out_of_order += 1


class Outputs:
    """This node's outputs, each with its own continuous sequence number."""

    def __init__(self, node: Node, ids: list[str], size: int) -> None:
        self.node = node
        self.size = size
        self.sent = dict.fromkeys(ids, 0)
        # Copied into shared memory by send_output; the stamps are rewritten in place each time.
        self.buffer = np.zeros(size, dtype=np.uint8)
        self.loan = size >= LOAN_FROM

    def send_all(self) -> None:
        """One message on every output."""
        for output, seq in self.sent.items():
            if self.loan:
                with self.node.send_output_raw(output, self.size, {"seq": seq}) as sample:
                    # A Sample is a writable buffer; its type stub does not declare __buffer__.
                    view = np.frombuffer(sample, dtype=np.uint8)  # type: ignore[call-overload]
                    fill(view, seq)
                    del view  # no view may outlive the loan
            else:
                fill(self.buffer, seq)
                self.node.send_output(output, self.buffer, {"seq": seq})
            self.sent[output] = seq + 1


def fill(buffer: np.ndarray, seq: int) -> None:
    """Writes ``seq`` into the first and the last 8 bytes, and ``seq % 256`` everywhere else."""
    buffer.fill(seq % 256)
    buffer[:8].view("<u8")[0] = seq
    buffer[-8:].view("<u8")[0] = seq


def input_sources(config: dict[str, Any]) -> dict[str, str]:
    """Input id → its source (``node/output`` or a timer), from this node's dataflow entry."""
    sources = {}
    for input_id, spec in (config.get("inputs") or {}).items():
        sources[input_id] = spec if isinstance(spec, str) else str(spec.get("source", ""))
    return sources


def output_ids(config: dict[str, Any]) -> list[str]:
    """This node's output ids, from its dataflow entry (short or long form)."""
    return [o if isinstance(o, str) else str(o["id"]) for o in config.get("outputs") or []]


def run(role: str, report: str) -> None:
    """Runs the node until its role says it is done, then writes its report."""
    size = int(os.environ.get("SOAK_SIZE", "64"))
    seconds = float(os.environ.get("SOAK_SECONDS", "10"))
    stall_at = float(os.environ.get("SOAK_STALL_AT", "-1"))
    stall_s = float(os.environ.get("SOAK_STALL_S", "0"))
    first_input: float | None = None
    held: dict[str, Any] = {}  # during the stall: one received value per input
    node = Node()
    config = node.node_config()
    sources = input_sources(config)
    outputs = Outputs(node, output_ids(config), size)
    inputs = {i: InputStats(s) for i, s in sources.items() if not s.startswith(TIMER_PREFIXES)}
    stopped = False
    errors = 0
    first_tick: float | None = None
    stop_tick: float | None = None
    for event in node:
        kind = event["type"]
        if kind == "INPUT":
            input_id = event["id"]
            if input_id in inputs:
                inputs[input_id].check(event["value"], event["metadata"])
                if role == "relay":
                    outputs.send_all()
                now = time.monotonic()
                first_input = now if first_input is None else first_input
                if stall_s > 0 and stall_at >= 0 and now - first_input >= stall_at:
                    held[input_id] = event["value"]
                    if all(i in held or s.closed for i, s in inputs.items()):
                        time.sleep(stall_s)
                        held.clear()
                        stall_s = 0
            elif role == "source":
                now = time.monotonic()
                first_tick = now if first_tick is None else first_tick
                if now - first_tick >= seconds:
                    stop_tick = now
                    break
                outputs.send_all()
            del event  # hands the shared block back to its producer now, not at the next event
        elif kind == "INPUT_CLOSED":
            if event["id"] in inputs:
                inputs[event["id"]].closed = True
        elif kind == "STOP":
            stopped = True
            break
        elif kind == "ERROR":
            errors += 1
            print(f"error event: {event.get('error')}", file=sys.stderr, flush=True)
    result = {
        "node": node.id,
        "role": role,
        "stopped": stopped,
        "errors": errors,
        "first_tick": first_tick,
        "stop_tick": stop_tick,
        "outputs": {o: {"sent": n} for o, n in outputs.sent.items()},
        "inputs": {i: asdict(s) for i, s in inputs.items()},
    }
    tmp = report + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=1)
    os.replace(tmp, report)  # the runner never reads half a report
    if outputs.sent:
        # Readers learn now that nothing more comes, rather than when this process is reaped.
        node.close_outputs(list(outputs.sent))
    received = {i: s.received for i, s in inputs.items()}
    print(f"{role} done: sent {outputs.sent}, received {received}", flush=True)


def main() -> None:
    """Entry point: ``soak_node.py ROLE REPORT``."""
    if len(sys.argv) != 3 or sys.argv[1] not in ("source", "relay", "sink"):
        raise SystemExit(__doc__)
    run(sys.argv[1], sys.argv[2])


if __name__ == "__main__":
    main()

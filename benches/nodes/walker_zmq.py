"""One module of the walker over ZeroMQ (pyzmq), for the benchmark suite's `walker` scenario:

    walker_zmq.py MODULE --mapping M --board-addresses IP1,IP2 --ipc-dir DIR --start NS --seconds S
                  [--results FILE]

The same module as examples/walker/module.py runs as a nerve node (examples/walker/workload.py),
sending the same bytes, run by the peers' venv python on its board's host. It binds one XPUB
socket, on a Unix socket in DIR (its host's own runtime folder: the modules of its board connect
there) and on TCP at its board's address (the other board's connect there), and reads each input
with a SUB socket of its own, connected to the input's publisher on the same board by ipc, else
by TCP.

ZeroMQ drops what a publisher sends before a subscription has reached it (the slow joiner): so
every module waits until each reader of its output has subscribed, and all start at the same
CLOCK_MONOTONIC time NS, which the harness chose late enough for that (a module not ready by
then fails). Activation k falls at NS + k * period; in between, input messages are handled as
they arrive. AVI times every message it receives with workload.Latencies exactly as module.py
does (the first second of activations left out), prints the same summary and writes every sample to
FILE. Like nerve's `realtime:` for module.py, the process runs with SCHED_FIFO at the module's
priority and locks its memory (root).
"""

import argparse
import ctypes
import math
import os
import sys
import time
from pathlib import Path

import zmq

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "walker"))
from workload import (
    MODULES,
    PUBLISHERS,
    Latencies,
    Module,
    activations,
    board_of,
    message_size,
    read_message,
    write_message,
)

#: Module i publishes on TCP port PORT + i of its board's address.
PORT = 7600
MCL_CURRENT, MCL_FUTURE = 1, 2
#: How long a module's socket keeps its last messages for a reader that has not taken them, in ms.
LINGER_MS = 2000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("module")
    parser.add_argument("--mapping", type=int, required=True)
    parser.add_argument("--board-addresses", required=True, help="board 1's address, board 2's")
    parser.add_argument("--ipc-dir", required=True)
    parser.add_argument("--start", type=int, required=True, help="CLOCK_MONOTONIC ns of the first activation")
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    module = Module(args.module)
    latencies = Latencies() if module.name == "avi" else None
    realtime(module.spec.priority)
    ctx = zmq.Context()
    output = publisher(ctx, args)
    inputs = {subscriber(ctx, topic, args): topic for topic in module.spec.inputs}
    wait_for_readers(output, args)
    run(module, output, inputs, latencies, args)

    print(f"{module.name}: {module.activated} activations")
    if latencies is not None:
        print(latencies.summary())
        if args.results:
            latencies.save(args.results)
    ctx.destroy(linger=LINGER_MS)


def realtime(priority: int) -> None:
    """What nerve's `realtime: {priority, lock_memory: true}` gives module.py: SCHED_FIFO at
    `priority`, inherited by the threads ZeroMQ starts later, and every page locked, now and
    from now on."""
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mlockall(MCL_CURRENT | MCL_FUTURE) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mlockall: {os.strerror(errno)}")


def endpoints(name: str, args: argparse.Namespace) -> tuple[str, str]:
    """Module `name`'s endpoints: for its own board's modules (ipc) and for the other board's (TCP)."""
    address = args.board_addresses.split(",")[board_of(name, args.mapping) - 1]
    return f"ipc://{args.ipc_dir}/walker-{name}.ipc", f"tcp://{address}:{PORT + list(MODULES).index(name)}"


def publisher(ctx: zmq.Context, args: argparse.Namespace) -> zmq.Socket:
    """The module's output, bound to both its endpoints; an XPUB, which hands us each reader's
    subscription."""
    sock = ctx.socket(zmq.XPUB)
    sock.setsockopt(zmq.XPUB_VERBOSE, 1)  # every reader's subscription, not only the first
    for endpoint in endpoints(args.module, args):
        sock.bind(endpoint)
    return sock


def subscriber(ctx: zmq.Context, topic: str, args: argparse.Namespace) -> zmq.Socket:
    """A SUB socket reading `topic` from its publisher: by ipc on the same board, else by TCP."""
    name = PUBLISHERS[topic]
    local, remote = endpoints(name, args)
    sock = ctx.socket(zmq.SUB)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SUBSCRIBE, b"")
    sock.connect(local if board_of(name, args.mapping) == board_of(args.module, args.mapping) else remote)
    return sock


def wait_for_readers(output: zmq.Socket, args: argparse.Namespace) -> None:
    """Returns once every module reading this one's output has subscribed, before the start;
    fails if that is not so."""
    readers = [name for name, spec in MODULES.items() if MODULES[args.module].output in spec.inputs]
    seen = 0
    while seen < len(readers):
        left_ms = (args.start - time.monotonic_ns()) / 1e6
        if left_ms <= 0 or not output.poll(math.ceil(left_ms)):
            raise SystemExit(f"{args.module}: {seen} of {len(readers)} readers subscribed by the start")
        if output.recv()[:1] == b"\x01":
            seen += 1
    if time.monotonic_ns() > args.start:
        raise SystemExit(f"{args.module}: ready only after the start")


def run(
    module: Module,
    output: zmq.Socket,
    inputs: dict[zmq.Socket, str],
    latencies: Latencies | None,
    args: argparse.Namespace,
) -> None:
    """The module's activations, each at its deadline from the start, publishing one message;
    until then, the input messages as they come."""
    poller = zmq.Poller()
    for sock in inputs:
        poller.register(sock, zmq.POLLIN)
    period_ns = module.spec.period_ms * 1_000_000
    topic = module.spec.output
    for k in range(activations(module.name, args.seconds)):
        deadline = args.start + k * period_ns
        while (left_ns := deadline - time.monotonic_ns()) > 0:
            if not inputs:  # a poller of no socket returns at once
                time.sleep(left_ns / 1e9)
                continue
            for sock, _ in poller.poll(math.ceil(left_ns / 1e6)):
                receive(module, sock, inputs[sock], latencies)
        if latencies is not None and k == 0:
            latencies.begin()
        body = module.activate()
        message = bytearray(message_size(topic))
        write_message(message, module.activated, body)
        output.send(message)


def receive(module: Module, sock: zmq.Socket, topic: str, latencies: Latencies | None) -> None:
    """Every message waiting on `sock`, read in place, timed by AVI, kept as the newest."""
    while True:
        try:
            frame = sock.recv(zmq.NOBLOCK, copy=False)
        except zmq.Again:
            return
        stamp, seq, body = read_message(topic, frame.buffer)
        if latencies is not None:
            latencies.add(topic, stamp, seq)
        module.receive(topic, body)


if __name__ == "__main__":
    main()

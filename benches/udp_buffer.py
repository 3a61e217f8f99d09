"""How many loopback UDP datagrams of each size a receive socket of the system's default buffer
size holds before the kernel drops the rest: the figures behind the ROS 2 bridge's pacing
(third_party/README.md).

    python -m benches.udp_buffer

Each size is sent, 400 times, to a socket on 127.0.0.1 that reads nothing until the sending
is over; then what it holds is counted. The kernel charges each datagram more than its bytes
against the buffer (``net.core.rmem_default``): the buffer divided by the count is that charge.
"""

from __future__ import annotations

import socket
from pathlib import Path

SIZES = (1400, 8000, 16000, 32000, 48000, 65000, 65400)  # UDP payload bytes
SENT = 400


def held(size: int) -> int:
    """How many datagrams of `size` bytes an unread socket holds."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as reader:
        reader.bind(("127.0.0.1", 0))
        reader.setblocking(False)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
            for _ in range(SENT):
                sender.sendto(bytes(size), reader.getsockname())
        count = 0
        while True:
            try:
                reader.recv(size)
            except BlockingIOError:
                return count
            count += 1


def main() -> None:
    buffer = int(Path("/proc/sys/net/core/rmem_default").read_text())
    print(f"net.core.rmem_default = {buffer} bytes\n")
    print("| datagram | held | bytes held | charged per datagram |\n|---:|---:|---:|---:|")
    for size in SIZES:
        count = held(size)
        charge = f"{buffer // count:,}" if count else "-"
        print(f"| {size:,} B | {count} | {count * size:,} | {charge} |")


if __name__ == "__main__":
    main()

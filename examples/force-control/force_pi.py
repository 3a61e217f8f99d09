"""The force controller, apart from what carries its messages: controller.py runs it as a nerve
node, benches/nodes/controller_zmq.py over ZeroMQ for the benchmark's comparison.

It is the controller of ORC's experiment in one dimension: the force wanted is fed forward and a
PI term on the measured force rejects what the feed-forward does not know — here the tool's
weight, which alone would leave the contact 9.8 N off.
"""

from __future__ import annotations

import struct
from collections import deque

#: One message, either way (loop.hpp's Frame): a reading (seq, when it was sent in ns, force in
#: N) or a command (the seq of the reading it answers, that reading's stamp, force to apply).
FRAME = struct.Struct("<qqd")
#: The seq of the robot's readings before its loop starts (it waits for a first answer), and of
#: its last reading.
PRIMING, END = -1, -2

SETPOINT_N = 20.0
KP = 0.5  # N of command per N of error
KI = 30.0  # N of command per N·s of error
#: The success check: the mean force of the last readings is within this of the setpoint.
TOLERANCE_N = 0.5
LAST_READINGS = 200  # 0.2 s at 1 kHz


class ForceController:
    """Answers each reading with a command; remembers the last readings for the check."""

    def __init__(self, setpoint_n: float = SETPOINT_N, kp: float = KP, ki: float = KI) -> None:
        self.setpoint_n, self.kp, self.ki = setpoint_n, kp, ki
        self.integral = 0.0  # of the error, in N·s
        self.last_stamp_ns: int | None = None
        self.last_forces: deque[float] = deque(maxlen=LAST_READINGS)
        self.answered = 0

    def answer(self, reading) -> bytes | None:
        """The command answering ``reading`` (a buffer holding a FRAME), which carries its seq and
        stamp back; None for the robot's END. The integral runs on the readings' stamps, so a
        reading the keep-latest queue dropped counts as the time it lasted."""
        seq, stamp_ns, force_n = FRAME.unpack_from(reading)
        if seq == END:
            return None
        error = self.setpoint_n - force_n
        if seq == PRIMING:  # the robot holds still until the loop starts: nothing to integrate
            return FRAME.pack(seq, stamp_ns, self.setpoint_n)
        if self.last_stamp_ns is not None:
            self.integral += error * (stamp_ns - self.last_stamp_ns) / 1e9
        self.last_stamp_ns = stamp_ns
        self.last_forces.append(force_n)
        self.answered += 1
        return FRAME.pack(seq, stamp_ns, self.setpoint_n + self.kp * error + self.ki * self.integral)

    def verdict(self) -> str:
        """What the controller achieved, as a line to print; SystemExit if the force did not end
        at the setpoint."""
        if not self.last_forces:
            raise SystemExit("controller: no reading of the loop came")
        mean_n = sum(self.last_forces) / len(self.last_forces)
        said = (
            f"controller: {self.answered} readings answered; force {mean_n:.2f} N over the last "
            f"{len(self.last_forces)} (setpoint {self.setpoint_n:g} N ± {TOLERANCE_N:g})"
        )
        if abs(mean_n - self.setpoint_n) > TOLERANCE_N:
            raise SystemExit(f"{said}: off the setpoint")
        return said

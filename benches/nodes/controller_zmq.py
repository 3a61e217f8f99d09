"""The force controller of examples/force-control over ZeroMQ (pyzmq), for the control-loop
scenario's comparison: the example's own control law (force_pi.py), only the transport differs.

    controller_zmq.py     (in the folder where benches/control-loop/robot_zmq.cpp runs)

It connects a SUB socket to the robot's ipc://readings.ipc, keeping only the newest reading
(``CONFLATE``, as the nerve controller's keep-latest input), and a PUB socket to its
ipc://commands.ipc; it answers every reading it gets until the robot's END, then prints the
example's verdict (and exits 1 if the force did not end at the setpoint). Run by the peers'
venv python, which has pyzmq.
"""

import sys
from pathlib import Path

import zmq

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "force-control"))
from force_pi import ForceController


def main() -> None:
    context = zmq.Context()
    try:
        readings = context.socket(zmq.SUB)
        readings.setsockopt(zmq.CONFLATE, 1)  # before connecting, or it does not apply
        readings.setsockopt(zmq.SUBSCRIBE, b"")
        readings.connect("ipc://readings.ipc")
        commands = context.socket(zmq.PUB)
        commands.connect("ipc://commands.ipc")
        control = ForceController()
        while (command := control.answer(readings.recv(copy=False).buffer)) is not None:
            commands.send(command)
    finally:
        context.destroy(linger=0)  # the robot has ended: nothing left to deliver
    print(control.verdict(), flush=True)


if __name__ == "__main__":
    main()

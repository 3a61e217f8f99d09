"""The force controller as a nerve node: it answers every reading of the robot's `force`
output with a command on its own `command` output (force_pi.py has the control law)."""

from force_pi import ForceController
from nerve import Node


def main() -> None:
    node = Node()
    control = ForceController()
    for event in node:
        if event["type"] == "STOP":
            return
        if event["type"] != "INPUT":
            continue
        # The reading's bytes, read in place in the robot's shared memory.
        command = control.answer(event["value"].buffers()[1])
        if command is None:
            break
        node.send_output("command", command)
    print(control.verdict())


if __name__ == "__main__":
    main()

"""Chooses the object to pick: the one whose label reads as the user's `PICK`.

It answers every camera frame with a `Target`, the controller waiting for it: not chosen yet,
or the chosen tag. Once chosen, the choice stands (the arm soon hides the tags from the camera).
Two objects with the wanted label: the nearer to the arm's base. No such object once every tag
in view has been read, for `GIVE_UP` frames in a row: it says what it read, and fails the run.
"""

import math
import sys

import nerve
import scene
from nerve.msg import arm_msgs

GIVE_UP = 10  # frames (2 s of simulated time) with every tag read and none the wanted one


def distance_to_arm(tag) -> float:
    position = tag.pose.position
    return math.hypot(position.x - scene.ARM_BASE[0], position.y - scene.ARM_BASE[1])


class Planner:
    def __init__(self, wanted: str):
        self.wanted = wanted
        self.chosen = None
        self.misses = 0

    def choose(self, tags: list) -> bool:
        """Takes one frame's labelled tags; whether the target is chosen. Raises SystemExit once
        it is clear that no object carries the wanted label."""
        if self.chosen is not None:
            return True
        matches = [tag for tag in tags if tag.label == self.wanted]
        if matches:
            self.chosen = min(matches, key=distance_to_arm)
            print(f"planner: {self.wanted} is tag {self.chosen.id}", flush=True)
            return True
        all_read = bool(tags) and all(tag.label for tag in tags)
        self.misses = self.misses + 1 if all_read else 0
        if self.misses >= GIVE_UP:
            labels = ", ".join(sorted(tag.label for tag in tags))
            raise SystemExit(f"planner: no object is labelled {self.wanted}; the labels read are {labels}")
        return False


def main() -> int:
    planner = Planner(scene.pick())
    node = nerve.Node()
    for event in node:
        if event["type"] == "STOP":
            break
        if event["type"] != "INPUT":
            continue
        objects = arm_msgs.TagArray.from_arrow(event["value"])
        chosen = planner.choose(list(objects.tags))
        target = arm_msgs.Target(header=objects.header, wanted=planner.wanted, chosen=chosen, tag=planner.chosen or {})
        node.send_output("target", target)
    return 0


if __name__ == "__main__":
    sys.exit(main())

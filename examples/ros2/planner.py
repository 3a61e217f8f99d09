"""Drives the robot towards x = 1 m: one velocity command per pose it reports."""

from nerve import Node
from nerve.msg import geometry_msgs

GOAL_X = 1.0

node = Node()
for event in node:
    if event["type"] == "INPUT":
        pose = geometry_msgs.PoseStamped.from_arrow(event["value"])
        speed = max(-0.5, min(0.5, GOAL_X - pose.pose.position.x))
        node.send_output("cmd_vel", geometry_msgs.Twist(linear={"x": speed}))
    elif event["type"] == "STOP":
        break

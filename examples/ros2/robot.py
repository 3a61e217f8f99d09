"""A ROS 2 robot (rclpy): reports its pose at 20 Hz on /robot/pose and moves as /robot/cmd_vel
says; exits once it has followed COMMANDS commands."""

import rclpy
from geometry_msgs.msg import PoseStamped, Twist
from rclpy.qos import QoSProfile, ReliabilityPolicy

COMMANDS = 20
PERIOD = 0.05

rclpy.init()
node = rclpy.create_node("robot")
qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
pose = PoseStamped()
pose.header.frame_id = "map"
followed = 0


def on_command(cmd: Twist) -> None:
    global followed
    pose.pose.position.x += cmd.linear.x * PERIOD
    followed += 1


node.create_subscription(Twist, "/robot/cmd_vel", on_command, qos)
report = node.create_publisher(PoseStamped, "/robot/pose", qos)


def tick() -> None:
    pose.header.stamp = node.get_clock().now().to_msg()
    report.publish(pose)


node.create_timer(PERIOD, tick)
while followed < COMMANDS:
    rclpy.spin_once(node)
print(f"robot: followed {followed} commands from nerve, now at x = {pose.pose.position.x:.3f} m", flush=True)

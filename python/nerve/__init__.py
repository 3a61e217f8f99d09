"""nerve: robot dataflows of Python and Rust nodes over zero-copy shared memory.

A node is a process started by ``nerve run dataflow.yml``::

    from nerve import Node

    node = Node()
    for event in node:
        if event["type"] == "INPUT":
            image = event["value"].to_numpy(zero_copy_only=True)  # a view of shared memory
            node.send_output("mask", image > 128)
        elif event["type"] == "STOP":
            break

Any process can also publish and subscribe by topic name, with no dataflow::

    from nerve import Publisher, Subscriber

    poses = Subscriber("robot/pose", keep_latest=True)
    Publisher("robot/pose").send(numpy.array([1.0, 2.0, 0.5]))

A node's parameters are declared in the dataflow (``params:``) or by its code, and can be read
and set while it runs, from the code and with ``nerve param``::

    node.on_param_change(lambda key, value: "must be >= 0" if key == "speed" and value < 0 else None)
    speed = node.get_param("speed")

and serve or call a service (a request answered by one reply)::

    from nerve import Client, Service

    server = Service("add", lambda request: request["value"].to_numpy().sum(keepdims=True))
    reply = Client("add").call(numpy.array([1, 2]), timeout=1.0)

and publish where frames are, then ask where one frame is in another::

    from nerve import StaticTransformBroadcaster, TransformBroadcaster, TransformBuffer

    StaticTransformBroadcaster().send("base", "camera", [0.2, 0.0, 0.5], [0, 0, 0, 1])
    TransformBroadcaster().send("world", "base", [x, y, 0.0], [0, 0, 0, 1])
    camera = TransformBuffer().lookup("world", "camera", timeout=1.0)
and serve or send an action's goals (long-running, with feedback, a result and cancel)::

    from nerve import ActionClient, ActionServer

    def execute(goal):
        for i in range(10):
            if goal.wait_cancel(0.1):
                break
            goal.publish_feedback(numpy.array([i]))
        return numpy.array([i])

    server = ActionServer("count", execute)
    handle = ActionClient("count").send_goal(numpy.array([10]))
    for feedback in handle:
        print(feedback["value"])
    print(handle.status, handle.result()["value"])
"""

from nerve._nerve import (
    ActionClient,
    ActionError,
    ActionServer,
    Client,
    ConnectError,
    GoalHandle,
    GoalRejectedError,
    NerveError,
    Node,
    ParameterError,
    Publisher,
    Sample,
    SampleBuffer,
    SendError,
    ServerGoal,
    Service,
    ServiceError,
    StampedTransform,
    StaticTransformBroadcaster,
    TransformBroadcaster,
    TransformBuffer,
    TransformError,
    VersionMismatchError,
    __version__,
    monotonic_ns,
)
from nerve._topic import Message, Subscriber
from nerve.operators import DoraStatus

__all__ = [
    "ActionClient",
    "ActionError",
    "ActionServer",
    "Client",
    "ConnectError",
    "DoraStatus",
    "GoalHandle",
    "GoalRejectedError",
    "Message",
    "NerveError",
    "Node",
    "ParameterError",
    "Publisher",
    "Sample",
    "SampleBuffer",
    "SendError",
    "ServerGoal",
    "Service",
    "ServiceError",
    "StampedTransform",
    "StaticTransformBroadcaster",
    "Subscriber",
    "TransformBroadcaster",
    "TransformBuffer",
    "TransformError",
    "VersionMismatchError",
    "__version__",
    "monotonic_ns",
]

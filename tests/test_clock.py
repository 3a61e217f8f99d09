"""Every node reads time through nerve: the wall clock by default, the run's simulated time under
``nerve run --sim-time``, and timers follow it."""

S = 1_000_000_000  # one second, in nanoseconds

SIM_DRIVER = """
    import os

    from nerve import Node

    S = 1_000_000_000
    node = Node()
    assert node.sim_time
    print("start", node.now_ns(), flush=True)
    # A reporter whose code makes its timer says when it has (an ack) before time may move.
    if os.environ.get("WAIT_READY"):
        assert node.next(timeout=30)["id"] == "ack"
    # 3000 s of simulated time in 10 s steps, as fast as it goes (some thousand times the wall
    # clock), except that on each of the reporter's first 20 ticks (every 100 s) time stands
    # still until the reporter answers. So the reporter reads the very time each tick came at,
    # whatever the machine's load; and a tick that waited for 100 s of the wall clock would
    # come too late, after the 30 s this waits.
    for step in range(1, 301):
        node.set_sim_time(step * 10 * S)
        if step % 10 == 0 and step <= 200:
            event = node.next(timeout=30)
            if not (event and event["type"] == "INPUT" and event["id"] == "ack"):
                print("no tick at", node.now_ns(), event, flush=True)
                break
    print("done", node.now_ns(), flush=True)
"""

TICK_REPORTER = """
    from nerve import Node

    node = Node()
    ticks = []
    for event in node:
        if event["type"] == "INPUT" and event["id"] == "tick":
            ticks.append(node.now_ns())
            node.send_output("ack", b"")
            if len(ticks) == 20:
                break
        elif event["type"] == "STOP":
            break
    print("ticks", " ".join(str(t) for t in ticks), flush=True)
"""


def sim_dataflow(dataflows):
    return dataflows.write(
        """
        nodes:
          - id: sim
            path: sim.py
            inputs:
              ack: reporter/ack
          - id: reporter
            path: reporter.py
            inputs:
              tick: dora/timer/millis/100000
            outputs: [ack]
        """,
        {"sim.py": SIM_DRIVER, "reporter.py": TICK_REPORTER},
    )


def test_timers_follow_simulated_time(dataflows):
    run = dataflows.run(sim_dataflow(dataflows), "--sim-time")
    assert run.returncode == 0, run.output
    assert run.node_lines("sim")[0] == "start 0", run.output
    assert run.node_lines("sim")[1] == f"done {3000 * S}", run.output
    ticks = [int(t) for t in run.node_lines("reporter")[0].split()[1:]]
    assert len(ticks) == 20, run.output
    # Tick i comes once simulated time has reached i * 100 s, and before tick i + 1 is due:
    # none early, none skipped, however the simulated time runs against the wall clock.
    for i, t in enumerate(ticks, start=1):
        assert i * 100 * S <= t < (i + 1) * 100 * S, (i, ticks)


CODE_TIMER_REPORTER = """
    from nerve import Node

    node = Node()
    ticks = []

    def tick():
        ticks.append(node.now_ns())
        node.send_output("ack", b"")

    node.create_timer(100.0, tick)
    node.send_output("ack", b"")  # the timer is made: the driver may move the time
    while len(ticks) < 20:
        # The callbacks run inside the wait; the short timeout comes back to look at `ticks`.
        event = node.next(timeout=0.05)
        if event is not None:
            print("event", event["type"], flush=True)  # ticks are not events
            if event["type"] == "STOP":
                break
    print("ticks", " ".join(str(t) for t in ticks), flush=True)
"""


def test_timers_made_in_code_follow_simulated_time(dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: sim
            path: sim.py
            env: {WAIT_READY: "1"}
            inputs:
              ack: reporter/ack
          - id: reporter
            path: reporter.py
            outputs: [ack]
        """,
        {"sim.py": SIM_DRIVER, "reporter.py": CODE_TIMER_REPORTER},
    )
    run = dataflows.run(path, "--sim-time")
    assert run.returncode == 0, run.output
    assert run.node_lines("sim")[1] == f"done {3000 * S}", run.output
    [line] = run.node_lines("reporter")
    ticks = [int(t) for t in line.split()[1:]]
    # A tick may come in the wait that follows the twentieth, once the driver went on.
    assert len(ticks) >= 20, run.output
    # As a dataflow timer's (test_timers_follow_simulated_time): none early, none skipped.
    for i, t in enumerate(ticks[:20], start=1):
        assert i * 100 * S <= t < (i + 1) * 100 * S, (i, ticks)


def test_real_time_is_the_wall_clock_and_cannot_be_set(dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: probe
            path: probe.py
        """,
        {
            "probe.py": """
                import time
                from nerve import NerveError, Node

                node = Node()
                assert not node.sim_time
                before, now, after = time.time_ns(), node.now_ns(), time.time_ns()
                assert before <= now <= after, (before, now, after)
                assert abs(node.now() - time.time()) < 1.0
                try:
                    node.set_sim_time(5)
                except NerveError as e:
                    print("refused:", e, flush=True)
            """
        },
    )
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    [line] = run.node_lines("probe")
    assert line.startswith("refused: this run keeps real time") and "--sim-time" in line, line


def test_transforms_are_stamped_with_simulated_time(dataflows):
    path = dataflows.write(
        """
        nodes:
          - id: sim
            path: sim.py
        """,
        {
            "sim.py": """
                from nerve import Node, TransformBroadcaster, TransformBuffer

                node = Node()
                buffer = TransformBuffer()
                node.set_sim_time(5_000_000_000)
                TransformBroadcaster().send("world", "base", [1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0])
                print("stamp", buffer.lookup("world", "base", timeout=10.0).stamp, flush=True)
            """
        },
    )
    run = dataflows.run(path, "--sim-time")
    assert run.returncode == 0, run.output
    assert run.node_lines("sim") == ["stamp 5000000000"], run.output

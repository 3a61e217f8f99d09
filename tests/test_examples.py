"""Every example runs to completion, as the README says."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from conftest import REPO, ZENOH_ENV, free_port, nerve_cmd, ros_start, zenoh_config

EXAMPLES = sorted(p.parent.name for p in (REPO / "examples").glob("*/dataflow.yml"))


@pytest.mark.timeout(1200)  # builds the example's Rust nodes (a 900 s bound of its own)
@pytest.mark.parametrize("example", EXAMPLES)
def test_example_runs(example, tmp_path):
    dataflow = REPO / "examples" / example / "dataflow.yml"
    result = subprocess.run(
        nerve_cmd("run", str(dataflow), "--build", "--log-dir", str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "dataflow finished" in result.stderr


def test_topic_example_talker_and_listener():
    folder = REPO / "examples" / "topics"
    listener = subprocess.Popen(
        [sys.executable, str(folder / "listener.py")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    talker = subprocess.run([sys.executable, str(folder / "talker.py")], capture_output=True, text=True, timeout=120)
    assert talker.returncode == 0, talker.stderr
    out, err = listener.communicate(timeout=60)
    assert listener.returncode == 0, err
    lines = out.splitlines()
    assert len(lines) == 50 and lines[-1].startswith("pose x=4.9"), out


def test_record_replay_example(tmp_path):
    """The example's recording replays into the same dataflow with the same monitor summary."""
    dataflow = REPO / "examples" / "record-replay" / "dataflow.yml"
    recording = tmp_path / "imu.mcap"
    summaries = []
    for command in (("record", str(recording)), ("replay", str(recording))):
        result = subprocess.run(
            nerve_cmd(*command, str(dataflow), "--log-dir", str(tmp_path / command[0])),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        summaries += [line for line in result.stdout.splitlines() if "readings, checksum" in line]
    assert len(summaries) == 2 and summaries[0] == summaries[1], summaries
    assert "monitor: 40 readings, checksum " in summaries[0], summaries


@pytest.mark.timeout(900)  # the first user of `action_counter` builds it
def test_action_example_rust_server_and_python_client(tmp_path, action_counter):
    """The README's steps, with Zenoh endpoints on loopback instead of multicast."""
    folder = REPO / "examples" / "actions"
    port = free_port()
    server = subprocess.Popen(
        [str(action_counter), "serve"],
        env={**os.environ, ZENOH_ENV: str(zenoh_config(tmp_path, "server", port))},
        stdout=subprocess.PIPE,
        text=True,
    )
    env = {**os.environ, ZENOH_ENV: str(zenoh_config(tmp_path, "client", port))}

    def client(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, str(folder / "client.py"), *args]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)

    try:
        assert server.stdout and server.stdout.readline().strip() == "serving count"
        done = client()
        assert done.returncode == 0, done.stdout + done.stderr
        lines = done.stdout.splitlines()
        assert lines[1:] == [f"feedback {i} of 10" for i in range(1, 11)] + ["succeeded at 10"], done.stdout
        canceled = client("--n", "100", "--cancel-after", "0.5")
        assert canceled.returncode == 0, canceled.stdout + canceled.stderr
        assert "cancel taken: True" in canceled.stdout, canceled.stdout
        assert canceled.stdout.splitlines()[-1].startswith("canceled at "), canceled.stdout
        rejected = client("--n", "5000")
        assert rejected.returncode == 1 and "not 5000" in rejected.stderr, rejected.stdout + rejected.stderr
    finally:
        server.kill()
        server.wait()


def test_simulation_example_on_simulated_time(tmp_path):
    """The README's first command: the controller's timer follows the simulator's clock."""
    dataflow = REPO / "examples" / "simulation" / "dataflow.yml"
    result = subprocess.run(
        nerve_cmd("run", str(dataflow), "--sim-time", "--log-dir", str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"controller: 25 ticks over 2\.[345] s of simulated time", result.stdout), result.stdout
    assert "simulator: 3.0 s of robot time" in result.stdout, result.stdout


@pytest.mark.timeout(900)  # the first user of `service_adder` builds it
def test_service_example_python_and_rust_both_ways(service_adder):
    """The README's steps, with no Zenoh configuration: a Python client calls the Rust server,
    and the Rust client calls the Python server, each a sum and a refusal."""
    folder = REPO / "examples" / "services"
    rust_server = [str(service_adder), "serve"]
    python_server = [sys.executable, str(folder / "server.py")]
    rust_client = [str(service_adder), "call"]
    python_client = [sys.executable, str(folder / "client.py")]
    for server_cmd, client_cmd in ((rust_server, python_client), (python_server, rust_client)):
        name = f"add-{os.getpid()}-{len(server_cmd)}"
        server = subprocess.Popen([*server_cmd, name], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout and server.stdout.readline().strip() == f"serving {name}"
            ok = subprocess.run([*client_cmd, name, "1", "2", "3"], capture_output=True, text=True, timeout=60)
            assert ok.returncode == 0 and ok.stdout.strip() == "sum 6", (server_cmd, ok.stdout, ok.stderr)
            refused = subprocess.run([*client_cmd, name, "1", "-2"], capture_output=True, text=True, timeout=60)
            assert refused.returncode == 1, (server_cmd, refused.stdout, refused.stderr)
            assert "negative values are not accepted (-2)" in refused.stdout, (server_cmd, refused.stdout)
        finally:
            server.kill()
            server.wait()


def test_cpp_topics_example_robot_and_monitor(tmp_path):
    """The README's steps: both programs built with CMake against the installed package, the
    monitor started first (it waits for the robot's poses), the robot stopped by its call."""
    folder = REPO / "examples" / "cpp-topics"
    cmake_dir = subprocess.run(nerve_cmd("--cmake-dir"), capture_output=True, text=True, check=True).stdout.strip()
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(folder), "-B", str(build), f"-Dnerve_DIR={cmake_dir}"], check=True)
    subprocess.run(["cmake", "--build", str(build)], check=True)
    monitor = subprocess.Popen([str(build / "monitor")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        robot = subprocess.run([str(build / "robot")], capture_output=True, text=True, timeout=120)
        out, err = monitor.communicate(timeout=60)
    finally:
        monitor.kill()
    assert robot.returncode == 0, robot.stderr
    assert "robot: stop requested: monitor saw enough" in robot.stdout, robot.stdout
    assert monitor.returncode == 0, err
    poses = re.findall(r"monitor: pose (\d+): x=(\S+) y=(\S+)", out)
    assert len(poses) == 20, out
    seqs = [int(seq) for seq, _, _ in poses]
    assert seqs == sorted(seqs) and len(set(seqs)) == 20, seqs
    for _, x, y in poses:  # each pose lies on the unit circle the robot drives
        assert abs(float(x) ** 2 + float(y) ** 2 - 1.0) < 1e-2, (x, y)
    assert out.strip().endswith("monitor: robot answered: stopped"), out


def test_cluster_example_on_one_machine(tmp_path):
    """The example's README on one machine: `nerve up`, a second daemon, `nerve start --attach`,
    `nerve destroy`."""
    folder = REPO / "examples" / "cluster"

    def nerve(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(nerve_cmd(*args), capture_output=True, text=True, timeout=120)

    base = None
    try:
        up = nerve("up", "--machine-id", "robot")
        assert up.returncode == 0, up.stderr
        base = subprocess.Popen(nerve_cmd("daemon", "--machine-id", "base"), stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while "daemon `base`" not in nerve("check").stdout:
            assert time.monotonic() < deadline, "the base daemon did not join"
            time.sleep(0.2)
        started = nerve("start", str(folder / "dataflow.yml"), "--attach")
        assert started.returncode == 0, started.stdout + started.stderr
        assert "[lidar] lidar: sent 60 scans" in started.stdout, started.stdout
        assert "[planner] planner: 60 commands" in started.stdout, started.stdout
        assert "[wheels] wheels: " in started.stdout, started.stdout
        listed = json.loads(nerve("list", "--all", "--json").stdout)
        (run,) = [r for r in listed if r.get("coordinator")]
        assert {n["id"]: n["machine"] for n in run["nodes"]} == {"lidar": "robot", "planner": "base", "wheels": "robot"}
    finally:
        destroyed = nerve("destroy")
        if base:
            base.wait(timeout=30)
    assert destroyed.returncode == 0, destroyed.stderr
    assert nerve("check").returncode != 0


def test_ros2_example_robot_follows_the_nerve_planner(ros_host):
    """The README's steps: the rclpy robot first, then the dataflow, stopped once the robot has
    followed its commands. On a host of its own, so no DDS packet leaves the machine."""
    folder = REPO / "examples" / "ros2"
    robot = ros_start(ros_host, [sys.executable, str(folder / "robot.py")], stdout=subprocess.PIPE)
    run = ros_start(
        ros_host, nerve_cmd("run", str(folder / "bridge.yml")), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        out, _ = robot.communicate(timeout=120)
    finally:
        run.send_signal(signal.SIGINT)
        log, _ = run.communicate(timeout=60)
    assert robot.returncode == 0 and "robot: followed 20 commands from nerve" in out, out + log
    assert run.returncode == 0, log

"""`nerve record` and `nerve replay` with real dataflows, topics and processes: recordings read
back with the official `mcap` reader and pyarrow, and replayed into the same dataflow."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest
from conftest import NODES, REPO, nerve_cmd, publish_topic, unique_topic
from mcap.reader import make_reader

COUNTER_HZ = 20
DATAFLOW = f"""
nodes:
  - id: counter
    path: {NODES / "counter.py"}
    inputs:
      tick: timer/hz/{COUNTER_HZ}
    outputs: [numbers]
  - id: sink
    path: {NODES / "jsonl_sink.py"}
    inputs:
      numbers: counter/numbers
"""


def nerve(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        nerve_cmd(*args), capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
    )


def sink_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def read_recording(path: Path):
    """(summary, messages as (channel, schema, message), metadata records by name)."""
    with path.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        messages = list(reader.iter_messages())
        metadata = {m.name: dict(m.metadata) for m in reader.iter_metadata()}
    return summary, messages, metadata


def decode(data: bytes) -> tuple[list, dict]:
    table = pa.ipc.open_stream(data).read_all()
    assert table.num_rows == len(table.column("value"))
    parameters = json.loads((table.schema.metadata or {}).get(b"nerve.parameters", b"{}"))
    return table.column("value").to_pylist(), parameters


def test_record_read_back_and_replay_the_same(dataflows, tmp_path):
    df = dataflows.write(DATAFLOW)
    recording = tmp_path / "run.mcap"
    recorded_out = tmp_path / "recorded.jsonl"
    started = time.time_ns()
    run = nerve("record", str(recording), str(df), "--log-dir", str(tmp_path / "logs1"), env={"OUT": str(recorded_out)})
    ended = time.time_ns()
    assert run.returncode == 0, run.stdout + run.stderr
    assert "nerve: recorded counter/numbers: 20 message(s), 0 dropped" in run.stderr, run.stderr
    got = sink_lines(recorded_out)
    assert [line["metadata"]["n"] for line in got] == list(range(20))

    summary, messages, metadata = read_recording(recording)
    assert summary is not None and summary.statistics.message_count == 20
    assert {c.topic for c in summary.channels.values()} == {"counter/numbers"}
    for channel in summary.channels.values():
        assert channel.message_encoding == "arrow.ipc"
        schema = summary.schemas[channel.schema_id]
        assert (schema.name, schema.encoding) == ("Float64", "arrow.ipc.schema")
        assert pa.ipc.open_stream(schema.data).schema.field("value").type == pa.float64()
    # Every message decodes with pyarrow alone, and holds what the sink got, in order.
    assert len(messages) == len(got)
    for (_, _, message), line in zip(messages, got, strict=True):
        values, parameters = decode(message.data)
        assert values == line["values"]
        assert parameters == line["metadata"]
        # Log times are the wall clock's, while the recording ran.
        assert message.publish_time > 0 and started <= message.log_time <= ended
    log_times = [m.log_time for _, _, m in messages]
    assert log_times == sorted(log_times)
    assert metadata["nerve.drops"] == {"counter/numbers": "0"}
    assert metadata["nerve.dataflow"]["yaml"] == df.read_text()

    # Replayed: the counter is replaced, the sink gets the very same data, each message once the
    # run's clock, the recording's, reaches its time. (How a speed scales the pace on the wall
    # clock is nerve-record's `Pace`, tested there: here it would be a bet on the machine's load.)
    for speed in ("1", "4"):
        out = tmp_path / f"replayed-{speed}.jsonl"
        replay = nerve(
            "replay",
            str(recording),
            str(df),
            "--speed",
            speed,
            "--log-dir",
            str(tmp_path / speed),
            env={"OUT": str(out)},
        )
        assert replay.returncode == 0, replay.stdout + replay.stderr
        assert f"nerve: replaying counter from {recording}" in replay.stderr
        again = sink_lines(out)
        assert [(x["values"], x["metadata"]) for x in again] == [(x["values"], x["metadata"]) for x in got]
        # The run's clock is the recording's: each message arrives once its recorded time is now.
        for line, log_time in zip(again, log_times, strict=True):
            assert line["now"] in log_times and line["now"] >= log_time, (line, log_times)


def test_a_recording_split_in_files_reads_and_replays_as_one(dataflows, tmp_path):
    """`--split-duration` writes whole MCAP files one after the other (each read by the `mcap`
    reader alone); `nerve replay` of the recording's name replays them all, in order."""
    df = dataflows.write(DATAFLOW)
    recording = tmp_path / "run.mcap"
    split = ["--split-duration", "0.3", "--compression", "lz4", "--log-dir", str(tmp_path / "logs1")]
    run = nerve("record", str(recording), str(df), *split, env={"OUT": str(tmp_path / "recorded.jsonl")})
    assert run.returncode == 0, run.stdout + run.stderr
    assert "nerve: recorded counter/numbers: 20 message(s), 0 dropped" in run.stderr, run.stderr
    assert not recording.exists()
    parts = sorted(tmp_path.glob("run_*.mcap"), key=lambda p: int(p.stem.split("_")[1]))
    # 20 messages at 20 Hz span about a second: 0.3 s a file makes three or four of them.
    assert len(parts) >= 3, parts
    counts = []
    for part in parts:
        summary, messages, metadata = read_recording(part)
        assert summary is not None and {c.compression for c in summary.chunk_indexes} <= {"lz4"}
        assert metadata["nerve.dataflow"]["yaml"] == df.read_text()
        counts.append([decode(m.data)[1]["n"] for _, _, m in messages])
    assert [n for part in counts for n in part] == list(range(20)), counts

    out = tmp_path / "replayed.jsonl"
    logs = str(tmp_path / "logs2")
    replay = nerve("replay", str(recording), str(df), "--speed", "0", "--log-dir", logs, env={"OUT": str(out)})
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert [line["metadata"]["n"] for line in sink_lines(out)] == list(range(20))


def test_replay_ends_with_the_recording_though_a_reader_has_a_timer(dataflows, tmp_path):
    """A node ticked by a timer never sees all its inputs closed: once the recording is sent,
    the replay closes the timers too, and the run ends after the node read every message."""
    recording = tmp_path / "run.mcap"
    run = nerve("record", str(recording), str(dataflows.write(DATAFLOW)), env={"OUT": str(tmp_path / "rec.jsonl")})
    assert run.returncode == 0, run.stderr
    ticked = dataflows.write(DATAFLOW + "      tick: timer/hz/100\n", name="ticked")
    out = tmp_path / "replayed.jsonl"
    for speed in ("0", "1"):
        replay = nerve("replay", str(recording), str(ticked), "--speed", speed, env={"OUT": str(out)}, timeout=60)
        assert replay.returncode == 0, replay.stdout + replay.stderr
        assert [line["metadata"]["n"] for line in sink_lines(out) if line["id"] == "numbers"] == list(range(20))


def test_only_chosen_outputs_and_every_message_accounted_for(dataflows, tmp_path):
    """A burst into a recorder queue of one: each message is either in the file or counted as
    dropped, in the file's metadata and on stderr (exit code 1 when any was)."""
    df = dataflows.write(DATAFLOW)
    recording = tmp_path / "burst.mcap"
    run = nerve(
        "record",
        str(recording),
        str(df),
        "--outputs",
        "counter/numbers",
        "--queue-size",
        "1",
        "--quiet",
        env={"OUT": str(tmp_path / "out.jsonl"), "COUNT": "2000", "BURST": "1"},
    )
    _, messages, metadata = read_recording(recording)
    dropped = int(metadata["nerve.drops"]["counter/numbers"])
    assert len(messages) + dropped == 2000, run.stderr
    assert f"nerve: recorded counter/numbers: {len(messages)} message(s), {dropped} dropped" in run.stderr
    assert run.returncode == (1 if dropped else 0), run.stderr
    assert [decode(m.data)[1]["n"] for _, _, m in messages] == sorted(decode(m.data)[1]["n"] for _, _, m in messages)
    assert len(sink_lines(tmp_path / "out.jsonl")) == 2000


def test_topics_recorded_then_republished(tmp_path):
    topic = unique_topic("rec")
    recording = tmp_path / "topics.mcap"
    recorder = subprocess.Popen(
        nerve_cmd("record", str(recording), "--topics", topic),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    publisher = publish_topic(topic, 0, 50, "--rate", "100")
    try:
        assert publisher.wait(timeout=60) == 0, publisher.communicate()
    finally:
        recorder.send_signal(signal.SIGINT)
        _, err = recorder.communicate(timeout=60)
    assert recorder.returncode == 0, err
    assert f"nerve: recorded topic/{topic}: 50 message(s), 0 dropped" in err
    _, messages, _ = read_recording(recording)
    assert {c.topic for _, c, _ in messages} == {f"topic/{topic}"}
    recorded = [decode(m.data) for _, _, m in messages]
    assert [p["i"] for _, p in recorded] == list(range(50))
    assert all(values == [i] * (1 + i) for i, (values, _) in enumerate(recorded))

    listen = (
        "import sys, nerve\n"
        f"sub = nerve.Subscriber({topic!r}, queue_size=100)\n"
        "print('ready', flush=True)\n"
        "for _ in range(50):\n"
        "    m = sub.recv(timeout=30)\n"
        "    print(m['metadata']['i'], m['value'].to_pylist() == [m['metadata']['i']] * (1 + m['metadata']['i']))\n"
    )
    listener = subprocess.Popen([sys.executable, "-c", listen], stdout=subprocess.PIPE, text=True)
    assert listener.stdout and listener.stdout.readline().strip() == "ready"
    replay = nerve("replay", str(recording))
    assert replay.returncode == 0, replay.stderr
    assert "nerve: republished 50 message(s)" in replay.stderr
    out, _ = listener.communicate(timeout=60)
    assert out.splitlines() == [f"{i} True" for i in range(50)]


def test_clear_errors(dataflows, tmp_path):
    df = dataflows.write(DATAFLOW)
    wrong = nerve("record", str(tmp_path / "x.mcap"), str(df), "--outputs", "counter/nope")
    assert wrong.returncode == 1
    assert f"{df} has no output `counter/nope` (its outputs: counter/numbers)" in wrong.stderr

    not_mcap = nerve("replay", str(df), str(df))
    assert not_mcap.returncode == 1
    assert f"{df} is not an MCAP file" in not_mcap.stderr

    # A recording of another dataflow's outputs (here: a topic) does not match this one.
    empty = tmp_path / "other.mcap"
    recorded = nerve("record", str(empty), "--topics", unique_topic("none"), "--duration", "0.2")
    assert recorded.returncode == 0, recorded.stderr
    mismatch = nerve("replay", str(empty), str(df))
    assert mismatch.returncode == 1
    assert "no source node has all its outputs recorded (source nodes: counter (missing counter/numbers)" in (
        mismatch.stderr
    )
    ghost = nerve("replay", str(empty), str(df), "--replace", "ghost")
    assert "--replace ghost: " in ghost.stderr and "has no node `ghost` (its nodes: counter, sink)" in ghost.stderr
    sink = nerve("replay", str(empty), str(df), "--replace", "sink")
    assert "node `sink` has no outputs" in sink.stderr
    counter = nerve("replay", str(empty), str(df), "--replace", "counter")
    assert f"{empty} has no channel for counter/numbers (its channels: none)" in counter.stderr


def test_real_time_and_sim_time_together_are_refused(dataflows, tmp_path):
    # --real-time keeps the wall clock, --sim-time asks for the recording's: not both.
    df = dataflows.write(DATAFLOW)
    run = nerve("replay", str(tmp_path / "any.mcap"), str(df), "--real-time", "--sim-time")
    assert run.returncode == 2, run.stderr
    assert "the argument '--real-time' cannot be used with '--sim-time'" in run.stderr, run.stderr


@pytest.mark.parametrize("speed", ["-1", "nan"])
def test_bad_speed_is_refused(tmp_path, speed):
    (tmp_path / "f.mcap").write_bytes(b"")
    run = nerve("replay", str(tmp_path / "f.mcap"), f"--speed={speed}")
    assert run.returncode != 0 and "--speed must be a number" in run.stderr, run.stderr


def wait_lines(path: Path, n: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not (path.exists() and len(path.read_text().splitlines()) >= n):
        assert time.monotonic() < deadline, f"{path} did not reach {n} lines"
        time.sleep(0.05)


def test_dataflow_with_topics_until_ctrl_c_then_looped_replay(dataflows, tmp_path):
    """Outputs and a topic recorded together (topic inputs never close, so Ctrl-C ends the
    recording, and what was queued is still written); then `--loop` replays until Ctrl-C."""
    topic = unique_topic("mixed")
    # The topic comes from a process outside the run: the run shares its name.
    df = dataflows.write(f"share: [{topic}]\n{DATAFLOW}")
    recording = tmp_path / "mixed.mcap"
    first = tmp_path / "first.jsonl"
    recorder = subprocess.Popen(
        nerve_cmd("record", str(recording), str(df), "--topics", topic, "--log-dir", str(tmp_path / "rec")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OUT": str(first)},
    )
    publisher = publish_topic(topic, 0, 30, "--rate", "100")
    try:
        assert publisher.wait(timeout=60) == 0, publisher.communicate()
        wait_lines(first, 20)
    finally:
        recorder.send_signal(signal.SIGINT)
        _, err = recorder.communicate(timeout=60)
    assert recorder.returncode == 0, err
    assert "nerve: recorded counter/numbers: 20 message(s), 0 dropped" in err, err
    assert f"nerve: recorded topic/{topic}: 30 message(s), 0 dropped" in err, err
    _, messages, metadata = read_recording(recording)
    assert metadata["nerve.drops"] == {"counter/numbers": "0", f"topic/{topic}": "0"}
    assert [decode(m.data)[1]["i"] for _, c, m in messages if c.topic == f"topic/{topic}"] == list(range(30))

    looped = tmp_path / "looped.jsonl"
    replay = subprocess.Popen(
        nerve_cmd("replay", str(recording), str(df), "--loop", "--speed", "5", "--log-dir", str(tmp_path / "rep")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OUT": str(looped)},
    )
    try:
        wait_lines(looped, 45)
    finally:
        replay.send_signal(signal.SIGINT)
        _, err = replay.communicate(timeout=60)
    assert replay.returncode == 0, err
    got = [line["metadata"]["n"] for line in sink_lines(looped)]
    assert got[:45] == [*range(20), *range(20), *range(5)], got


def test_typed_outputs_are_recorded_as_ros_2_does_and_replay(tmp_path):
    """Declared ROS 2 types are recorded as CDR under a `ros2msg` schema, in zstd-compressed
    chunks (what Foxglove and `ros2 bag` users keep): ROS 2's own decoder (`mcap-ros2-support`)
    reads them, a type of the example's own included, and a replay of the camera's images
    drives the detector as the camera did."""
    from mcap_ros2.decoder import DecoderFactory

    # The copy sits two folders below a `target` that is the workspace's, as the example does,
    # so its Rust detector's `path: ../../target/release/…` finds the binary built here.
    example = tmp_path / "examples" / "typed"
    shutil.copytree(REPO / "examples" / "typed", example, ignore=shutil.ignore_patterns("out"))
    (tmp_path / "target").symlink_to(REPO / "target")
    subprocess.run(["cargo", "build", "--release", "-p", "typed-detector"], cwd=REPO, check=True, timeout=900)
    recording = tmp_path / "typed.mcap"
    run = nerve(
        "record",
        str(recording),
        str(example / "dataflow.yml"),
        "--compression",
        "zstd",
        "--log-dir",
        str(tmp_path / "logs1"),
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "nerve: recorded camera/image: 60 message(s), 0 dropped" in run.stderr, run.stderr

    with recording.open("rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        chunks = reader.get_summary().chunk_indexes
        assert chunks and {c.compression for c in chunks} == {"zstd"}
        # The camera's frames are mostly black: compressed, the file is a fraction of them.
        assert recording.stat().st_size < 60 * 480 * 640 * 3 // 4
        decoded = [
            (c.topic, s.name, s.encoding, c.message_encoding, m) for s, c, _, m in reader.iter_decoded_messages()
        ]
    kinds = {d[:4] for d in decoded}
    assert kinds == {
        ("camera/image", "sensor_msgs/msg/Image", "ros2msg", "cdr"),
        ("detector/detections", "detection_msgs/msg/DetectionArray", "ros2msg", "cdr"),
        ("detector-rs/detections", "detection_msgs/msg/DetectionArray", "ros2msg", "cdr"),
    }
    images = [m for topic, *_, m in decoded if topic == "camera/image"]
    assert len(images) == 60 and images[0].encoding == "rgb8" and len(images[0].data) == 480 * 640 * 3
    frames = [int(m.header.frame_id.rsplit("/", 1)[1]) for m in images]
    assert frames == list(range(60))
    for detector in ("detector", "detector-rs"):  # Python's and Rust's, recorded alike
        boxes = [m.detections[0] for topic, *_, m in decoded if topic == f"{detector}/detections"]
        assert len(boxes) == 60 and {b.label for b in boxes} == {"square"} and {b.width for b in boxes} == {40}

    replay = nerve("replay", str(recording), str(example / "dataflow.yml"), "--log-dir", str(tmp_path / "logs2"))
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert "nerve: replaying camera from" in replay.stderr, replay.stderr
    assert "sink checked 60 detections from Python and 60 from Rust" in replay.stdout + replay.stderr

"""`nerve topic list|echo|hz|bw` against real publisher processes."""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import signal
import subprocess
import sys
import time

import nerve
import pytest
from conftest import nerve_cmd, publish_topic, unique_topic, wait_for


def stop(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.communicate(timeout=30)


def topic_cmd(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    # `echo` prints `…` whatever the locale.
    return subprocess.run(nerve_cmd("topic", *args), capture_output=True, text=True, encoding="utf-8", timeout=timeout)


def rows(*args: str) -> list[list[str]]:
    """`nerve topic list`'s rows under its header, as columns (the last may hold spaces)."""
    run = topic_cmd("list", *args)
    assert run.returncode == 0, run.stderr
    if not run.stdout:  # no topic: the header is left out too
        return []
    header, *lines = run.stdout.splitlines()
    assert header.split()[:2] == ["TOPIC", "RUN"], run.stdout
    return [line.split(maxsplit=2) for line in lines]


def listed(*args: str) -> list[str]:
    """The global topics `nerve topic list` shows (those of no run)."""
    return [row[0] for row in rows(*args) if row[1] == "-"]


def test_list_shows_a_topic_while_its_publisher_lives() -> None:
    topic = unique_topic("list")
    code = f"import time, nerve\np = nerve.Publisher({topic!r}, domain=3)\nprint('ready', flush=True)\ntime.sleep(120)"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready", proc.stderr
        wait_for(lambda: topic in listed("--domain", "3"), what=f"{topic} in `nerve topic list`")
        assert topic not in listed()  # domain 0
        verbose = [row for row in rows("--domain", "3", "--verbose") if row[0] == topic]
        assert verbose == [[topic, "-", f"1 publisher (pid {proc.pid}), 0 subscribers"]]
    finally:
        stop(proc)
    assert topic not in listed("--domain", "3")


def test_list_says_when_there_are_no_topics() -> None:
    # A domain no other test uses: nothing there.
    domain = str(4_000_000_000 + os.getpid() % 100_000)
    run = topic_cmd("list", "--domain", domain)
    assert run.returncode == 0 and run.stdout == "", run.stdout
    assert f"no topics in domain {domain} on this host" in run.stderr, run.stderr


def test_echo_prints_count_messages_with_their_values() -> None:
    topic = unique_topic("echo")
    # Messages 14, 15 and 16 hold 15, 16 and 17 values: the last one is cut after 16.
    pub = publish_topic(topic, 14, 3)
    try:
        run = topic_cmd("echo", topic, "--count", "3", "--timeout", "30")
    finally:
        stop(pub)
    assert run.returncode == 0, run.stderr
    blocks = [block for block in run.stdout.split("---\n") if block.strip()]
    assert len(blocks) == 3, run.stdout
    stamps = []
    for i, block in zip(range(14, 17), blocks, strict=True):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        assert json.loads(fields["parameters"])["i"] == i
        assert fields["type"] == "UInt32"
        assert fields["length"] == str(i + 1)
        shown = ", ".join([str(i)] * min(i + 1, 16))
        assert fields["values"] == (f"[{shown}, …]" if i + 1 > 16 else f"[{shown}]")
        stamps.append(int(fields["timestamp"]))
    assert stamps == sorted(stamps)
    assert stamps[-1] <= time.monotonic_ns()


def test_echo_fails_clearly_when_nothing_comes_within_the_timeout() -> None:
    topic = unique_topic("silent")
    run = topic_cmd("echo", topic, "--timeout", "0.5")
    assert run.returncode == 1
    assert f"no message on topic `{topic}` for 0.5 s" in run.stderr


def test_ctrl_c_stops_echo_cleanly() -> None:
    topic = unique_topic("interrupt")
    proc = subprocess.Popen(
        nerve_cmd("topic", "echo", topic), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        # Its subscriber is listed once the command is past installing its signal handlers.
        wait_for(lambda: topic in listed(), what="the echo subscriber")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            stop(proc)
    assert proc.returncode == 0, err
    assert "KeyboardInterrupt" not in err


def measured(run: subprocess.CompletedProcess[str], first_line: str) -> str:
    """The last report of `nerve topic hz|bw`: its line that matches ``first_line`` and the next."""
    lines = run.stdout.splitlines()
    starts = [i for i, line in enumerate(lines) if re.match(first_line, line)]
    assert starts, run.stdout + run.stderr
    return "\n".join(lines[starts[-1] : starts[-1] + 2])


def metered(topic: str, command: str) -> tuple[subprocess.CompletedProcess[str], list[nerve.Message]]:
    """`nerve topic <command>` for 3 s of messages 500 and on at 50 Hz (501 and more uint32 values
    each), and every message it could have seen, as a subscriber of this process got them."""
    sub = nerve.Subscriber(topic, queue_size=1000)  # before the publisher starts: it gets all
    pub = publish_topic(topic, 500, 1000, "--rate", "50")
    try:
        run = topic_cmd(command, topic, "--duration", "3")
    finally:
        stop(pub)
    assert run.returncode == 0, run.stderr
    return run, list(iter(lambda: sub.recv(0), None))


def windows(messages: list[nerve.Message], n: int) -> list[list[nerve.Message]]:
    return [messages[i : i + n] for i in range(len(messages) - n + 1)]


def total(values: list[float]) -> float:
    """A sum in order, as Rust's (Python's own `sum` compensates rounding since 3.12)."""
    result = 0.0
    for v in values:
        result += v
    return result


def hz_report(window: list[nerve.Message]) -> str:
    """What `nerve topic hz` prints for a window of messages: the rate of their send stamps."""
    stamps = [m["metadata"]["timestamp"] for m in window]
    periods = [(b - a) / 1e9 for a, b in itertools.pairwise(stamps)]
    mean = total(periods) / len(periods)
    std_dev = math.sqrt(total([(p - mean) ** 2 for p in periods]) / len(periods))
    return (
        f"average rate: {1 / mean:.3f}\n"
        f"\tmin: {min(periods):.3f}s max: {max(periods):.3f}s std dev: {std_dev:.5f}s window: {len(stamps)}"
    )


def size(n: float) -> str:
    if n < 1e3:
        return f"{n:.0f} B"
    return next(f"{n / scale:.2f} {unit}" for scale, unit in ((1e3, "KB"), (1e6, "MB"), (1e9, "GB")) if n < scale * 1e3)


def bw_report(window: list[nerve.Message]) -> str:
    """What `nerve topic bw` prints for a window of messages: their values' bytes over the span
    of their send stamps."""
    sizes = [float(m["value"].nbytes) for m in window]
    span = (window[-1]["metadata"]["timestamp"] - window[0]["metadata"]["timestamp"]) / 1e9
    mean = total(sizes) / len(sizes)
    return (
        f"{size(total(sizes[1:]) / span)}/s from {len(sizes)} messages\n"
        f"\tMessage size mean: {size(mean)} min: {size(min(sizes))} max: {size(max(sizes))}"
    )


def test_hz_reports_the_publishers_rate() -> None:
    """The figures are those of the messages' send stamps, window for window: the rate the
    publisher sent at, whatever it was on a busy machine."""
    run, messages = metered(unique_topic("hz"), "hz")
    shown = measured(run, r"average rate: [0-9.]+$")
    n = int(shown.rsplit("window: ", 1)[1])
    assert shown in [hz_report(w) for w in windows(messages, n)], (shown, len(messages))


def test_bw_reports_the_bytes_of_the_values() -> None:
    run, messages = metered(unique_topic("bw"), "bw")
    shown = measured(run, r"[0-9.]+ (B|KB|MB|GB)/s from \d+ messages$")
    n = int(shown.split(" from ", 1)[1].split()[0])
    # Messages 500 and on hold 501 and more uint32 values: 2004 bytes and more each.
    assert all(m["value"].nbytes >= 2004 for m in messages)
    assert shown in [bw_report(w) for w in windows(messages, n)], (shown, len(messages))


@pytest.mark.parametrize("command", ["echo", "hz", "bw"])
def test_a_bad_topic_name_is_refused_clearly(command: str) -> None:
    run = topic_cmd(command, "bad name")
    assert run.returncode != 0
    assert "invalid topic name `bad name`" in run.stderr
    assert run.stdout == ""


def test_outputs_of_a_running_dataflow_are_topics_to_the_cli(dataflows) -> None:
    """`nerve topic` sees every output of a running dataflow as `<node>/<output>`, the run's own
    topic, which `--run` names."""
    node = f"ticker{os.getpid()}"
    path = dataflows.write(
        f"""
        nodes:
          - id: {node}
            path: ticker.py
            inputs:
              tick: timer/millis/20
            outputs:
              - count
        """,
        {
            "ticker.py": """
            import nerve

            node = nerve.Node()
            n = 0
            for event in node:
                if event["type"] == "INPUT":
                    node.send_output("count", [n])
                    n += 1
                elif event["type"] == "STOP":
                    break
            """
        },
    )
    name = f"ticking-{os.getpid()}"
    run = dataflows.start(path, "--name", name)
    try:
        topic = f"{node}/count"
        wait_for(lambda: [topic, name] in rows(), what="the output to be listed as the run's")
        assert topic not in listed(), "a run's output is not a global topic"
        echoed = topic_cmd("echo", topic, "--run", name, "--count", "3", "--timeout", "30")
        assert echoed.returncode == 0, echoed.stderr
        assert echoed.stdout.count("type: Int64") == 3, echoed.stdout
        rate = topic_cmd("hz", topic, "--run", name, "--duration", "3")
        assert rate.returncode == 0, rate.stderr
        assert "average rate" in rate.stdout, rate.stdout
    finally:
        run.send_signal(signal.SIGINT)
        run.communicate(timeout=60)
    assert run.returncode == 0


def test_pub_sends_typed_values_with_metadata_at_a_rate() -> None:
    topic = unique_topic("pub")
    code = (
        f"import nerve\ns = nerve.Subscriber({topic!r})\nprint('ready', flush=True)\n"
        "for _ in range(3):\n"
        "    m = s.recv(timeout=30)\n"
        "    print(m['value'].type, m['value'].to_pylist(), m['metadata']['k'], flush=True)\n"
    )
    sub = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert sub.stdout is not None
        assert sub.stdout.readline().strip() == "ready", sub.stderr
        run = topic_cmd(
            # A type name in any case: int32 is Int32.
            "pub", topic, "[1, 2]", "--type", "int32", "--metadata", '{"k": "v"}', "--rate", "20", "--count", "3"
        )
        assert run.returncode == 0, run.stderr
        assert f"sent 3 message(s) on `{topic}`" in run.stderr, run.stderr
        out, err = sub.communicate(timeout=60)
    finally:
        sub.kill()
    assert out.splitlines() == ["int32 [1, 2] v"] * 3, out + err


def test_pub_refuses_values_that_do_not_fit_the_type() -> None:
    run = topic_cmd("pub", unique_topic("bad"), '["x"]', "--type", "Int32", "--wait", "0")
    assert run.returncode != 0
    assert "the values are not all Int32" in run.stderr, run.stderr


def test_pub_says_when_nothing_was_delivered_and_waits_for_a_subscriber_with_wait() -> None:
    lonely = unique_topic("lonely")
    run = topic_cmd("pub", lonely, "[1]", "--wait", "0.2")
    assert run.returncode == 1, run.stderr
    assert f"nothing was delivered: `{lonely}` had no subscriber" in run.stderr, run.stderr
    assert "`--wait SECS` waits longer" in run.stderr and "sent 1" not in run.stderr, run.stderr

    # With --wait, a subscriber that comes only after the publisher gets the message.
    topic = unique_topic("late")
    pub = subprocess.Popen(
        nerve_cmd("topic", "pub", topic, "[7]", "--wait", "60"), stderr=subprocess.PIPE, text=True, encoding="utf-8"
    )
    sub = None
    try:
        wait_for(lambda: topic in listed(), what="the publisher in `nerve topic list`")
        code = f"import nerve\ns = nerve.Subscriber({topic!r})\nprint(s.recv(timeout=60)['value'].to_pylist())\n"
        sub = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        _, err = pub.communicate(timeout=60)
        assert pub.returncode == 0, err
        assert f"sent 1 message(s) on `{topic}`" in err and "lost" not in err, err
        out, _ = sub.communicate(timeout=60)
        assert out == "[7]\n", out
    finally:
        pub.kill()
        if sub is not None:
            sub.kill()


def test_echo_shows_the_shape_an_n_d_array_was_sent_with() -> None:
    # `nerve topic echo` is a Rust subscriber: the shape reaches Rust as Arrow's extension type.
    topic = unique_topic("tensor")
    code = (
        "import sys, nerve, numpy as np\n"
        f"p = nerve.Publisher({topic!r})\n"
        "assert p.wait_for_subscribers(1, timeout=30)\n"
        "p.send(np.arange(24, dtype=np.int16).reshape(2, 3, 4))\n"
    )
    pub = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        run = topic_cmd("echo", topic, "--count", "1", "--timeout", "30")
    finally:
        stop(pub)
    assert run.returncode == 0, run.stderr
    fields = dict(line.split(": ", 1) for line in run.stdout.split("---\n")[0].splitlines())
    assert fields["extension"] == 'arrow.fixed_shape_tensor {"shape":[2,3,4]}', run.stdout
    assert fields["type"] == "FixedSizeList(24 x Int16)" and fields["length"] == "1", run.stdout

"""kill -9 at random moments of a running graph: nobody else's data is ever corrupted, restarted
nodes rejoin, and the producer's pool does not grow with the kills."""

import os
import random
import signal
import time
from pathlib import Path

from conftest import nerve_shm_objects, wait_for
from test_lifecycle import copy_nodes


def node_pid(node_id: str) -> int | None:
    """The process of a running node, found by the id nerve gives it in its environment."""
    wanted = f"NERVE_NODE_ID={node_id}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if wanted in (entry / "environ").read_bytes().split(b"\0"):
                return int(entry.name)
        except OSError:
            continue
    return None


def test_random_kills_never_corrupt_and_restarted_nodes_rejoin(dataflows, tmp_path):
    stop_file = tmp_path / "stop"
    restart = "restart: {policy: on-failure, max_restarts: 1000, delay: 50ms, max_delay: 50ms}"
    path = dataflows.write(
        f"""
        nodes:
          - id: producer
            path: chaos_producer.py
            env: {{STOP_FILE: "{stop_file}"}}
            {restart}
            outputs: [data]
          - id: steady
            path: chaos_consumer.py
            env: {{GAPLESS: "1"}}
            inputs: {{data: producer/data}}
          - id: victim
            path: chaos_consumer.py
            {restart}
            inputs: {{data: producer/data}}
        """
    )
    copy_nodes(path, "chaos_producer.py", "chaos_consumer.py")
    before = nerve_shm_objects()
    proc = dataflows.start(path)
    wait_for(lambda: node_pid("victim") and node_pid("producer"), what="nodes")
    time.sleep(1.0)
    rng = random.Random(11)
    kills = {"producer": 0, "victim": 0}
    deadline = time.monotonic() + 12
    while time.monotonic() < deadline:
        time.sleep(rng.uniform(0.1, 0.6))
        target = rng.choice(list(kills))
        pid = node_pid(target)
        if pid:
            os.kill(pid, signal.SIGKILL)
            kills[target] += 1
    wait_for(lambda: node_pid("victim") and node_pid("producer"), what="the last restarts")
    time.sleep(1.0)
    # Blocks of the producer's output that exist now: a reference a killed process kept would
    # pin its block for good, and the pool would grow by one for each such kill.
    blocks = [n for n in nerve_shm_objects() - before if ".b0.0." in n]
    stop_file.touch()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    assert min(kills.values()) >= 3, kills
    assert "BAD" not in out, out
    (steady,) = [line.split() for line in out.splitlines() if line.startswith("[steady] checked")]
    victim = [line.split() for line in out.splitlines() if line.startswith("[victim] checked")]
    # The steady reader saw the producer's processes one after the other (a process killed while
    # starting up sent nothing), and the last victim process got data too.
    assert 2 <= int(steady[4]) <= kills["producer"] + 1, steady
    assert victim and int(victim[-1][2]) > 0, victim
    # Four sizes, ten queued per reader, one in flight: far fewer than one block per kill.
    assert len(blocks) <= 30, f"{len(blocks)} blocks after {kills} kills"
    print(f"{kills}, {len(blocks)} blocks, steady: {' '.join(steady)}")

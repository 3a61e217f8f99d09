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
    stop_file, marks = tmp_path / "stop", tmp_path / "marks"
    marks.mkdir()
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
            env: {{GAPLESS: "1", MARKS: "{marks}"}}
            inputs: {{data: producer/data}}
          - id: victim
            path: chaos_consumer.py
            env: {{MARKS: "{marks}"}}
            {restart}
            inputs: {{data: producer/data}}
        """
    )
    copy_nodes(path, "chaos_producer.py", "chaos_consumer.py")

    def got_data(reader: str, producer: int | None = None) -> bool:
        """Whether the running process of ``reader`` got data (from process ``producer``)."""
        pid = node_pid(reader)
        return pid is not None and any(marks.glob(f"{reader}-{pid}-{producer or '*'}"))

    def flowing() -> bool:
        """Whether the running producer's data reached both readers' running processes."""
        producer = node_pid("producer")
        return producer is not None and got_data("steady", producer) and got_data("victim")

    proc = dataflows.start(path)
    wait_for(flowing, what="data from the producer at both readers")
    # Each node killed 20 times, in a random order, at random moments (the seed makes the
    # order and the pauses the same every run); each time once its process is back, so every
    # kill hits a process, whether still starting up or long at work.
    rng = random.Random(11)
    schedule = ["producer", "victim"] * 20
    rng.shuffle(schedule)
    kills = dict.fromkeys(("producer", "victim"), 0)
    killed: dict[str, int | None] = dict.fromkeys(kills)
    for target in schedule:
        time.sleep(rng.uniform(0.1, 0.6))  # the random moment: chaos, not a wait for anything
        wait_for(lambda t=target: node_pid(t) not in (None, killed[t]), what=f"{target} to be back")
        pid = node_pid(target)
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        killed[target] = pid
        kills[target] += 1
    wait_for(flowing, what="data from the last producer at both readers' last processes")
    # Blocks of the producer's output that exist now: a reference a killed process kept would
    # pin its block for good, and the pool would grow by one for each such kill.
    # (Named after the run, its log folder's name, whatever other runs of the machine make.)
    (run_id,) = [d.name for d in (path.parent / "out").iterdir()]
    blocks = [n for n in nerve_shm_objects() if n.startswith(f"nerve.{run_id}.b0.0.")]
    stop_file.touch()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    assert "BAD" not in out, out
    (steady,) = [line.split() for line in out.splitlines() if line.startswith("[steady] checked")]
    victim = [line.split() for line in out.splitlines() if line.startswith("[victim] checked")]
    # The steady reader saw the producer's processes one after the other (a process killed while
    # starting up sent nothing): the first and the last at least; and the last victim process
    # got data too.
    assert 2 <= int(steady[4]) <= kills["producer"] + 1, steady
    assert victim and int(victim[-1][2]) > 0, victim
    # Four sizes, ten queued per reader, one in flight: far fewer than one block per kill.
    assert len(blocks) <= 30, f"{len(blocks)} blocks after {kills} kills"
    print(f"{kills}, {len(blocks)} blocks, steady: {' '.join(steady)}")

"""The soak test, short: the 10-node graph of benches/soak.py for about 20 s, run as the
command `python -m benches.soak`, whose `result.json` says what it measured.

Nothing may be lost or damaged under the default queue policy, and fds, /dev/shm and memory
must stay flat between the end of the warm-up and the end of sending. The full 10-minute run
is `python -m benches.soak` (see benches/README.md). NERVE_SOAK_SECONDS changes the length.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import REPO, Dataflows

SECONDS = float(os.environ.get("NERVE_SOAK_SECONDS", "20"))

#: The fewest messages a source must manage, as a share of its timer's rate: a starved run
#: checks little (a busy node's timer skips ticks), so it must not pass for a soak.
MIN_RATE_SHARE = 0.25


def run_soak(seconds: float, out: Path) -> dict:
    """Runs the soak command for `seconds` of sending with a sample a second; its result."""
    argv = [sys.executable, "-m", "benches.soak", "--seconds", f"{seconds:g}", "--interval", "1", "--out", str(out)]
    # The soak's own bound on a run is its sending, 120 s to start and drain, 30 s to stop.
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=seconds + 300)
    result = out / "result.json"
    assert result.exists(), f"no result.json (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
    return json.loads(result.read_text())


def test_soak_short(tmp_path: Path) -> None:
    result = run_soak(SECONDS, tmp_path / "soak")
    where = f"\nall problems: {result['problems']}\nwork folder: {result['workdir']}"

    assert result["exit_code"] == 0, f"nerve run exited with {result['exit_code']}{where}"
    graph = result["graph"]  # id -> [role, payload bytes, {input: source}, [outputs]]
    inputs = sum(1 for _, _, ins, _ in graph.values() for s in ins.values() if not s.startswith("timer/"))
    edges = result["edges"]
    assert len(edges) == inputs == 14, f"edges checked: {len(edges)}{where}"
    for e in edges:
        name = f"{e['producer']}/{e['output']} -> {e['consumer']}/{e['input']}"
        assert e["sent"] > 0, f"{name}: nothing sent{where}"
        assert e["received"] == e["sent"], f"{name}: sent {e['sent']}, received {e['received']}{where}"
        assert (e["gaps"], e["out_of_order"], e["corrupt"]) == (0, 0, 0), f"{name}: {e}{where}"
        assert e["closed"], f"{name}: no INPUT_CLOSED{where}"
    assert result["lost"] == 0
    for source, hz in (("imu", 1000), ("camera", 30)):
        rate = result["rates_hz"][source]
        assert rate >= MIN_RATE_SHARE * hz, f"{source} sent at {rate:.1f} Hz"

    warm, end = result["warm"], result["end"]
    assert warm and end, f"no steady-state samples{where}"
    span = end["t"] - warm["t"]
    assert span >= (SECONDS - result["warmup_min_s"]) / 2, f"steady state compared over {span:.1f} s only{where}"
    assert set(graph) | {"nerve run"} <= set(warm["procs"]), f"processes sampled: {sorted(warm['procs'])}"
    for name, w in warm["procs"].items():
        fds = end["procs"][name]["fds"]
        assert fds == w["fds"], f"{name}: {w['fds']} fds at the warm-up end, {fds} at the end"
    assert (end["shm_count"], end["shm_bytes"]) == (warm["shm_count"], warm["shm_bytes"]), (
        f"/dev/shm grew: {warm['shm_count']} objects, {warm['shm_bytes']} B -> {end['shm_count']}, {end['shm_bytes']} B"
    )
    for name, (before, after, allowed) in result["rss_growth_kib"].items():
        assert after - before <= allowed, f"{name}: RSS {before} KiB -> {after} KiB (allowed +{allowed} KiB)"

    assert not result["shm_left"], f"/dev/shm objects left after the run: {result['shm_left']}"
    assert not result["procs_left"], f"processes left after the run: {result['procs_left']}"
    assert result["ok"], where  # whatever else the runner's own checks found


GROWING = """
    import numpy as np
    from nerve import Node

    node = Node()
    sent = 0
    for event in node:
        if event["type"] == "INPUT" and sent < 200:
            sent += 1
            node.send_output("path", np.full(4096 * sent, sent % 256, dtype=np.uint8))
"""

COUNTING = """
    import os
    from nerve import Node

    node = Node()
    for event in node:
        if event["type"] == "INPUT":
            n = len(event["value"])
            assert n % 4096 == 0 and event["value"][n - 1].as_py() == (n // 4096) % 256, n
            if n == 4096 * 200:
                blocks = [f for f in os.listdir("/dev/shm") if f.startswith("nerve.") and ".b" in f]
                size = sum(os.stat(f"/dev/shm/{f}").st_size for f in blocks)
                print(f"blocks {len(blocks)} bytes {size}", flush=True)
                break
"""


def test_a_message_that_keeps_growing_leaves_no_block_behind(dataflows: Dataflows) -> None:
    """A path or a map grows with every message: each size past a page needs a larger block.
    The blocks it outgrew are freed, not kept until the pool's capacity (1 GiB), so /dev/shm
    holds about the last sizes only: here 200 one-page steps leave at most a few dozen blocks,
    where keeping them all would leave 200 (80 MiB)."""
    path = dataflows.write(
        """
        nodes:
          - id: grower
            path: grower.py
            inputs:
              tick: dora/timer/millis/10
            outputs: [path]
          - id: counter
            path: counter.py
            inputs:
              path: grower/path
        """,
        {"grower.py": GROWING, "counter.py": COUNTING},
    )
    # The grower stays up after its last message, so its blocks are still there when counted.
    run = dataflows.start(path)
    out = ""
    try:
        assert run.stdout is not None
        for line in run.stdout:
            out += line
            if "blocks" in line:
                break
    finally:
        rest, err = dataflows.interrupt(run)
    out += rest
    counted = re.search(r"\[counter\] blocks (\d+) bytes (\d+)", out)
    assert counted, out + err
    blocks, size = int(counted.group(1)), int(counted.group(2))
    assert blocks <= 40 and size <= 40 * 4096 * 201, f"{blocks} blocks of {size} B in /dev/shm"

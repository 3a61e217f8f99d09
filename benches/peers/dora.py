"""dora-rs: the same dataflows and the same node script as nerve (benches/nodes/dataflow_node.py
with BENCH_MIDDLEWARE=dora), run by ``dora run`` (a daemon of its own, no coordinator). Its
producers linger 2 s before exiting: dora loses messages still in flight when a node exits.

Producers loan their output (``send_output_raw``) or, in the copy variant, send a pyarrow array
(``send_output``). dora has no spinning consumer mode: spin cases are left out.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from dataclasses import replace
from pathlib import Path

from benches import impl_nerve
from benches.model import Case, Samples, read_stamp_lines
from benches.peers import _harness, venv

NAME = "dora-rs"
# Zenoh settings layered onto the ones dora computes (dora talks zenoh between daemons, and opens
# a session even when alone): no scouting, so nothing leaves the loopback interface.
ZENOH_OVERLAY = "{ scouting: { multicast: { enabled: false } } }\n"


def supports(case: Case) -> bool:
    return case.lang == "python" and not case.spin and not case.realtime


def run(case: Case, workdir: Path) -> Samples:
    samples = Samples(NAME, case)
    folder = _harness.folder_for(NAME, case, workdir)
    # nerve's very dataflow and node script: dora runs dora-API nodes unchanged. Without nerve's
    # `realtime:` key: for a cpu-latency case the harness holds the request for dora.
    yml = impl_nerve.dataflow(replace(case, cpu_latency=False), folder)
    (folder / "dataflow.yml").write_text(yml)
    (folder / "zenoh-overlay.json5").write_text(ZENOH_OVERLAY)
    bin_dir = venv.ensure().parent
    env = {
        **os.environ,
        # dora starts a `.py` node with the `python` it finds on PATH: the venv's.
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "VIRTUAL_ENV": str(bin_dir.parent),
        "BENCH_MIDDLEWARE": "dora",
        "BENCH_LINGER_S": "2",
        "DORA_ZENOH_MULTICAST": "off",
        "DORA_ZENOH_CONFIG_OVERLAY": str(folder / "zenoh-overlay.json5"),
        "PYTHONDONTWRITEBYTECODE": "1",
        # A node's shared-memory pool for zero-copy outputs is 8 MB unless told otherwise; a bigger
        # message falls back to the daemon, which refuses more than 64 MiB. Room for a few
        # messages (plus dora's framing) in flight:
        "DORA_NODE_SHM_POOL_SIZE": str(max(8 << 20, 5 * case.size)),
    }
    env.pop("ZENOH_CONFIG", None)  # refused by dora together with the overlay
    budget = _harness.budget_s(case)
    log = folder / "dora.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(bin_dir / "dora"), "run", str(folder / "dataflow.yml")],
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            code = proc.wait(timeout=budget)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the group of `dora run`, its daemon and nodes
            proc.wait()
            samples.error = f"timed out after {budget:.0f} s: {_harness.reason(log)}"
            return samples
    if code != 0:
        samples.error = f"dora run exited with {code}: {_harness.reason(log)}"
        return samples
    if case.scenario == "round-trip":
        rtt = folder / "rtt.txt"
        samples.rtt_ns = [int(x) for x in rtt.read_text().split()] if rtt.exists() else []
        if not samples.rtt_ns:
            samples.error = f"no round trip completed: {_harness.reason(log)}"
        return samples
    for c in range(case.consumers):
        read_stamp_lines(folder / f"c{c}.txt", c, samples)
    try:
        producer = json.loads((folder / "p0.json").read_text())
        consumer = json.loads((folder / "c0.txt.json").read_text())
    except (OSError, ValueError) as e:
        samples.error = f"no results from the nodes ({e}): {_harness.reason(log)}"
        return samples
    samples.take_node_stats(producer, consumer)
    if not samples.sent_ns:
        samples.error = f"the consumers received nothing: {_harness.reason(log)}"
    elif len(samples.sent_ns) < (expected := case.count * case.producers * case.consumers):
        got = len(samples.sent_ns)
        print(f"warning: {NAME} {case.key}: consumers received {got} of {expected} messages", flush=True)
    return samples

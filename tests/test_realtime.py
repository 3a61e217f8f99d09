"""`realtime:` settings applied to real node processes, and refused with a clear error."""

import os
import subprocess

from conftest import nerve_cmd
from test_lifecycle import copy_nodes

REPORT = """
nodes:
  - id: rt
    path: sched_report.py
    realtime: {realtime}
"""


def test_priority_pinning_and_locked_memory_reach_the_node(dataflows):
    assert os.geteuid() == 0, "this test sets a real-time priority: run it as root"
    path = dataflows.write(REPORT.format(realtime="{priority: 10, policy: rr, cpus: [0], lock_memory: true}"))
    copy_nodes(path, "sched_report.py")
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    (line,) = run.node_lines("rt")
    fields = dict(item.split("=") for item in line.split())
    assert (fields["policy"], fields["priority"], fields["cpus"]) == ("rr", "10", "0"), line
    assert int(fields["locked_kb"]) > 0, line


def test_a_node_without_realtime_keeps_the_normal_scheduler(dataflows):
    path = dataflows.write(REPORT.format(realtime="{lock_memory: false}"))
    copy_nodes(path, "sched_report.py")
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    (line,) = run.node_lines("rt")
    assert line.startswith("policy=other priority=0 "), line
    assert line.endswith(" locked_kb=0"), line


def test_a_cpu_the_machine_lacks_is_refused_before_anything_starts(dataflows):
    path = dataflows.write(REPORT.format(realtime="{cpus: [1000]}"))
    copy_nodes(path, "sched_report.py")
    run = dataflows.run(path)
    assert run.returncode != 0
    assert "node `rt`: realtime: CPU 1000 is not available here (available: [0, 1" in run.stderr, run.stderr
    assert not run.node_lines("rt")


def test_a_priority_nerve_may_not_use_is_refused_with_what_to_do(dataflows):
    # Without CAP_SYS_NICE (and with the default real-time limit of 0), even root may not.
    path = dataflows.write(REPORT.format(realtime="{priority: 50}"))
    copy_nodes(path, "sched_report.py")
    drop = ["setpriv", "--bounding-set", "-sys_nice", "--inh-caps", "-sys_nice"]
    proc = subprocess.run(
        [*drop, *nerve_cmd("run", str(path))], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode != 0
    assert "node `rt`: realtime: real-time priority 50 (fifo) is not permitted" in proc.stderr, proc.stderr
    assert "CAP_SYS_NICE" in proc.stderr

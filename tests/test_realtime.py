"""`realtime:` settings applied to real node processes, and refused with a clear error."""

import os
import struct
import subprocess

import pytest
from conftest import nerve_cmd
from test_lifecycle import copy_nodes


def needs_root(why: str) -> pytest.MarkDecorator:
    """Skips a test, saying why, where it cannot do what it checks: as a user other than root."""
    return pytest.mark.skipif(os.geteuid() != 0, reason=f"needs root: {why}")


REPORT = """
nodes:
  - id: rt
    path: sched_report.py
    realtime: {realtime}
"""


@needs_root("sets a real-time priority and locks memory")
def test_priority_pinning_and_locked_memory_reach_the_node(dataflows):
    path = dataflows.write(REPORT.format(realtime="{priority: 10, policy: rr, cpus: [0], lock_memory: true}"))
    copy_nodes(path, "sched_report.py")
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    (line,) = run.node_lines("rt")
    fields = dict(item.split("=") for item in line.split())
    assert (fields["policy"], fields["priority"], fields["cpus"]) == ("rr", "10", "0"), line
    assert int(fields["locked_kb"]) > 0, line


def cpu_latency_us() -> int:
    """The CPU latency the kernel keeps to now: the smallest request any process holds."""
    with open("/dev/cpu_dma_latency", "rb") as f:
        return struct.unpack("=i", f.read(4))[0]


def report_of(run) -> dict[str, str]:
    (line,) = run.node_lines("rt")
    return dict(item.split("=") for item in line.split())


@needs_root("reads /dev/cpu_dma_latency")
def test_a_node_without_realtime_keeps_the_normal_scheduler(dataflows):
    path = dataflows.write(REPORT.format(realtime="{lock_memory: false}"))
    copy_nodes(path, "sched_report.py")
    before = cpu_latency_us()
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    fields = report_of(run)
    assert (fields["policy"], fields["priority"], fields["locked_kb"]) == ("other", "0", "0"), fields
    assert fields["cpu_latency_us"] == str(before), fields


@needs_root("writes /dev/cpu_dma_latency")
def test_a_cpu_latency_request_holds_while_the_run_lasts(dataflows):
    before = cpu_latency_us()
    assert before > 37, f"another process already holds a CPU latency request of {before} µs"
    path = dataflows.write(REPORT.format(realtime="{cpu_latency_us: 37}"))
    copy_nodes(path, "sched_report.py")
    run = dataflows.run(path)
    assert run.returncode == 0, run.output
    assert report_of(run)["cpu_latency_us"] == "37"
    assert cpu_latency_us() == before, "the request outlived the run"


def test_a_cpu_the_machine_lacks_is_refused_before_anything_starts(dataflows):
    path = dataflows.write(REPORT.format(realtime="{cpus: [1000]}"))
    copy_nodes(path, "sched_report.py")
    run = dataflows.run(path)
    assert run.returncode != 0
    assert "node `rt`: realtime: CPU 1000 is not available here (available: [0, 1" in run.stderr, run.stderr
    assert not run.node_lines("rt")


@needs_root("takes CAP_SYS_NICE out of root's bounding set (setpriv)")
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


@needs_root("mounts /dev/cpu_dma_latency nodev in a mount namespace of its own (unshare)")
def test_a_cpu_latency_request_nerve_may_not_make_is_refused_before_anything_starts(dataflows):
    path = dataflows.write(REPORT.format(realtime="{cpu_latency_us: 0}"))
    copy_nodes(path, "sched_report.py")
    # In a mount namespace of its own, the device is mounted `nodev`: opening it is refused, as it
    # is for a user without write access to it.
    nodev = 'mount --bind -o nodev /dev/cpu_dma_latency /dev/cpu_dma_latency && exec "$@"'
    cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c", nodev, "sh", *nerve_cmd("run", str(path))]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode != 0
    assert "node `rt`: realtime: cannot request a CPU latency of 0 µs through /dev/cpu_dma_latency" in proc.stderr
    assert "write access to /dev/cpu_dma_latency" in proc.stderr, proc.stderr
    assert "policy=" not in proc.stdout + proc.stderr, "the node ran"

"""Prints how the operating system schedules this node: policy, priority, CPUs, locked memory,
and the CPU latency the kernel keeps to (the smallest request held, as /dev/cpu_dma_latency reads)."""

import os
import struct

from nerve import Node

node = Node()
policy = {os.SCHED_OTHER: "other", os.SCHED_FIFO: "fifo", os.SCHED_RR: "rr"}[os.sched_getscheduler(0)]
locked = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmLck:"))
cpus = ",".join(str(c) for c in sorted(os.sched_getaffinity(0)))
with open("/dev/cpu_dma_latency", "rb") as f:
    (cpu_latency,) = struct.unpack("=i", f.read(4))
print(
    f"policy={policy} priority={os.sched_getparam(0).sched_priority} cpus={cpus} locked_kb={locked} "
    f"cpu_latency_us={cpu_latency}",
    flush=True,
)

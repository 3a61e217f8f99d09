"""Hosts on one machine: network namespaces joined by veth pairs to one bridge (needs root).

Each host also has a mount namespace of its own, with a private tmpfs as nerve's runtime folder
(`XDG_RUNTIME_DIR`): real hosts share no files, and a Unix socket one host's Zenoh session
advertises must not be reachable from another (a peer that found it would talk to it through
the file system, and no byte would cross the host's link).

Used by the benchmark suite's topic and LAN scenarios and by the tests of several hosts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

#: Environment variable naming a Zenoh config; hosts run without it, on their private links.
ZENOH_ENV = "NERVE_ZENOH_CONFIG"
#: How far nerve's discovery reaches: hosts find each other on their subnet (the private links).
RANGE_ENV = "NERVE_DISCOVERY_RANGE"


class Hosts:
    """``count`` namespaces ``<tag>h0``… with addresses 10.231.0.1…, on a bridge in ``<tag>br``."""

    def __init__(self, tag: str, count: int) -> None:
        self.tag = tag
        self.names = [f"{tag}h{i}" for i in range(count)]
        self.bridge_ns = f"{tag}br"
        # The mount namespaces' files live under a private mount, as `unshare --mount=FILE` needs.
        self.mounts = Path("/run/nerve-testbed") / tag
        self.runtime = self.mounts / "runtime"
        try:
            self.runtime.mkdir(parents=True, exist_ok=True)
            subprocess.run(["mount", "--bind", self.mounts, self.mounts], check=True, capture_output=True)
            subprocess.run(["mount", "--make-private", self.mounts], check=True, capture_output=True)
            self._ip("netns", "add", self.bridge_ns)
            self._ip("-n", self.bridge_ns, "link", "add", "br0", "type", "bridge")
            self._ip("-n", self.bridge_ns, "link", "set", "br0", "up")
            for i, ns in enumerate(self.names):
                self._ip("netns", "add", ns)
                self._ip("link", "add", f"{tag}v{i}", "type", "veth", "peer", "name", f"{tag}p{i}")
                self._ip("link", "set", f"{tag}v{i}", "netns", ns)
                self._ip("link", "set", f"{tag}p{i}", "netns", self.bridge_ns)
                self._ip("-n", self.bridge_ns, "link", "set", f"{tag}p{i}", "master", "br0", "up")
                self._ip("-n", ns, "link", "set", "lo", "up")
                self._ip("-n", ns, "link", "set", f"{tag}v{i}", "name", "eth0")
                self._ip("-n", ns, "addr", "add", f"10.231.0.{i + 1}/24", "dev", "eth0")
                self._ip("-n", ns, "link", "set", "eth0", "up")
                self._ip("-n", ns, "route", "add", "default", "dev", "eth0")
                mount_ns = self._mount_ns(ns)
                mount_ns.touch()
                tmpfs = ["mount", "-t", "tmpfs", "-o", "mode=0700", f"{ns}-runtime", str(self.runtime)]
                unshare = ["unshare", f"--mount={mount_ns}", "--propagation", "private", *tmpfs]
                subprocess.run(unshare, check=True, capture_output=True)
        except BaseException:
            self.remove()
            raise

    @staticmethod
    def _ip(*args: str) -> None:
        subprocess.run(["ip", *args], check=True, capture_output=True)

    def shape(self, rate: str, delay: str) -> str:
        """Shapes every host's outgoing link (its ``eth0``) to ``rate`` with ``delay`` added, with
        netem; where the kernel lacks netem, to ``rate`` alone with a token bucket. Returns what
        was applied."""
        netem = ["netem", "rate", rate, "delay", delay, "limit", "100000"]
        # A 4 MB queue, as a gigabit switch port has: a longer one would only hide a link too
        # slow for its load behind a standing queue.
        tbf = ["tbf", "rate", rate, "burst", "128kb", "limit", "4mb"]
        for qdisc, applied in ((netem, f"netem: {rate}, {delay} delay"), (tbf, f"tbf: {rate}, no added delay")):
            try:
                for ns in self.names:
                    tc = ["ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", "eth0", "root", *qdisc]
                    subprocess.run(tc, check=True, capture_output=True)
                return applied
            except subprocess.CalledProcessError:
                continue
        raise RuntimeError("tc can apply neither netem nor tbf here")

    def _mount_ns(self, ns: str) -> Path:
        return self.mounts / f"{ns}.mnt"

    def on(self, host: int, argv: list[str]) -> list[str]:
        """``argv`` run on host number ``host``: in its network and mount namespaces, with its
        own runtime folder."""
        ns = self.names[host]
        enter = ["nsenter", f"--net=/run/netns/{ns}", f"--mount={self._mount_ns(ns)}", "--"]
        return [*enter, "env", f"XDG_RUNTIME_DIR={self.runtime}", *argv]

    def popen(self, host: int, argv: list[str], **kwargs) -> subprocess.Popen[str]:
        """Starts ``argv`` on host number ``host``, its discovery open to the hosts' subnet."""
        env = {k: v for k, v in os.environ.items() if k != ZENOH_ENV}
        env[RANGE_ENV] = "subnet"
        return subprocess.Popen(self.on(host, argv), text=True, env=env, **kwargs)

    def remove(self) -> None:
        for ns in [*self.names, self.bridge_ns]:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        for ns in self.names:
            subprocess.run(["umount", self._mount_ns(ns)], capture_output=True)
        subprocess.run(["umount", self.mounts], capture_output=True)
        shutil.rmtree(self.mounts, ignore_errors=True)

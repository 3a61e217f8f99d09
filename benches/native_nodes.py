"""The compiled bench nodes: where they are and how the suite builds them, once per run before
its first case. Both build into the workspace's target folder, never into the source tree.

* the Rust node (benches/rust-node, `nerve-bench-node`): cargo, release profile, with the
  workspace's other programs (`testbed.cargo`);
* the C++ node (benches/cpp-node, `nerve-bench-cpp-node`): CMake against the nerve package of
  the interpreter that runs the suite, whose `nerve run` starts the node;
* the control-loop scenario's robots (benches/control-loop): examples/force-control's nerve robot
  and the same robot over ZeroMQ, built alike (the ZeroMQ one only where libzmq is installed).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from testbed.cargo import build_workspace_binaries

ROOT = Path(__file__).resolve().parent.parent
RUST_NODE = ROOT / "target" / "release" / "nerve-bench-node"
CPP_SOURCE = ROOT / "benches" / "cpp-node"
CPP_BUILD = ROOT / "target" / "bench-cpp-node"
CPP_NODE = CPP_BUILD / "nerve-bench-cpp-node"
CONTROL_LOOP_SOURCE = ROOT / "benches" / "control-loop"
CONTROL_LOOP_BUILD = ROOT / "target" / "bench-control-loop"
FORCE_ROBOT = CONTROL_LOOP_BUILD / "force-control" / "robot"
ZMQ_ROBOT = CONTROL_LOOP_BUILD / "robot-zmq"


def build_rust() -> None:
    build_workspace_binaries()


def build_cpp(python: str = sys.executable) -> None:
    cmake_build(CPP_SOURCE, CPP_BUILD, "the C++ bench node", python)


def build_control_loop(python: str = sys.executable) -> None:
    cmake_build(CONTROL_LOOP_SOURCE, CONTROL_LOOP_BUILD, "the control-loop scenario's robots", python)


def cmake_build(source: Path, build: Path, what: str, python: str) -> None:
    """Builds the CMake project `source` into `build`, Release, against the nerve package of
    `python`'s environment."""
    if not shutil.which("cmake"):
        raise SystemExit(f"building {what} takes CMake and a C++17 compiler: apt-get install cmake g++")
    found = subprocess.run([python, "-m", "nerve", "--cmake-dir"], capture_output=True, text=True)
    if found.returncode != 0:
        asked = f"{python} -m nerve --cmake-dir"
        raise SystemExit(f"building {what} takes nerve's CMake package (`{asked}`): {found.stderr.strip()}")
    nerve_dir = found.stdout.strip()
    configure = ["cmake", "-S", str(source), "-B", str(build), "--log-level=WARNING"]
    subprocess.run([*configure, "-DCMAKE_BUILD_TYPE=Release", f"-Dnerve_DIR={nerve_dir}"], check=True)
    subprocess.run(["cmake", "--build", str(build)], check=True)

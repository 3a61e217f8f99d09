"""The compiled bench nodes: where they are and how the suite builds them, once per run before
its first case. Both build into the workspace's target folder, never into the source tree.

* the Rust node (benches/rust-node, `nerve-bench-node`): cargo, release profile, with the
  workspace's other programs (`testbed.cargo`);
* the C++ node (benches/cpp-node, `nerve-bench-cpp-node`): CMake against the nerve package of
  the interpreter that runs the suite, whose `nerve run` starts the node.
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


def build_rust() -> None:
    build_workspace_binaries()


def build_cpp(python: str = sys.executable) -> None:
    if not shutil.which("cmake"):
        raise SystemExit("the C++ bench node builds with CMake and a C++17 compiler: apt-get install cmake g++")
    found = subprocess.run([python, "-m", "nerve", "--cmake-dir"], capture_output=True, text=True)
    if found.returncode != 0:
        asked = f"{python} -m nerve --cmake-dir"
        raise SystemExit(f"the C++ bench node needs nerve's CMake package (`{asked}`): {found.stderr.strip()}")
    nerve_dir = found.stdout.strip()
    configure = ["cmake", "-S", str(CPP_SOURCE), "-B", str(CPP_BUILD), "--log-level=WARNING"]
    subprocess.run([*configure, "-DCMAKE_BUILD_TYPE=Release", f"-Dnerve_DIR={nerve_dir}"], check=True)
    subprocess.run(["cmake", "--build", str(CPP_BUILD)], check=True)

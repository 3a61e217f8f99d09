"""Entry point of the ``nerve`` command installed by the Python package."""

import os
import sys
import sysconfig


def main() -> None:
    """Run the ``nerve`` command line, implemented in the extension module."""
    from nerve._nerve import run_cli

    # Python nodes run with the interpreter that has this very nerve installed.
    os.environ.setdefault("NERVE_PYTHON", sys.executable)
    # `nerve --include-dir | --lib-dir | --cmake-dir`: the C library installed beside this package.
    os.environ["NERVE_PACKAGE_DIR"] = os.path.dirname(os.path.abspath(__file__))
    # A node's `build:` command that asks `nerve --cmake-dir` gets this very nerve, even when the
    # environment it was installed in is not activated.
    scripts = sysconfig.get_path("scripts")
    if os.path.isfile(os.path.join(scripts, "nerve")):
        os.environ["PATH"] = os.pathsep.join([scripts, os.environ.get("PATH", "")])
    sys.exit(run_cli(["nerve", *sys.argv[1:]]))

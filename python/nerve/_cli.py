"""Entry point of the ``nerve`` command installed by the Python package."""

import os
import sys


def main() -> None:
    """Run the ``nerve`` command line, implemented in the extension module."""
    from nerve._nerve import run_cli

    # Python nodes run with the interpreter that has this very nerve installed.
    os.environ.setdefault("NERVE_PYTHON", sys.executable)
    sys.exit(run_cli(["nerve", *sys.argv[1:]]))

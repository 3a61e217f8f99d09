"""``python -m nerve.msg stubs [PACKAGE ...] [--out DIR]``: type stubs of message packages."""

from __future__ import annotations

import argparse
from pathlib import Path

from nerve.msg import _packages
from nerve.msg._stubs import stub


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m nerve.msg", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    stubs = commands.add_parser("stubs", help="write <package>.pyi for editors")
    stubs.add_argument("packages", nargs="*", help="packages to write (default: every package found)")
    stubs.add_argument("--out", type=Path, default=Path(__file__).parent, help="folder (default: nerve/msg)")
    args = parser.parse_args()
    known = sorted(_packages())
    args.out.mkdir(parents=True, exist_ok=True)
    for package in args.packages or known:
        if package not in known:
            parser.error(f"no message package `{package}` (NERVE_TYPES_PATH, AMENT_PREFIX_PATH, shipped)")
        path = args.out / f"{package}.pyi"
        path.write_text(stub(package))
        print(f"wrote {path}")


if __name__ == "__main__":
    main()

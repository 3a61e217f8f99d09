"""The build backend of ``pip install .``: maturin builds the Python package, and this adds nerve's
C library beside it, so one install serves Python and C nodes alike, at one version.

The C library is a library of its own, ``libnerve.so``, not the extension module exporting the
C functions too: the extension leaves libpython's symbols for the interpreter to provide, so a
C program could not link against it.

The wheel gets ``nerve/lib/libnerve.so`` (and ``lib/pkgconfig/nerve.pc``), ``nerve/include/``
(``nerve.h``, dora-rs's ``node_api.h`` and ``operator_api.h``, ``nerve.hpp``, the typed messages' ``nerve/msg.hpp`` and
``nerve/msg/*.hpp``) and ``nerve/cmake/`` (``find_package(nerve)``), and the source of
the Rust crates a Rust node builds on (``nerve/rust/``: ``nerve-node``, ``nerve-tf`` and the
workspace crates they use, in a Cargo workspace of their own, with the ``Cargo.lock`` nerve was
tested with), which ``nerve new --lang rust`` points the new project at: no registry has them. The library is built
by cargo in the same target folder and profile as the extension module, so it shares its
compiled dependencies; it is added to the finished wheel (its RECORD rewritten) rather than
left in the source tree for maturin to find, so nothing generated lands in ``python/nerve``.
An editable install (``pip install -e .``) runs the package from ``python/nerve`` and so has no
C library: install it with ``pip install .`` to build C nodes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import zipfile
from pathlib import Path

import maturin
from maturin import (
    build_editable,
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

__all__ = [
    "build_editable",
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_editable",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "prepare_metadata_for_build_wheel",
]

ROOT = Path(__file__).resolve().parents[2]
C_CRATE = ROOT / "crates" / "nerve-c"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = maturin.build_wheel(wheel_directory, config_settings, metadata_directory)
    add_c_library(Path(wheel_directory) / name)
    return name


def cdylib() -> Path:
    """Builds libnerve.so (release, as maturin builds the extension) and returns where it is."""
    command = [os.environ.get("CARGO", "cargo"), "build", "--release", "-p", "nerve-c"]
    command += ["--message-format=json-render-diagnostics"]
    out = subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True).stdout
    for line in out.splitlines():
        message = json.loads(line)
        if message.get("reason") == "compiler-artifact" and "cdylib" in message["target"]["kind"]:
            return Path(next(f for f in message["filenames"] if f.endswith(".so")))
    raise RuntimeError(f"`{' '.join(command)}` built no libnerve.so")


# The crates a Rust node depends on; the wheel carries them and every workspace crate they use.
RUST_ROOTS = ("nerve-node", "nerve-tf")


def rust_sources() -> dict[str, bytes]:
    """``nerve/rust/``: the crates of ``RUST_ROOTS`` and their workspace dependencies, in a
    workspace of their own (the repository's manifest with only these members), and its lock."""
    command = [os.environ.get("CARGO", "cargo"), "metadata", "--format-version", "1", "--locked"]
    metadata = json.loads(subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True).stdout)
    local = {p["id"]: p for p in metadata["packages"] if p["source"] is None}
    deps = {n["id"]: n["deps"] for n in metadata["resolve"]["nodes"]}
    todo = [i for i, p in local.items() if p["name"] in RUST_ROOTS]
    needed: set[str] = set()
    while todo:
        package = todo.pop()
        if package in needed:
            continue
        needed.add(package)
        for dep in deps[package]:
            # What building the crate needs: its dependencies and build-dependencies, not its tests'.
            if dep["pkg"] in local and any(k["kind"] != "dev" for k in dep["dep_kinds"]):
                todo.append(dep["pkg"])
    folders = sorted(Path(local[i]["manifest_path"]).parent.relative_to(ROOT) for i in needed)
    files = {}
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and "target" not in path.relative_to(ROOT / folder).parts:
                files[f"nerve/rust/{path.relative_to(ROOT)}"] = path.read_bytes()
    manifest = (ROOT / "Cargo.toml").read_text()
    members = "".join(f'    "{f}",\n' for f in folders)
    manifest = re.sub(r"^members = \[\n(?:.*\n)*?\]\n", f"members = [\n{members}]\n", manifest, count=1, flags=re.M)
    manifest = re.sub(r"^(#.*\n)*default-members = \[\n(?:.*\n)*?\]\n", "", manifest, count=1, flags=re.M)
    files["nerve/rust/Cargo.toml"] = manifest.encode()
    files["nerve/rust/Cargo.lock"] = (ROOT / "Cargo.lock").read_bytes()
    return files


def add_c_library(wheel: Path) -> None:
    version = wheel.name.split("-")[1]
    files: dict[str, bytes] = {
        "nerve/lib/libnerve.so": cdylib().read_bytes(),
        "nerve/lib/pkgconfig/nerve.pc": (C_CRATE / "cmake" / "nerve.pc.in").read_bytes(),
        "nerve/cmake/nerveConfig.cmake": (C_CRATE / "cmake" / "nerveConfig.cmake").read_bytes(),
        "nerve/cmake/nerveConfigVersion.cmake": (C_CRATE / "cmake" / "nerveConfigVersion.cmake.in").read_bytes(),
    }
    files = {k: v.replace(b"@VERSION@", version.encode()) for k, v in files.items()}
    # Every header: C's, and C++'s, which are header-only over nerve.h.
    include = C_CRATE / "include"
    for header in sorted(include.rglob("*.h*")):
        files[f"nerve/include/{header.relative_to(include).as_posix()}"] = header.read_bytes()
    files.update(rust_sources())

    with zipfile.ZipFile(wheel) as old:
        entries = [(info, old.read(info)) for info in old.infolist()]
    record_name = next(info.filename for info, _ in entries if info.filename.endswith(".dist-info/RECORD"))
    record = [line for _, data in entries if _.filename == record_name for line in data.decode().splitlines()]
    tmp = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as new:
        for info, data in entries:
            if info.filename != record_name:
                new.writestr(info, data)
        for path, data in files.items():
            info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if path.endswith(".so") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            new.writestr(info, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.insert(len(record) - 1, f"{path},sha256={digest},{len(data)}")
        new.writestr(record_name, "\n".join(record) + "\n")
    tmp.replace(wheel)

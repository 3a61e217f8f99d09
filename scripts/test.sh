#!/usr/bin/env bash
# Sets everything up on a fresh machine and runs the whole test suite: Rust and Python.
# This is what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n=== %s\n' "$*"; }

# Topics reach other hosts through Zenoh; tests keep that on loopback (tests of several hosts
# use network namespaces, whose processes do not inherit this).
export NERVE_ZENOH_CONFIG="$PWD/tests/zenoh-loopback.json5"

step "install nerve (builds the Rust core once, release profile) and the test tools"
python3 -m pip install --quiet ".[test]"

step "rust: format and lints"
cargo fmt --all --check
cargo clippy --workspace --all-targets --release -- -D warnings

step "rust: tests (same release profile as the wheel, so nothing is compiled twice)"
cargo test --workspace --release --exclude nerve-python

step "rust: tests that need root (network namespaces; ignored by a plain cargo test)"
cargo test --release -p nerve-topic --test between_hosts -- --ignored

step "python: lints and type stubs"
python3 -m ruff check python tests examples benches
python3 -m mypy.stubtest nerve._nerve --mypy-config-file pyproject.toml --allowlist python/stubtest-allowlist.txt

step "python: cross-process tests and examples"
python3 -m pytest -q tests

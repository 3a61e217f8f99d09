#!/usr/bin/env bash
# Sets everything up on a fresh machine and runs the whole test suite: Rust and Python.
# This is what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step says when it starts (minutes since the start), so a slow step shows in CI's log.
step() { printf '\n=== [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

# Topics reach other hosts through Zenoh; tests keep discovery on this machine (nerve's default;
# tests of several hosts use network namespaces, whose processes get the subnet range instead).
export NERVE_DISCOVERY_RANGE=host
unset NERVE_ZENOH_CONFIG

step "system packages: what the C API's tests and examples build with (CMake, a C/C++ compiler, GoogleTest, pkg-config), and a browser"
# Chromium: a real browser draws `nerve graph`'s page (tests/test_graph.py) and the dashboard
# (tests/test_view.py, driven by Playwright).
if ! command -v cmake >/dev/null || ! command -v c++ >/dev/null || ! command -v pkg-config >/dev/null \
    || ! [ -e /usr/include/gtest/gtest.h ] || ! command -v chromium >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake ninja-build g++ pkg-config googletest libgtest-dev \
        chromium
fi

step "install nerve (builds the Rust core once, release profile) and the test tools"
python3 -m pip install --quiet ".[test]"

step "rust: format and lints"
cargo fmt --all --check
cargo clippy --workspace --all-targets --release -- -D warnings
# The stage stamps of benches/profile/breakdown.yml: code no other build compiles.
cargo clippy -p nerve-python --release --features profile-stages -- -D warnings

step "rust: tests (same release profile as the wheel, so nothing is compiled twice)"
cargo test --workspace --release --exclude nerve-python

step "rust: tests that need root (network namespaces; ignored by a plain cargo test)"
# The same package selection as above, so the same features: nothing is compiled again.
cargo test --workspace --release --exclude nerve-python --test between_hosts -- --ignored

step "c: the C API's tests through ctest (GoogleTest under AddressSanitizer, Arrow C++ from the pyarrow wheel)"
cmake -S tests/c -B target/c-tests -DPython3_EXECUTABLE="$(command -v python3)"
cmake --build target/c-tests
ctest --test-dir target/c-tests --output-on-failure

step "python: lints and type stubs"
python3 -m ruff check python tests examples benches testbed
python3 -m mypy.stubtest nerve._nerve --mypy-config-file pyproject.toml --allowlist python/stubtest-allowlist.txt

step "python: cross-process tests, examples, every code block of the docs, and the benchmark suite's own tests"
python3 -m pytest -q --durations=25 tests benches/tests
step "done"

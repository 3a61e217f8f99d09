"""The C library as `pip install .` installs it: where `nerve` says it is, and a C node started
by hand that joins a running dataflow by id (the rest of the C API's tests are tests/c, run by
ctest)."""

import shlex
import subprocess
from pathlib import Path

from conftest import NODES, nerve_cmd, wait_for

BY_HAND = r"""
#include <nerve.h>
#include <stdio.h>

int main(void) {
    nerve_node *node;
    if (nerve_node_init("by-hand", &node) != NERVE_STATUS_OK) {
        fprintf(stderr, "%s\n", nerve_last_error());
        return 1;
    }
    int seen = 0;
    nerve_event *event;
    while (seen < 3 && nerve_node_next_event(node, 10000, &event) == NERVE_STATUS_OK) {
        nerve_event_type type;
        int64_t n;
        nerve_event_get_type(event, &type);
        if (type == NERVE_EVENT_TYPE_INPUT && nerve_event_parameter_int(event, "n", &n) == NERVE_STATUS_OK) {
            printf("n %lld\n", (long long)n);
            seen++;
        }
        nerve_event_free(event);
    }
    nerve_node_free(node); /* leaving is how a node started by hand finishes */
    return seen == 3 ? 0 : 1;
}
"""


def nerve_dir(flag: str) -> Path:
    result = subprocess.run(nerve_cmd(flag), capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return Path(result.stdout.strip())


def test_nerve_prints_where_the_c_library_is():
    assert {p.name for p in nerve_dir("--include-dir").iterdir()} >= {"nerve.h", "node_api.h"}
    lib = nerve_dir("--lib-dir")
    assert (lib / "libnerve.so").is_file() and (lib / "pkgconfig" / "nerve.pc").is_file()
    assert (nerve_dir("--cmake-dir") / "nerveConfig.cmake").is_file()


def test_c_node_started_by_hand_joins_by_id(dataflows, tmp_path):
    source = tmp_path / "by_hand.c"
    source.write_text(BY_HAND)
    flags = subprocess.run(
        ["pkg-config", "--cflags", "--libs", "nerve"],
        env={"PKG_CONFIG_PATH": str(nerve_dir("--lib-dir") / "pkgconfig")},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    program = tmp_path / "by_hand"
    subprocess.run(["cc", "-Wall", "-Werror", str(source), "-o", str(program), *shlex.split(flags)], check=True)
    path = dataflows.write(
        """
        nodes:
          - id: ticker
            path: ticker.py
            inputs: {tick: timer/millis/10}
            outputs: [count]
          - id: by-hand
            path: dynamic
            inputs: {count: ticker/count}
        """,
        {"ticker.py": (NODES / "ticker.py").read_text()},
    )
    proc = dataflows.start(path)
    try:
        wait_for(lambda: (path.parent / "out").exists(), what="run folder")
        node = subprocess.run([str(program)], capture_output=True, text=True, timeout=60)
        assert node.returncode == 0, node.stdout + node.stderr
        values = [int(line.split()[1]) for line in node.stdout.splitlines()]
        assert len(values) == 3 and values == sorted(values), node.stdout
    finally:
        proc.send_signal(2)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, out + err

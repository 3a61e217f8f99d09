"""The C library as `pip install .` installs it: where `nerve` says it is, a C node started by
hand that joins a running dataflow by id, and C programs meeting Python on topics, services and
transforms (the rest of the
C API's tests are tests/c, run by ctest). The C programs are built with pkg-config's flags, under
AddressSanitizer."""

import os
import shlex
import subprocess
from pathlib import Path

import nerve
import numpy as np
import pytest
from conftest import NODES, nerve_cmd, unique_topic

WAIT = 30.0

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
    include = nerve_dir("--include-dir")
    assert {p.name for p in include.iterdir()} >= {"nerve.h", "node_api.h", "nerve.hpp", "nerve"}
    assert (include / "nerve" / "msg.hpp").is_file() and (include / "nerve" / "msg" / "sensor_msgs.hpp").is_file()
    lib = nerve_dir("--lib-dir")
    assert (lib / "libnerve.so").is_file() and (lib / "pkgconfig" / "nerve.pc").is_file()
    assert (nerve_dir("--cmake-dir") / "nerveConfig.cmake").is_file()


def build_c(tmp_path: Path, name: str, source: str) -> Path:
    """Builds C program `name` against the installed library, as a user would, with ASan."""
    path = tmp_path / f"{name}.c"
    path.write_text(source)
    flags = subprocess.run(
        ["pkg-config", "--cflags", "--libs", "nerve"],
        env={"PKG_CONFIG_PATH": str(nerve_dir("--lib-dir") / "pkgconfig")},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    program = tmp_path / name
    sanitize = ["-fsanitize=address", "-fno-omit-frame-pointer", "-g"]
    command = ["cc", "-Wall", "-Werror", *sanitize, str(path), "-o", str(program), *shlex.split(flags)]
    subprocess.run(command, check=True)
    return program


def test_c_node_started_by_hand_joins_by_id(dataflows, tmp_path):
    program = build_c(tmp_path, "by_hand", BY_HAND)
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
        dataflows.wait_accepting(path, proc)
        node = subprocess.run([str(program)], capture_output=True, text=True, timeout=60)
        assert node.returncode == 0, node.stdout + node.stderr
        values = [int(line.split()[1]) for line in node.stdout.splitlines()]
        assert len(values) == 3 and values == sorted(values), node.stdout
    finally:
        out, err = dataflows.interrupt(proc)
    assert proc.returncode == 0, out + err


TOPIC_DOUBLER = r"""
#include <nerve.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call) \
    do { if ((call) != NERVE_STATUS_OK) { fprintf(stderr, "%s\n", nerve_last_error()); return 1; } } while (0)

/* Doubles the int64 values of every message on argv[1] and publishes them on argv[2]. */
int main(int argc, char **argv) {
    if (argc != 4) return 2;
    int count = atoi(argv[3]);
    nerve_subscriber *in;
    nerve_publisher *out;
    CHECK(nerve_subscriber_new(argv[1], NULL, &in));
    CHECK(nerve_publisher_new(argv[2], NULL, &out));
    CHECK(nerve_publisher_wait_for_subscribers(out, 1, 30000));
    printf("ready\n");
    fflush(stdout);
    for (int i = 0; i < count; i++) {
        nerve_event *event;
        const uint8_t *data;
        size_t len;
        int64_t frame;
        CHECK(nerve_subscriber_recv(in, 30000, &event));
        CHECK(nerve_event_bytes(event, &data, &len));
        CHECK(nerve_event_parameter_int(event, "frame", &frame));
        char parameters[64];
        snprintf(parameters, sizeof parameters, "{\"frame\": %lld}", (long long)frame);
        nerve_sample *sample;
        uint8_t *doubled;
        CHECK(nerve_publisher_loan(out, parameters, len, &sample));
        CHECK(nerve_sample_data(sample, &doubled, &len));
        for (size_t k = 0; k < len / 8; k++) {
            int64_t v;
            memcpy(&v, data + 8 * k, 8);
            v *= 2;
            memcpy(doubled + 8 * k, &v, 8);
        }
        CHECK(nerve_publisher_send_sample(out, sample));
        nerve_event_free(event);
    }
    nerve_publisher_free(out);
    nerve_subscriber_free(in);
    return 0;
}
"""


def test_python_publisher_to_c_subscriber_to_python_subscriber(tmp_path):
    program = build_c(tmp_path, "doubler", TOPIC_DOUBLER)
    numbers, doubled = unique_topic("c/numbers"), unique_topic("c/doubled")
    results = nerve.Subscriber(doubled)
    proc = subprocess.Popen(
        [str(program), numbers, doubled, "5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        publisher = nerve.Publisher(numbers)
        assert publisher.wait_for_subscribers(1, timeout=WAIT), "the C subscriber never came"
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"  # C reached our subscriber
        for frame in range(5):
            publisher.send(np.arange(4, dtype=np.int64) + frame, {"frame": frame})
        for frame in range(5):
            message = results.recv(timeout=WAIT)
            assert message is not None, "nothing from the C publisher"
            assert message["metadata"]["frame"] == frame
            assert list(message["value"].to_numpy().view(np.int64)) == [2 * (k + frame) for k in range(4)]
        _, err = proc.communicate(timeout=WAIT)
        assert proc.returncode == 0, err
    finally:
        proc.kill()
        results.close()


SERVICE_PEER = r"""
#include <nerve.h>
#include <stdio.h>
#include <string.h>

#define CHECK(call) \
    do { if ((call) != NERVE_STATUS_OK) { fprintf(stderr, "%s\n", nerve_last_error()); return 1; } } while (0)

/* Sums the int64 values of a request; refuses an empty one. */
static void add(const nerve_event *request, nerve_reply *reply, void *user_data) {
    (void)user_data;
    const uint8_t *data;
    size_t len;
    if (nerve_event_bytes(request, &data, &len) != NERVE_STATUS_OK || len == 0) {
        nerve_reply_error(reply, "nothing to add");
        return;
    }
    int64_t sum = 0, v;
    for (size_t i = 0; i < len / 8; i++) {
        memcpy(&v, data + 8 * i, 8);
        sum += v;
    }
    nerve_reply_bytes(reply, "{\"from\": \"c\"}", (const uint8_t *)&sum, sizeof sum);
}

/* Serves argv[1], calls Python's argv[2], then serves until its standard input closes. */
int main(int argc, char **argv) {
    if (argc != 3) return 2;
    nerve_server *server;
    nerve_client *client;
    nerve_event *reply;
    const uint8_t *data;
    size_t len;
    CHECK(nerve_server_new(argv[1], 0, 1, add, NULL, &server));
    CHECK(nerve_client_new(argv[2], 0, &client));
    CHECK(nerve_client_wait_for_server(client, 30000));
    CHECK(nerve_client_call_bytes(client, NULL, (const uint8_t *)"hello", 5, 30000, &reply));
    CHECK(nerve_event_bytes(reply, &data, &len));
    printf("%.*s\n", (int)len, (const char *)data);
    fflush(stdout);
    nerve_event_free(reply);
    nerve_client_free(client);
    while (getchar() != EOF) {
    }
    nerve_server_free(server);
    return 0;
}
"""


def test_c_server_called_from_python_and_c_client_calling_python(tmp_path):
    program = build_c(tmp_path, "service_peer", SERVICE_PEER)
    c_name, py_name = unique_topic("c_add").replace("/", "_"), unique_topic("py_upper").replace("/", "_")
    upper = nerve.Service(py_name, lambda request: bytes(request["value"].to_numpy()).upper())
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    proc = subprocess.Popen([str(program), c_name, py_name], text=True, **pipes)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "HELLO\n"  # C called Python
        client = nerve.Client(c_name)
        assert client.wait_for_server(timeout=WAIT), "the C server never came"
        reply = client.call(np.array([1, 2, 3], dtype=np.int64), timeout=WAIT)
        assert list(reply["value"].to_numpy().view(np.int64)) == [6]
        assert reply["metadata"]["from"] == "c"
        with pytest.raises(nerve.ServiceError, match="nothing to add"):
            client.call(np.array([], dtype=np.int64), timeout=WAIT)
        _, err = proc.communicate(input="", timeout=WAIT)  # closing its input ends it
        assert proc.returncode == 0, err
    finally:
        proc.kill()
        upper.close()


TF_LOOKUP = r"""
#include <nerve.h>
#include <stdio.h>
#include <stdlib.h>

/* Looks the pose of argv[3] up in argv[2], in transform domain argv[1], waiting up to 30 s,
   and prints it; then the lookup of a frame nothing names, which must fail naming both frames. */
int main(int argc, char **argv) {
    if (argc != 4) return 2;
    nerve_tf_buffer *buffer;
    nerve_transform t;
    if (nerve_tf_buffer_new((uint32_t)atoi(argv[1]), 0, &buffer) != NERVE_STATUS_OK
        || nerve_tf_buffer_lookup(buffer, argv[2], argv[3], NERVE_TF_LATEST, 30000, &t) != NERVE_STATUS_OK) {
        fprintf(stderr, "%s\n", nerve_last_error());
        return 1;
    }
    printf("%.6f %.6f %.6f %.6f %.6f %.6f %.6f\n", t.translation.x, t.translation.y, t.translation.z,
           t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w);
    int status = nerve_tf_buffer_lookup(buffer, argv[2], "nowhere", NERVE_TF_LATEST, 0, &t);
    printf("%s %s\n", nerve_status_name(status), nerve_last_error());
    nerve_tf_buffer_free(buffer);
    return 0;
}
"""


def test_python_broadcaster_looked_up_from_c(tmp_path):
    program = build_c(tmp_path, "tf_lookup", TF_LOOKUP)
    domain = 2000 + os.getpid() % 100000  # transforms of tests running at once never meet
    half = float(np.sqrt(0.5))
    fixed = nerve.StaticTransformBroadcaster(domain=domain)
    fixed.send("base", "camera", [0.2, 0.0, 0.5], [0.0, 0.0, half, half])
    fixed.send("world", "base", [1.0, 2.0, 0.0], [0.0, 0.0, 0.0, 1.0])
    node = subprocess.run([str(program), str(domain), "world", "camera"], capture_output=True, text=True, timeout=60)
    assert node.returncode == 0, node.stderr
    pose, failure = node.stdout.splitlines()
    assert np.allclose([float(v) for v in pose.split()], [1.2, 2.0, 0.5, 0.0, 0.0, half, half]), pose
    assert failure.startswith("NERVE_STATUS_NOT_FOUND nerve_tf_buffer_lookup: no transform from `nowhere` to `world`")
    assert "unknown frame `nowhere`" in failure

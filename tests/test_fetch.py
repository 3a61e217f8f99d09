"""Node files that ``nerve build`` fetches, as dora-rs does: a ``git:`` repository at a
``branch``, ``tag`` or ``rev`` (a real git repository, cloned over ``file://``), and a
``path:`` URL (a real HTTP server on loopback)."""

import http.server
import json
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import nerve_cmd

SENDER = """
import os
import pyarrow as pa
from nerve import Node

VALUE = {value}
# Its working directory is its clone: only a node whose build ran there sees the stamp.
Node().send_output("n", pa.array([VALUE, int(os.path.exists("stamp.txt"))]))
"""

RECEIVER = """
import json
from nerve import Node

seen = {}
for event in Node():
    if event["type"] == "INPUT":
        seen[event["id"]] = event["value"].to_pylist()
print("seen " + json.dumps(seen, sort_keys=True))
"""


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=nerve", "-c", "user.email=nerve@localhost", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str]:
    """A repository whose ``sender.py`` sends 1 at tag ``v1`` (commit returned), 2 on ``main``
    and 3 on branch ``dev``."""
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "--quiet", "--initial-branch=main")
    for value, ref in [(1, "v1"), (2, None)]:
        (work / "sender.py").write_text(SENDER.format(value=value))
        git(work, "add", "sender.py")
        git(work, "commit", "--quiet", "-m", f"send {value}")
        if ref:
            git(work, "tag", ref)
    first = git(work, "rev-parse", "v1")
    git(work, "checkout", "--quiet", "-b", "dev", "v1")
    (work / "sender.py").write_text(SENDER.format(value=3))
    git(work, "commit", "--quiet", "-am", "send 3")
    git(work, "checkout", "--quiet", "main")
    bare = tmp_path / "sender.git"
    git(tmp_path, "clone", "--quiet", "--bare", str(work), str(bare))
    return bare, first


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An HTTP server on loopback serving a folder: its base URL and the folder."""
    served = tmp_path / "served"
    served.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(served), **kwargs)

        def log_message(self, format, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", served
    httpd.shutdown()
    thread.join()


def test_build_clones_each_ref_and_downloads_a_url_then_the_nodes_run_there(dataflows, repo, server):
    bare, first = repo
    base, served = server
    (served / "remote.py").write_text(SENDER.format(value=4))
    url = f"file://{bare}"
    senders = {
        "tagged": {"git": url, "tag": "v1"},
        "pinned": {"git": url, "rev": first},
        "branch": {"git": url, "branch": "dev"},
        "default": {"git": url, "build": "echo built > stamp.txt"},
        "remote": {"path": f"{base}/remote.py"},
    }
    nodes = [{"id": name, "path": "sender.py", "outputs": ["n"], **keys} for name, keys in senders.items()]
    nodes.append({"id": "receiver", "path": "receiver.py", "inputs": {name: f"{name}/n" for name in senders}})
    flow = dataflows.write(json.dumps({"nodes": nodes}), {"receiver.py": RECEIVER})

    valid = subprocess.run(nerve_cmd("validate", str(flow)), capture_output=True, text=True)
    assert valid.returncode == 0, valid.stderr
    early = subprocess.run(nerve_cmd("run", str(flow)), capture_output=True, text=True)
    assert early.returncode != 0
    assert "is not fetched yet; run `nerve build`" in early.stderr, early.stderr

    build = subprocess.run(nerve_cmd("build", str(flow)), capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run(nerve_cmd("run", str(flow)), capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    seen = {"branch": [3, 0], "default": [2, 1], "pinned": [1, 0], "remote": [4, 0], "tagged": [1, 0]}
    assert f"[receiver] seen {json.dumps(seen, sort_keys=True)}" in run.stdout.splitlines(), run.stdout

    # A second build brings the clones up to date: the branch's new commit is what runs next.
    work = bare.parent / "work"
    git(work, "checkout", "--quiet", "dev")
    (work / "sender.py").write_text(SENDER.format(value=5))
    git(work, "commit", "--quiet", "-am", "send 5")
    git(work, "push", "--quiet", str(bare), "dev")
    rebuild = subprocess.run(nerve_cmd("build", str(flow)), capture_output=True, text=True)
    assert rebuild.returncode == 0, rebuild.stdout + rebuild.stderr
    assert "[branch] fetch:" in rebuild.stdout, rebuild.stdout
    again = subprocess.run(nerve_cmd("run", str(flow)), capture_output=True, text=True)
    assert f"[receiver] seen {json.dumps(seen | {'branch': [5, 0]}, sort_keys=True)}" in again.stdout, again.stdout


def test_what_cannot_be_fetched_fails_the_build_saying_why(dataflows, repo, server):
    bare, _ = repo
    base, _ = server
    nowhere = f"file://{bare.parent / 'nowhere.git'}"
    cases = [
        ({"git": f"file://{bare}", "tag": "v9", "path": "sender.py"}, "cannot check out tag `v9`"),
        ({"git": nowhere, "path": "sender.py"}, "does not appear to be a git repository"),
        ({"path": f"{base}/missing.py"}, "404"),
    ]
    for keys, why in cases:
        flow = dataflows.write(json.dumps({"nodes": [{"id": "n", **keys}]}))
        build = subprocess.run(nerve_cmd("build", str(flow)), capture_output=True, text=True)
        assert build.returncode != 0
        assert "node `n`: cannot fetch" in build.stderr and why in build.stderr, build.stderr


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({"tag": "v1", "path": "x.py"}, "`tag` chooses a commit of the `git:` repository, and the node has no `git:`"),
        ({"git": "file:///r.git", "tag": "v1", "rev": "abc", "path": "x.py"}, "`tag` and `rev` both choose"),
        ({"git": "file:///r.git", "path": "https://example.com/x.py"}, "relative to the clone, not a URL"),
        ({"path": "ftp://example.com/x.py"}, "only over https or http, not `ftp://`"),
        ({"git": "file:///r.git", "rev": "--upload-pack=touch", "path": "x.py"}, "is not a git rev: empty or starting"),
    ],
)
def test_wrong_fetch_keys_are_refused_before_anything_runs(dataflows, keys, message):
    flow = dataflows.write(json.dumps({"nodes": [{"id": "n", **keys}]}))
    valid = subprocess.run(nerve_cmd("validate", str(flow)), capture_output=True, text=True)
    assert valid.returncode != 0
    assert message in valid.stderr, valid.stderr

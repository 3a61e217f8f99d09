"""Every code block of README.md and docs/*.md runs as its page shows it, so a snippet that
breaks fails CI.

Blocks run page by page, in the order the page shows them, in a folder of the page's own (its
files, its shell's working directory) with a registry of its own (``XDG_RUNTIME_DIR``), so the
page's programs, commands and dataflows meet each other and nothing else. By language:

* ``python``: a block headed ``# name.py`` is a file of the page: a node of the page's dataflow,
  or a program run where the page shows it (in the background when the page runs it beside
  others, see ``UNTIL_STOPPED``). Any other block that makes a ``Node()`` runs as the only node of
  a dataflow (under ``--sim-time`` when it sets the time; stopped by Ctrl-C, a STOP event, once
  running when it reads events). A block that is not Python but a summary of the API (``nerve.Publisher(topic, *,
  …)`` then ``.send(data, …)``) is checked name by name, signature by signature, against the
  installed package. Anything else runs as a program and must exit with status 0.
* ``yaml``: the page's dataflow (``nodes:``) is checked with ``nerve validate`` (node files the
  page does not show stand in as empty files) and run when the page shows every node's file. A
  node entry (``- id: …``) is validated as one more node of the page's dataflow.
* ``sh`` and ``console`` (``$ `` lines): each ``nerve`` command runs in the page's folder and must
  exit with status 0, or with the ``exit code N`` its comment names; one that runs until Ctrl-C
  is interrupted once it has printed, as a user would. A synopsis (``nerve run FILE [--build]``)
  is checked against ``nerve … --help``, as are the options a command's comment names.
  ``nerve … &`` runs beside the commands after it (a daemon is waited for until the coordinator
  lists it). ``cd DIR`` moves the page's shell; ``examples/…`` are copies of the repository's;
  ``pip install .`` is how this test's environment was made.
* ``rust``: every block is compiled, all in one crate and one ``cargo build`` against this
  workspace's crates (``test_rust_blocks_compile``).
* ``toml``: parsed; its dependencies are crates of this workspace at their version.
* ``c``, ``cpp`` and ``cmake``: a file of the page, named by its first line (``// node.c``,
  ``// node.cpp``, ``# CMakeLists.txt``), built by the page's own commands (a dataflow's ``build:``).
* ``text``: output shown to the reader, not run.

A block that cannot run here says why in an HTML comment right before its fence,
``<!-- not run: needs a second machine -->``; any other block the test cannot run fails it.
"""

from __future__ import annotations

import ast
import inspect
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import nerve
import pytest
from conftest import REPO, build_workspace_binaries, nerve_cmd, target_dir, wait_for

PAGES = ["README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md"))]
LANGUAGES = {"python", "yaml", "sh", "console", "rust", "toml", "c", "cpp", "cmake", "text"}

# Programs and dataflows of a page that run until they are stopped, like a server in a second
# terminal: the page's later blocks run while they do. Each maps to the program whose first
# line of output says it is up (None: nothing to wait for). When the page is done they are
# stopped as a user would (Enter for a program waiting for it, else Ctrl-C) and must not have
# failed.
UNTIL_STOPPED: dict[str, dict[str, str | None]] = {
    "docs/services.md": {"server.py": "server.py"},
    "docs/actions.md": {"server.py": "server.py"},
    # The listener prints once the talker's messages arrive.
    "docs/topics.md": {"listener.py": None, "talker.py": "listener.py"},
    # The listener's lookup waits for the robot's transforms itself.
    "docs/transforms.md": {"robot.py": None},
    # `nerve param` talks to the running nodes.
    "docs/parameters.md": {"dataflow.yml": "dataflow.yml"},
}

# Files a page's dataflow names without showing them, taken from the example it points to, and
# workspace binaries to build first. A page's folder sits two levels below a `target` that is
# this workspace's, as an example's does, so `../../target/release/…` finds them.
SUPPLIED: dict[str, dict[str, str]] = {"docs/parameters.md": {"limiter.yml": "examples/parameters/limiter.yml"}}
BUILT: dict[str, list[str]] = {"docs/parameters.md": ["parameters-limiter"]}

# Commands that run until Ctrl-C (their pages say so), interrupted once they have printed.
UNTIL_CTRL_C = [re.compile(p) for p in (r"^topic (hz|bw)\b(?!.*--duration)", r"^(topic|tf) echo\b(?!.*--count)")]

TIMEOUT = 120  # seconds any one program or command may take: a bound on failure, not a wait


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: str
    line: int
    lang: str
    code: str
    not_run: str | None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def file(self) -> str | None:
        """The file a Python, YAML, C, C++ or CMake block names in its first line (``# server.py``,
        ``# modules/arm.yml``, ``// node.c``, ``// node.cpp``, ``# CMakeLists.txt``)."""
        pattern = {
            "python": r"# ([\w./-]+\.py)\b",
            "yaml": r"# ([\w./-]+\.ya?ml)\b",
            "c": r"// ([\w.-]+\.[ch])\b",
            "cpp": r"// ([\w.-]+\.[ch]pp)\b",
            "cmake": r"# (CMakeLists\.txt)\b",
        }
        m = re.match(pattern.get(self.lang, r"(?!)"), self.code)
        return m[1] if m else None


FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
NOT_RUN = re.compile(r"^\s*<!-- not run: (?P<why>.+?) -->\s*$")


def blocks(page: str) -> list[Block]:
    lines = (REPO / page).read_text().splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        end = i + 1
        while end < len(lines) and not re.match(rf"^\s*{fence[0]}{{{len(fence)},}}\s*$", lines[end]):
            end += 1
        before = next((line for line in reversed(lines[:i]) if line.strip()), "")
        marked = NOT_RUN.match(before)
        code = "\n".join(line.removeprefix(indent) for line in lines[i + 1 : end]) + "\n"
        lang = opening["info"].strip().split(",")[0].split(" ")[0]
        found.append(Block(page, i + 1, lang, code, marked["why"] if marked else None))
        i = end + 1
    return found


def all_blocks() -> Iterator[Block]:
    for page in PAGES:
        yield from blocks(page)


# --- processes -------------------------------------------------------------------------------


class Proc:
    """A process whose output lines are collected as they come, to wait for one of them."""

    def __init__(self, name: str, args: list[str], cwd: Path, env: dict[str, str], stdin: bool = False) -> None:
        self.name = name
        self.args = args
        self.lines: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self.changed = threading.Condition()
        self.proc = subprocess.Popen(
            args,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.readers = [
            threading.Thread(target=self._read, args=(stream, getattr(self.proc, stream)), daemon=True)
            for stream in self.lines
        ]
        for reader in self.readers:
            reader.start()

    def _read(self, stream: str, pipe) -> None:
        for line in pipe:
            with self.changed:
                self.lines[stream].append(line.rstrip("\n"))
                self.changed.notify_all()
        with self.changed:
            self.changed.notify_all()

    @property
    def output(self) -> str:
        with self.changed:
            return "\n".join(["$ " + shlex.join(self.args), *self.lines["stdout"], *self.lines["stderr"]])

    def wait_line(self, stream: str, predicate: Callable[[str], bool], what: str) -> None:
        """Waits until a line of `stream` satisfies `predicate`; fails if the process ends first."""

        def seen() -> bool:
            return any(predicate(line) for line in self.lines[stream])

        def ended() -> bool:
            return not any(r.is_alive() for r in self.readers)

        with self.changed:
            if not self.changed.wait_for(lambda: seen() or ended(), timeout=TIMEOUT):
                pytest.fail(f"{self.name}: no {what} within {TIMEOUT} s\n{self.output}")
            if not seen():
                self.proc.wait()
                pytest.fail(f"{self.name}: ended (status {self.proc.returncode}) before its {what}\n{self.output}")

    def interrupt(self) -> None:
        """Ctrl-C, unless it has ended already."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)

    def finish(self) -> int:
        """Waits for the end (and the last of its output); its exit status."""
        try:
            self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"{self.name}: still running after {TIMEOUT} s\n{self.output}")
        for reader in self.readers:
            reader.join()
        return self.proc.returncode

    def expect(self, status: int = 0) -> Proc:
        if self.finish() != status:
            pytest.fail(f"{self.name}: exit status {self.proc.returncode}, not {status}\n{self.output}")
        return self

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# --- pages -------------------------------------------------------------------------------------


def comment_start(text: str) -> int:
    """Where the shell comment of `text` starts (len(text) if none): a `#` outside quotes."""
    quote = None
    for i, c in enumerate(text):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or text[i - 1].isspace()):
            return i
    return len(text)


def commands(block: Block) -> Iterator[tuple[str, str]]:
    """The commands of a sh or console block, each with its comment."""
    for line in block.code.splitlines():
        if block.lang == "console":
            if not line.startswith("$ "):
                continue  # what the command printed
            line = line[2:]
        cut = comment_start(line)
        text, comment = line[:cut].strip(), line[cut:]
        for command in filter(None, (c.strip() for c in text.split("&&"))):
            yield command, comment


def node_paths(yaml: str) -> list[str]:
    """The files a dataflow runs: its nodes' `path:` and its operators' `python:`."""
    return re.findall(r"^\s*-?\s*(?:path|python):\s*([^\s#]+)", yaml, re.M)


class Page:
    """Runs the blocks of one page, in order, in a folder of its own."""

    def __init__(self, page: str, tmp_path: Path, registry: Path) -> None:
        self.page = page
        self.blocks = blocks(page)
        self.dir = tmp_path / "docs" / Path(page).stem
        self.dir.mkdir(parents=True)
        self.cwd = self.dir
        (tmp_path / "target").symlink_to(target_dir(), target_is_directory=True)
        self.stubs = tmp_path / "bin"
        self.stubs.mkdir()
        # `nerve graph --open` opens the page with whatever browser the desktop has: here, none.
        self.opened = tmp_path / "opened"
        stub(self.stubs / "xdg-open", f'echo "$1" >> {shlex.quote(str(self.opened))}')
        self.env = {
            **os.environ,
            "XDG_RUNTIME_DIR": str(registry),
            "PATH": f"{self.stubs}{os.pathsep}{os.environ['PATH']}",
            "PYTHONUNBUFFERED": "1",  # as on a terminal: each line when it is printed
            "NERVE_LOG": "info",
        }
        # What runs in the background: UNTIL_STOPPED's, which must still run when the page is
        # done, and commands put there with `&`, which may have ended by then (`nerve destroy`).
        self.running: dict[str, Proc] = {}
        self.ends_by_itself: set[str] = set()
        self.cluster = False  # whether `nerve up` ran: a coordinator and daemons in the background
        self.files = {b.file: b for b in self.blocks if b.file}
        dataflows = [b for b in self.blocks if b.lang == "yaml" and re.match(r"(#.*\n)*nodes:", b.code)]
        assert len(dataflows) <= 1, f"{page}: one dataflow per page, not {[b.where for b in dataflows]}"
        self.dataflow = dataflows[0] if dataflows else None

    # The page's files: its named Python blocks, its dataflow, what it names but does not show.
    def prepare(self) -> None:
        for name, block in self.files.items():
            (self.dir / name).parent.mkdir(parents=True, exist_ok=True)
            (self.dir / name).write_text(block.code)
        for name, source in SUPPLIED.get(self.page, {}).items():
            shutil.copy(REPO / source, self.dir / name)
        if BUILT.get(self.page):
            build_workspace_binaries()
        shown = " ".join(b.code for b in self.blocks if b.lang in ("sh", "console") and not b.not_run)
        for example in sorted(set(re.findall(r"\bexamples/([\w-]+)", shown))):
            shutil.copytree(REPO / "examples" / example, self.dir / "examples" / example, ignore=IGNORED)
        if self.dataflow:
            (self.dir / "dataflow.yml").write_text(self.dataflow.code)
            self.stand_in(self.dataflow.code)
        for name, block in self.files.items():
            if block.lang == "yaml":
                self.stand_in(block.code, Path(name).parent)

    def node_files(self) -> list[str]:
        """The node files of the page's dataflow and of its module files, from the page's folder."""
        paths = node_paths(self.dataflow.code) if self.dataflow else []
        for name, block in self.files.items():
            if block.lang == "yaml":
                paths += [str(Path(name).parent / p) for p in node_paths(block.code)]
        return paths

    def stand_in(self, yaml: str, folder: Path | None = None) -> None:
        """Empty files for the nodes a dataflow (or a module file in `folder`) names that the page
        does not show, so that validation checks the rest (none of them runs)."""
        base = self.dir / (folder or "")
        for path in node_paths(yaml):
            if path == "dynamic" or (base / path).exists():
                continue
            if "/" in path or path.endswith(".py"):
                target = (base / path).resolve()
                if target.is_relative_to(self.dir):
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.touch(mode=0o755)  # a program to build, which validation wants executable
            elif shutil.which(path) is None:  # a program on PATH, which this one lacks
                stub(self.stubs / path, "exit 0")

    def shown(self, yaml: str) -> bool:
        """Whether the page shows (or supplies) the file of every node of `yaml`."""
        return all((self.dir / p).exists() and (self.dir / p).stat().st_size for p in node_paths(yaml))

    def run(self) -> None:
        self.prepare()
        try:
            for block in self.blocks:
                if block.not_run:
                    continue
                handler = getattr(self, f"run_{block.lang}", None)
                if handler is None:
                    pytest.fail(f"{block.where}: no way to run a `{block.lang or 'plain'}` block: give it a language")
                handler(block)
            self.stop_all()
        finally:
            for proc in self.running.values():
                proc.kill()
            if self.cluster:  # the page's own `nerve destroy` did not run if it failed first
                subprocess.run(nerve_cmd("destroy"), env=self.env, capture_output=True, timeout=TIMEOUT)

    def start(self, name: str, args: list[str], block: Block, stdin: bool = False) -> Proc:
        return Proc(f"{block.where}: {name}", args, self.cwd, self.env, stdin)

    # A program or dataflow of UNTIL_STOPPED goes on running; any other must end well.
    def launch(self, name: str, args: list[str], block: Block) -> None:
        until_stopped = UNTIL_STOPPED.get(self.page, {})
        proc = self.start(name, args, block, stdin="input(" in block.code)
        if name not in until_stopped:
            proc.expect(0)
            return
        self.running[name] = proc
        if (ready := until_stopped[name]) is not None:
            self.running[ready].wait_line("stdout", bool, "first line of output")

    def stop_all(self) -> None:
        for name, proc in self.running.items():
            if proc.proc.poll() is not None and name not in self.ends_by_itself:
                pytest.fail(f"{proc.name} ended (status {proc.proc.returncode}) before the page did\n{proc.output}")
        for proc in self.running.values():
            if proc.proc.stdin:
                proc.proc.stdin.write("\n")  # "press Enter to stop"
                proc.proc.stdin.close()
            else:
                proc.interrupt()
        for proc in self.running.values():
            # A Python program stopped by Ctrl-C dies of it; `nerve run` ends with its nodes' status.
            if proc.finish() not in (0, -signal.SIGINT):
                pytest.fail(f"{proc.name}: exit status {proc.proc.returncode} once stopped\n{proc.output}")

    # --- by language ---

    def run_python(self, block: Block) -> None:
        if block.file:
            if block.file in self.node_files():
                return  # it runs in the page's dataflow
            self.launch(block.file, [sys.executable, block.file], block)
        elif not parses(block.code):
            check_api_summary(block)
        elif re.search(r"\bNode\(", block.code):
            self.run_node(block)
        else:
            script = self.dir / f"block-{block.line}.py"
            script.write_text(block.code)
            self.start(script.name, [sys.executable, str(script)], block).expect(0)

    def run_node(self, block: Block) -> None:
        """A node on its own: the only node of a dataflow that declares what it sends. One that
        reads events is stopped with Ctrl-C once it runs (a STOP event), as `nerve run` is."""
        name = f"node-{block.line}"
        (self.dir / f"{name}.py").write_text(block.code)
        outputs = sorted(set(re.findall(r"send_output(?:_raw)?\(\s*\"([\w.-]+)\"", block.code)))
        (self.dir / f"{name}.yml").write_text(f"nodes:\n  - id: {name}\n    path: {name}.py\n    outputs: {outputs}\n")
        flags = ["--sim-time"] if "set_sim_time(" in block.code else []
        proc = self.start(name, nerve_cmd("run", str(self.dir / f"{name}.yml"), *flags), block)
        if re.search(r"\bfor \w+ in node\b", block.code):
            proc.wait_line("stderr", lambda line: "all nodes ready" in line, "start of the run")
            proc.interrupt()
        proc.expect(0)

    def run_yaml(self, block: Block) -> None:
        if block.file:
            return  # a module file: the page's dataflow reads it
        if block is self.dataflow:
            path = str(self.dir / "dataflow.yml")
            nerve_ok(self, block, "validate", path)
            if self.shown(block.code):
                self.launch("dataflow.yml", nerve_cmd("run", path), block)
            return
        if not re.match(r"\s*- id:", block.code):
            pytest.fail(f"{block.where}: a YAML block is a dataflow (`nodes:`) or a node entry (`- id:`)")
        # A node entry: one more node of the page's dataflow, or of a dataflow of its own.
        base = self.dataflow.code if self.dataflow else "nodes:\n"
        path = self.dir / f"entry-{block.line}.yml"
        path.write_text(base + block.code)
        self.stand_in(block.code)
        nerve_ok(self, block, "validate", str(path))

    def run_sh(self, block: Block) -> None:
        for command, comment in commands(block):
            words = shlex.split(command)
            if words == ["pip", "install", "."]:
                assert Path(nerve.__file__).is_file()  # what made this test's environment
            elif words[0] == "cd" and len(words) == 2:
                self.cwd = (self.cwd / words[1]).resolve()
                assert self.cwd.is_dir(), f"{block.where}: no folder {words[1]}"
            elif words[0] == "nerve" and words[-1] == "&":
                self.run_in_background(block, command.removesuffix("&").strip(), words[1:-1])
            elif words[0] == "nerve":
                self.run_nerve(block, command, comment)
            else:
                pytest.fail(
                    f"{block.where}: cannot run `{command}` here: make the block runnable, or mark "
                    "it `<!-- not run: why -->`"
                )

    run_console = run_sh

    def run_nerve(self, block: Block, command: str, comment: str) -> None:
        words = shlex.split(command)[1:]
        sub = subcommand(words)
        unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", "", command)
        # Options the command or its comment names are options of that command.
        help_text = nerve_help(tuple(sub))
        for option in re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", unquoted + comment):
            if not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", help_text):
                pytest.fail(f"{block.where}: `nerve {' '.join(sub)}` has no option {option}:\n{help_text}")
        if re.search(r"\[|…|\b[A-Z][A-Z-]{2,}\b", unquoted):
            return  # a synopsis (`nerve run FILE [--build]`): its options are checked
        status = int(m[1]) if (m := re.search(r"exit code (\d+)", comment)) else 0
        self.cluster |= sub == ["up"]
        proc = self.start(f"nerve {' '.join(sub)}", nerve_cmd(*words), block)
        if any(p.search(" ".join(words)) for p in UNTIL_CTRL_C):
            proc.wait_line("stdout", bool, "output")
            proc.interrupt()
        proc.expect(status)
        if "--open" in words:
            assert self.opened.is_file(), f"{block.where}: nothing was opened"

    def run_in_background(self, block: Block, command: str, words: list[str]) -> None:
        """`nerve … &`: runs beside the page's next commands. A daemon is waited for until the
        coordinator lists it, as the `nerve check` that pages show after one does."""
        self.running[command] = self.start(command, nerve_cmd(*words), block)
        self.ends_by_itself.add(command)
        if words[0] == "daemon":
            machine = words[words.index("--machine-id") + 1]

            def listed() -> bool:
                check = subprocess.run(nerve_cmd("check"), env=self.env, capture_output=True, text=True)
                return f"daemon `{machine}`" in check.stdout

            wait_for(listed, TIMEOUT, f"{block.where}: the daemon of `{machine}` to join")

    def run_rust(self, block: Block) -> None:
        pass  # compiled with every other: test_rust_blocks_compile

    def run_toml(self, block: Block) -> None:
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10: the `name = "version"` lines alone
            dependencies = dict(re.findall(r'^([\w-]+) = "([^"]+)"', block.code, re.M))
        else:
            dependencies = tomllib.loads(block.code).get("dependencies", {})
        crates = workspace_crates()
        for name, spec in dependencies.items():
            assert name in crates, f"{block.where}: {name} is no crate of this workspace"
            version = spec if isinstance(spec, str) else spec.get("version", crates[name])
            assert crates[name].startswith(version), f"{block.where}: {name} is at {crates[name]}, not {version}"

    def run_c(self, block: Block) -> None:
        assert block.file, f"{block.where}: a C block names its file in its first line (`// node.c`)"

    def run_cpp(self, block: Block) -> None:
        assert block.file, f"{block.where}: a C++ block names its file in its first line (`// node.cpp`)"

    def run_cmake(self, block: Block) -> None:
        assert block.file, f"{block.where}: a CMake block is the page's `# CMakeLists.txt`"

    def run_text(self, block: Block) -> None:
        pass  # output shown to the reader


IGNORED = shutil.ignore_patterns("out", "target", "build", "__pycache__", "*.mcap")


def stub(path: Path, script: str) -> None:
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)


def parses(code: str) -> bool:
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True


def nerve_ok(page: Page, block: Block, *args: str) -> None:
    page.start(f"nerve {args[0]}", nerve_cmd(*args), block).expect(0)


@cache
def nerve_help(sub: tuple[str, ...]) -> str:
    result = subprocess.run(nerve_cmd(*sub, "--help"), capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    return result.stdout


def subcommand(words: list[str]) -> list[str]:
    """The leading words of `nerve …` that name its subcommand (`topic echo`)."""
    sub: list[str] = []
    for word in words:
        listed = re.search(r"^Commands:\n(.*?)\n\n", nerve_help(tuple(sub)), re.S | re.M)
        if not listed or not re.search(rf"^\s+{re.escape(word)}\s", listed[1], re.M):
            break
        sub.append(word)
    return sub


@cache
def workspace_crates() -> dict[str, str]:
    version = re.search(r'^\[workspace\.package\]\n(?:.*\n)*?version = "([^"]+)"', cargo_toml(), re.M)
    assert version
    return {p.name: version[1] for p in (REPO / "crates").iterdir() if (p / "Cargo.toml").is_file()}


def cargo_toml() -> str:
    return (REPO / "Cargo.toml").read_text()


# --- API summaries -----------------------------------------------------------------------------


def check_api_summary(block: Block) -> None:
    """A block like ``nerve.Publisher(topic, *, domain=0)`` followed by ``    .send(data)``
    lines: every class, member and signature it names is the package's."""
    cls = None
    pending = ""
    for raw in block.code.splitlines():
        line = (pending + " " + raw[: comment_start(raw)].strip()).strip()
        if line.count("(") + line.count("[") > line.count(")") + line.count("]"):
            pending = line  # a signature that goes on on the next line
            continue
        pending = ""
        if not line:
            continue
        if m := re.fullmatch(r"nerve\.(\w+)\((.*)\)", line):
            cls = getattr(nerve, m[1], None)
            assert cls is not None, f"{block.where}: nerve has no {m[1]}"
            check_signature(block, f"nerve.{m[1]}", cls, m[2])
        elif line == "iteration":
            assert cls is not None and hasattr(cls, "__iter__"), f"{block.where}: {cls} is not iterable"
        elif line.startswith("."):
            assert cls is not None, f"{block.where}: `{line}` before any class"
            for item in top_level_items(line):
                m = re.fullmatch(r"\.(\w+)(?:\((.*)\))?", item)
                assert m, f"{block.where}: cannot read `{item}` as a member"
                found = getattr(cls, m[1], None)
                assert found is not None, f"{block.where}: {cls.__name__} has no {m[1]}"
                if m[2] is not None:
                    check_signature(block, f"{cls.__name__}.{m[1]}", found, m[2])
        else:
            pytest.fail(f"{block.where}: cannot read `{line}` as a class, a member or `iteration`")


def top_level_items(line: str) -> list[str]:
    """`.send(a, b), .loan(c)` as its comma-separated items, not splitting inside brackets."""
    items, depth, start = [], 0, 0
    for i, c in enumerate(line):
        depth += (c in "([") - (c in ")]")
        if c == "," and depth == 0:
            items.append(line[start:i].strip())
            start = i + 1
    return [*items, line[start:].strip()]


def check_signature(block: Block, name: str, obj: object, shown: str) -> None:
    """The parameters `shown` (``topic, *, domain=0``) are `obj`'s, names, kinds and defaults;
    ``...`` or an example value instead of names checks only that it is callable."""
    assert callable(obj), f"{block.where}: {name} is not callable"
    try:
        tree = ast.parse(f"def f({shown}): pass").body[0]
    except SyntaxError:
        return  # `send(...)`, `send_many([(parent, …), ...])`: no names to check
    assert isinstance(tree, ast.FunctionDef)
    real = [p for p in inspect.signature(obj).parameters.values() if p.name != "self"]
    args = tree.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    kinds = [(a, "positional") for a in positional] + [(a.arg, "keyword") for a in args.kwonlyargs]
    defaults = dict(zip(positional[::-1], args.defaults[::-1], strict=False))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None})
    real_kinds = [(p.name, "keyword" if p.kind is p.KEYWORD_ONLY else "positional") for p in real]
    assert kinds == real_kinds, f"{block.where}: {name}({shown}), but it is {name}{inspect.signature(obj)}"
    for param in real:
        shown_default = ast.literal_eval(defaults[param.name]) if param.name in defaults else param.empty
        assert shown_default == param.default, (
            f"{block.where}: {name}'s {param.name} defaults to {param.default!r}, not {shown_default!r}"
        )


# --- tests -------------------------------------------------------------------------------------


@pytest.fixture
def registry() -> Iterator[Path]:
    """A runtime folder of the page's own: its topics, services, runs and Zenoh sessions meet in
    it and nowhere else. Short, since Unix socket paths inside it are limited to 108 bytes."""
    folder = Path(tempfile.mkdtemp(prefix="nerve-docs-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("page", PAGES)
def test_page(page: str, tmp_path: Path, registry: Path) -> None:
    Page(page, tmp_path, registry).run()


def test_every_block_says_its_language_and_every_mark_why() -> None:
    problems = [
        f"{b.where}: `{b.lang or 'no language'}` (one of {sorted(LANGUAGES)})"
        for b in all_blocks()
        if b.lang not in LANGUAGES
    ]
    assert not problems, "blocks the test cannot run:\n" + "\n".join(problems)
    for page in PAGES:
        text = (REPO / page).read_text()
        marks = text.count("<!-- not run")
        assert marks == sum(1 for b in blocks(page) if b.not_run), f"{page}: a `not run` mark not before a fence"


@pytest.mark.timeout(1800)  # a first build of the workspace's crates, when nothing built them yet
def test_rust_blocks_compile() -> None:
    """Every Rust block compiles: all in one crate against this workspace's crates, built with
    the release profile into the workspace's target folder, reusing what is built there."""
    rust = [b for b in all_blocks() if b.lang == "rust" and not b.not_run]
    crate = target_dir() / "doc-blocks"
    (crate / "src").mkdir(parents=True, exist_ok=True)
    used = sorted({m.replace("_", "-") for b in rust for m in re.findall(r"\b(nerve_\w+?)::", b.code)})
    crates = workspace_crates()
    assert all(c in crates for c in used), f"crates the blocks use that the workspace lacks: {used}"
    # What the wheel's build was, so that it is reused: nerve-c, whose dependencies are all the
    # workspace's libraries (cargo then turns on the features it did), and the workspace's release
    # profile, its crates keeping their line tables as members of it do.
    profile = "".join(re.findall(r"^\[profile\.release[^\]]*\]\n(?:[^\[].*\n)*", cargo_toml(), re.M))
    members = sorted(c for c in crates if c != "nerve-python")  # the one crate nerve-c lacks
    profile += "".join(f'[profile.release.package.{c}]\ndebug = "line-tables-only"\n' for c in members)
    dependencies = "".join(f'{c} = {{ path = "{REPO / "crates" / c}" }}\n' for c in sorted({*used, "nerve-c"}))
    (crate / "Cargo.toml").write_text(
        '[package]\nname = "doc-blocks"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n'
        f"[dependencies]\n{dependencies}\n[workspace]\n\n{profile}"
    )
    # The workspace's versions of every dependency: nothing to fetch, nothing built anew.
    shutil.copy(REPO / "Cargo.lock", crate / "Cargo.lock")
    source, places = rust_crate(rust)
    (crate / "src" / "lib.rs").write_text(source)
    result = subprocess.run(
        ["cargo", "build", "--release", "--offline", "--lib", "--manifest-path", str(crate / "Cargo.toml")],
        env={**os.environ, "CARGO_TARGET_DIR": str(target_dir())},
        capture_output=True,
        text=True,
        timeout=1700,
    )
    assert result.returncode == 0, f"{result.stderr}\n(src/lib.rs lines of each block: {places})"


def rust_crate(rust: list[Block]) -> tuple[str, dict[str, str]]:
    """One module per block: a block with its own `fn main` as it is, any other as the body of
    a function returning a `Result` (its `?` work as in a `main`)."""
    source = ["#![allow(unused, dead_code, unreachable_code, clippy::all)]\n"]
    places = {}
    for i, block in enumerate(rust):
        start = sum(part.count("\n") for part in source) + 2
        if re.search(r"^fn main\(", block.code, re.M):
            body = block.code
        else:
            indented = "".join(f"    {line}\n" if line else "\n" for line in block.code.splitlines())
            body = f"fn block() -> Result<(), Box<dyn std::error::Error>> {{\n{indented}    Ok(())\n}}\n"
        source.append(f"// {block.where}\nmod block_{i} {{\n{body}}}\n")
        places[block.where] = f"{start}-{start + body.count(chr(10)) + 1}"
    return "".join(source), places

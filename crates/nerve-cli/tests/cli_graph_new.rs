//! `nerve graph` and `nerve new`, run as the built binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh folder under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!("nerve-cli-test-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn nerve() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_nerve"));
    cmd.env_remove("NERVE_NODE_PATH");
    cmd
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("run nerve")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

const FIXTURE: &str = "\
nodes:
  - id: camera
    path: camera.py
    inputs:
      tick: dora/timer/millis/20
    outputs: [image, depth]
  - id: detector
    path: dynamic
    inputs:
      image:
        source: camera/image
        queue_size: 1
        queue_policy: drop_oldest
    outputs: [boxes]
  - id: viewer
    path: dynamic
    inputs:
      frame: camera/image
      boxes: detector/boxes
      redraw: dora/timer/millis/20
";

/// Writes the fixture dataflow (and its Python node) into `dir`.
fn fixture(dir: &Path) -> PathBuf {
    std::fs::write(dir.join("camera.py"), "print('camera')\n").expect("write camera.py");
    let file = dir.join("dataflow.yml");
    std::fs::write(&file, FIXTURE).expect("write dataflow.yml");
    file
}

#[test]
fn graph_prints_mermaid_with_every_edge() {
    let dir = TempDir::new("graph-stdout");
    let file = fixture(dir.path());
    let out = run(nerve().arg("graph").arg(&file));
    assert!(out.status.success(), "{}", stderr(&out));
    let chart = stdout(&out);
    assert!(chart.starts_with("flowchart TB\n"), "{chart}");
    for line in [
        "timer_millis_20([\"timer 20 ms\"])",
        "n_camera[\"camera<br/><small>camera.py</small>\"]",
        "timer_millis_20 -- \"tick\" --> n_camera",
        "n_camera -- \"image [queue 1, drop_oldest]\" --> n_detector",
        "n_camera -- \"image as frame\" --> n_viewer",
        "n_detector -- \"boxes\" --> n_viewer",
        "timer_millis_20 -- \"redraw\" --> n_viewer",
        "n_camera -. \"depth\" .-> out_camera_odepth",
        "class n_detector,n_viewer dynamic",
    ] {
        assert!(chart.contains(&format!("    {line}\n")), "missing `{line}` in\n{chart}");
    }
    assert_eq!(chart.matches("([\"timer 20 ms\"])").count(), 1, "{chart}");
}

#[test]
fn graph_writes_html_markdown_and_mermaid_files() {
    let dir = TempDir::new("graph-output");
    let file = fixture(dir.path());
    let chart = stdout(&run(nerve().arg("graph").arg(&file)));

    let page = dir.path().join("graph.html");
    let out = run(nerve().arg("graph").arg(&file).arg("--output").arg(&page));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "the graph went to the file");
    let html = read(&page);
    assert!(html.starts_with("<!DOCTYPE html>"));
    // It carries its renderer (tests/test_graph.py draws it in a browser with no network).
    assert!(!html.contains("src=\"http") && html.contains("which this page carries"));
    let escaped = chart.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;");
    assert!(html.contains(&escaped), "chart not embedded");

    let mmd = dir.path().join("graph.mmd");
    assert!(run(nerve().arg("graph").arg(&file).arg("-o").arg(&mmd)).status.success());
    assert_eq!(read(&mmd), chart);

    let md = dir.path().join("graph.md");
    assert!(run(nerve().arg("graph").arg(&file).arg("-o").arg(&md)).status.success());
    assert_eq!(read(&md), format!("```mermaid\n{chart}```\n"));
}

#[test]
fn graph_open_without_a_browser_says_where_the_page_is() {
    let dir = TempDir::new("graph-open");
    let file = fixture(dir.path());
    let no_programs = dir.path().join("empty-bin");
    std::fs::create_dir(&no_programs).expect("create empty bin dir");

    let page = dir.path().join("view.html");
    let out = run(nerve().arg("graph").arg(&file).arg("--open").arg("--output").arg(&page).env("PATH", &no_programs));
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("is not available"), "{err}");
    assert!(err.contains(&format!("open file://{} in a web browser", page.display())), "{err}");
    assert!(read(&page).contains("<pre class=\"mermaid\">"));

    // Without --output the page goes to a new temporary file.
    let out = run(nerve().arg("graph").arg(&file).arg("--open").env("PATH", &no_programs));
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let written = err
        .lines()
        .find_map(|l| l.strip_prefix("nerve: wrote "))
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("no `wrote` line in {err}"));
    let html = read(&written);
    let _ = std::fs::remove_file(&written);
    assert!(html.contains("<pre class=\"mermaid\">"), "{html}");
    assert_eq!(written.extension().and_then(|e| e.to_str()), Some("html"));

    let out = run(nerve().arg("graph").arg(&file).arg("--open").arg("--output").arg(dir.path().join("g.mmd")));
    assert!(!out.status.success());
    assert!(stderr(&out).contains("not .html"), "{}", stderr(&out));
}

#[test]
fn graph_of_a_broken_file_shows_the_spec_error() {
    let dir = TempDir::new("graph-broken");
    let file = dir.path().join("dataflow.yml");
    std::fs::write(&file, "nodes:\n  - id: viewer\n    path: dynamic\n    inputs:\n      image: camra/image\n")
        .expect("write dataflow.yml");
    let out = run(nerve().arg("graph").arg(&file));
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).is_empty());
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{}:5:14: nodes[viewer].inputs.image: unknown source node `camra`", file.display())),
        "{err}"
    );

    let out = run(nerve().arg("graph").arg(dir.path().join("missing.yml")));
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("cannot read"), "{}", stderr(&out));
}

/// Runs `nerve new ARGS --path DIR` and returns the created project folder.
fn new_project(dir: &Path, args: &[&str]) -> PathBuf {
    let out = run(nerve().arg("new").args(args).arg("--path").arg(dir));
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(said.contains("Next: "), "{said}");
    let project = dir.join(args[0]);
    assert!(said.contains(&project.display().to_string()), "{said}");
    project
}

fn assert_files(project: &Path, files: &[&str]) {
    for file in files {
        let path = project.join(file);
        assert!(path.is_file(), "{} was not created", path.display());
    }
}

fn validate(file: &Path) {
    let out = run(nerve().arg("validate").arg(file));
    assert!(out.status.success(), "{} does not validate: {}", file.display(), stderr(&out));
    assert!(stdout(&out).contains("2 nodes, valid"), "{}", stdout(&out));
}

/// Runs `ruff check` on `files` when ruff is installed.
fn ruff_check(files: &[PathBuf]) {
    match Command::new("ruff").arg("check").args(files).output() {
        Ok(out) => assert!(out.status.success(), "ruff check failed: {}{}", stdout(&out), stderr(&out)),
        Err(e) => eprintln!("skipping ruff check: {e}"),
    }
}

#[test]
fn new_python_dataflow_is_valid() {
    let dir = TempDir::new("new-py-dataflow");
    // No --kind, --lang or --path: a Python dataflow in the current folder.
    let out = run(nerve().args(["new", "demo"]).current_dir(dir.path()));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("Next: cd demo && nerve run dataflow.yml"), "{}", stdout(&out));
    let project = dir.path().join("demo");
    assert_files(&project, &["dataflow.yml", "talker.py", "listener.py", "README.md"]);
    let yaml = read(&project.join("dataflow.yml"));
    assert!(yaml.contains("tick: dora/timer/millis/100"), "{yaml}");
    assert!(yaml.contains("message: talker/message"), "{yaml}");
    assert!(read(&project.join("README.md")).contains("nerve run dataflow.yml"));
    validate(&project.join("dataflow.yml"));
    ruff_check(&[project.join("talker.py"), project.join("listener.py")]);
}

#[test]
fn new_rust_dataflow_is_valid() {
    let dir = TempDir::new("new-rs-dataflow");
    let project = new_project(dir.path(), &["demo", "--kind", "dataflow", "--lang", "rust"]);
    assert_files(
        &project,
        &[
            "dataflow.yml",
            "Cargo.toml",
            "talker/Cargo.toml",
            "talker/src/main.rs",
            "listener/Cargo.toml",
            "listener/src/main.rs",
            "README.md",
        ],
    );
    let yaml = read(&project.join("dataflow.yml"));
    assert!(yaml.contains("build: cargo build --release -p talker"), "{yaml}");
    assert!(yaml.contains("path: target/release/talker"), "{yaml}");
    assert!(read(&project.join("talker/Cargo.toml")).contains("name = \"talker\""));
    validate(&project.join("dataflow.yml"));
}

#[test]
fn new_python_node() {
    let dir = TempDir::new("new-py-node");
    let project = new_project(dir.path(), &["my-cam", "--kind", "node"]);
    assert_files(&project, &["my_cam.py", "README.md"]);
    let code = read(&project.join("my_cam.py"));
    assert!(code.contains("from nerve import Node"), "{code}");
    assert!(code.contains("node.send_output("), "{code}");
    assert!(read(&project.join("README.md")).contains("path: my-cam/my_cam.py"));
    ruff_check(&[project.join("my_cam.py")]);
}

#[test]
fn new_rust_node_depends_on_nerve_node() {
    let dir = TempDir::new("new-rs-node");
    let project = new_project(dir.path(), &["driver", "--kind", "node", "--lang", "rust"]);
    assert_files(&project, &["Cargo.toml", "src/main.rs", "README.md"]);
    let manifest = read(&project.join("Cargo.toml"));
    assert!(manifest.contains("name = \"driver\""), "{manifest}");
    assert!(manifest.contains("edition = \"2024\""), "{manifest}");
    assert!(manifest.contains("nerve-node = \"0.1\""), "{manifest}");
    assert!(manifest.contains("\n[workspace]\n"), "{manifest}");
    assert!(read(&project.join("src/main.rs")).contains("Node::init_from_env()"));

    let local = dir.path().join("checkout/crates/nerve-node");
    let out = run(nerve()
        .args(["new", "local", "--kind", "node", "--lang", "rust", "--path"])
        .arg(dir.path())
        .env("NERVE_NODE_PATH", &local));
    assert!(out.status.success(), "{}", stderr(&out));
    let manifest = read(&dir.path().join("local/Cargo.toml"));
    assert!(manifest.contains(&format!("nerve-node = {{ path = \"{}\" }}", local.display())), "{manifest}");
}

#[test]
fn new_refuses_an_existing_folder() {
    let dir = TempDir::new("new-exists");
    std::fs::create_dir(dir.path().join("taken")).expect("create taken");
    std::fs::write(dir.path().join("taken/keep.txt"), "mine").expect("write keep.txt");
    let out = run(nerve().args(["new", "taken", "--path"]).arg(dir.path()));
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("already exists"), "{}", stderr(&out));
    assert_eq!(read(&dir.path().join("taken/keep.txt")), "mine");
    assert!(!dir.path().join("taken/dataflow.yml").exists());
}

#[test]
fn new_refuses_bad_names() {
    let dir = TempDir::new("new-bad-name");
    for (name, args, why) in [
        ("my node", &[][..], "invalid character ' '"),
        ("../escape", &[][..], "invalid character '/'"),
        ("v1.2", &["--kind", "node", "--lang", "rust"][..], "no `.`"),
    ] {
        let out = run(nerve().args(["new", name]).args(args).arg("--path").arg(dir.path()));
        assert_eq!(out.status.code(), Some(1), "{name}");
        assert!(stderr(&out).contains(why), "{name}: {}", stderr(&out));
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).expect("list temp dir").collect();
    assert!(left.is_empty(), "created {left:?}");
}

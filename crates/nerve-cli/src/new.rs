//! `nerve new`: creates a node or a whole dataflow project from the templates in
//! `templates/`, which are compiled into the binary.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// What `nerve new` creates.
#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// The project's name: its folder, and for a node its id (letters, digits, `_`, `-`, `.`).
    pub name: String,
    /// A single node, or a dataflow of two nodes (talker and listener).
    #[arg(long, value_enum, default_value_t = Kind::Dataflow)]
    pub kind: Kind,
    /// The language of the node(s).
    #[arg(long, value_enum, default_value_t = Lang::Python)]
    pub lang: Lang,
    /// The folder to create the project in [default: the current folder].
    #[arg(long, value_name = "DIR")]
    pub path: Option<PathBuf>,
}

/// What kind of project to create.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// One node, to add to a dataflow.
    Node,
    /// A runnable dataflow with a talker and a listener node.
    Dataflow,
}

/// The language of the generated nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    /// A Python script using the `nerve` package.
    Python,
    /// A Cargo package using the `nerve-node` crate.
    Rust,
    /// A CMake project in C using `nerve.h`.
    C,
    /// A CMake project in C++17 using `nerve.hpp`.
    Cpp,
}

impl Lang {
    /// A CMake project's source extension, CMake language and name in prose; `None` for the
    /// languages CMake does not build.
    fn cmake(self) -> Option<(&'static str, &'static str, &'static str)> {
        match self {
            Lang::C => Some(("c", "C", "C")),
            Lang::Cpp => Some(("cpp", "CXX", "C++")),
            Lang::Python | Lang::Rust => None,
        }
    }
}

/// Environment variable naming a local `nerve-node` crate for generated Cargo packages
/// to depend on instead of the published one.
pub const NERVE_NODE_PATH: &str = "NERVE_NODE_PATH";

mod tpl {
    pub(super) const PY_NODE: &str = include_str!("../templates/python/node.py");
    pub(super) const PY_NODE_README: &str = include_str!("../templates/python/node-README.md");
    pub(super) const PY_TALKER: &str = include_str!("../templates/python/talker.py");
    pub(super) const PY_LISTENER: &str = include_str!("../templates/python/listener.py");
    pub(super) const PY_DATAFLOW: &str = include_str!("../templates/python/dataflow.yml");
    pub(super) const PY_DATAFLOW_README: &str = include_str!("../templates/python/dataflow-README.md");
    pub(super) const PY_GITIGNORE: &str = include_str!("../templates/python/gitignore");
    pub(super) const RS_CARGO: &str = include_str!("../templates/rust/Cargo.toml");
    pub(super) const RS_WORKSPACE: &str = include_str!("../templates/rust/workspace-Cargo.toml");
    pub(super) const RS_MEMBER: &str = include_str!("../templates/rust/member-Cargo.toml");
    pub(super) const RS_NODE: &str = include_str!("../templates/rust/node-main.rs");
    pub(super) const RS_NODE_README: &str = include_str!("../templates/rust/node-README.md");
    pub(super) const RS_TALKER: &str = include_str!("../templates/rust/talker-main.rs");
    pub(super) const RS_LISTENER: &str = include_str!("../templates/rust/listener-main.rs");
    pub(super) const RS_DATAFLOW: &str = include_str!("../templates/rust/dataflow.yml");
    pub(super) const RS_DATAFLOW_README: &str = include_str!("../templates/rust/dataflow-README.md");
    pub(super) const RS_GITIGNORE: &str = include_str!("../templates/rust/gitignore");
    pub(super) const C_NODE: &str = include_str!("../templates/c/node.c");
    pub(super) const C_TALKER: &str = include_str!("../templates/c/talker.c");
    pub(super) const C_LISTENER: &str = include_str!("../templates/c/listener.c");
    pub(super) const CPP_NODE: &str = include_str!("../templates/cpp/node.cpp");
    pub(super) const CPP_TALKER: &str = include_str!("../templates/cpp/talker.cpp");
    pub(super) const CPP_LISTENER: &str = include_str!("../templates/cpp/listener.cpp");
    pub(super) const CMAKE_NODE: &str = include_str!("../templates/cmake/node-CMakeLists.txt");
    pub(super) const CMAKE_DATAFLOW: &str = include_str!("../templates/cmake/dataflow-CMakeLists.txt");
    pub(super) const CMAKE_NODE_README: &str = include_str!("../templates/cmake/node-README.md");
    pub(super) const CMAKE_DATAFLOW_YML: &str = include_str!("../templates/cmake/dataflow.yml");
    pub(super) const CMAKE_DATAFLOW_README: &str = include_str!("../templates/cmake/dataflow-README.md");
    pub(super) const CMAKE_GITIGNORE: &str = include_str!("../templates/cmake/gitignore");
}

/// One file to create: its path inside the project folder and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// Relative to the project folder.
    pub path: PathBuf,
    /// The whole content.
    pub text: String,
}

/// Runs `nerve new`.
///
/// # Errors
/// A bad name, an existing folder, or a file that cannot be written.
pub fn run(args: &NewArgs) -> anyhow::Result<i32> {
    check_name(&args.name, args.kind, args.lang)?;
    let installed = crate::sdk::installed_rust();
    let local = std::env::var_os(NERVE_NODE_PATH)
        .filter(|p| !p.is_empty())
        .or_else(|| installed.as_ref().map(|rust| rust.join("crates/nerve-node").into_os_string()));
    if args.lang == Lang::Rust && local.is_none() {
        tracing::warn!(
            "no nerve-node crate installed beside this `nerve` (it comes with the Python package, `pip install .`), \
             nor named by {NERVE_NODE_PATH}: the project depends on nerve-node 0.1 from crates.io"
        );
    }
    let nerve_node = nerve_node_dependency(local)?;
    let mut files = files(&args.name, args.kind, args.lang, &nerve_node);
    // The versions of every dependency nerve was built and tested with: a fresh machine resolves
    // the same ones.
    if let Some(lock) = installed.filter(|_| args.lang == Lang::Rust).map(|rust| rust.join("Cargo.lock")) {
        let text = std::fs::read_to_string(&lock).with_context(|| format!("cannot read {}", lock.display()))?;
        files.push(File { path: PathBuf::from("Cargo.lock"), text });
    }
    let root = args.path.as_ref().map_or_else(|| PathBuf::from(&args.name), |dir| dir.join(&args.name));
    create(&root, &files)?;

    let what = match args.kind {
        Kind::Node => "node",
        Kind::Dataflow => "dataflow",
    };
    println!("Created {what} `{}` in {}:", args.name, root.display());
    for file in &files {
        println!("  {}", root.join(&file.path).display());
    }
    println!();
    let cd = shell_quote(&root.display().to_string());
    match (args.kind, args.lang) {
        (Kind::Dataflow, Lang::Python) => {
            println!("Next: cd {cd} && nerve run dataflow.yml");
        }
        (Kind::Dataflow, Lang::Rust | Lang::C | Lang::Cpp) => {
            println!("Next: cd {cd} && nerve run --build dataflow.yml");
        }
        (Kind::Node, Lang::Python) => {
            println!(
                "Next: add the node to a dataflow (see {}), then `nerve run` it",
                root.join("README.md").display()
            );
        }
        (Kind::Node, Lang::Rust) => {
            println!(
                "Next: cargo build --release --manifest-path {}, then add the node to a \
                 dataflow (see {})",
                shell_quote(&root.join("Cargo.toml").display().to_string()),
                root.join("README.md").display()
            );
        }
        (Kind::Node, Lang::C | Lang::Cpp) => {
            println!(
                "Next: cmake -S {cd} -B {cd}/build -Dnerve_DIR=\"$(nerve --cmake-dir)\" && cmake --build {cd}/build, \
                 then add the node to a dataflow (see {})",
                root.join("README.md").display()
            );
        }
    }
    Ok(0)
}

/// The files of a project named `name`; `nerve_node` is the TOML value of the
/// `nerve-node` dependency in generated `Cargo.toml`s.
pub fn files(name: &str, kind: Kind, lang: Lang, nerve_node: &str) -> Vec<File> {
    let py_file = format!("{}.py", name.replace('-', "_"));
    let (ext, language, lang_name) = lang.cmake().unwrap_or_default();
    let fill = |template: &str, package: &str| {
        template
            .replace("{{name}}", name)
            .replace("{{ext}}", ext)
            .replace("{{language}}", language)
            .replace("{{lang}}", lang_name)
            .replace("{{package}}", package)
            .replace("{{file}}", &py_file)
            .replace("{{nerve_node}}", nerve_node)
    };
    let file =
        |path: &str, template: &str, package: &str| File { path: PathBuf::from(path), text: fill(template, package) };
    match (kind, lang) {
        (Kind::Node, Lang::Python) => {
            vec![file(&py_file, tpl::PY_NODE, name), file("README.md", tpl::PY_NODE_README, name)]
        }
        (Kind::Node, Lang::Rust) => vec![
            file("Cargo.toml", tpl::RS_CARGO, name),
            file("src/main.rs", tpl::RS_NODE, name),
            file("README.md", tpl::RS_NODE_README, name),
            file(".gitignore", tpl::RS_GITIGNORE, name),
        ],
        (Kind::Dataflow, Lang::Python) => vec![
            file("dataflow.yml", tpl::PY_DATAFLOW, name),
            file("talker.py", tpl::PY_TALKER, name),
            file("listener.py", tpl::PY_LISTENER, name),
            file("README.md", tpl::PY_DATAFLOW_README, name),
            file(".gitignore", tpl::PY_GITIGNORE, name),
        ],
        (Kind::Dataflow, Lang::Rust) => vec![
            file("dataflow.yml", tpl::RS_DATAFLOW, name),
            file("Cargo.toml", tpl::RS_WORKSPACE, name),
            file("talker/Cargo.toml", tpl::RS_MEMBER, "talker"),
            file("talker/src/main.rs", tpl::RS_TALKER, "talker"),
            file("listener/Cargo.toml", tpl::RS_MEMBER, "listener"),
            file("listener/src/main.rs", tpl::RS_LISTENER, "listener"),
            file("README.md", tpl::RS_DATAFLOW_README, name),
            file(".gitignore", tpl::RS_GITIGNORE, name),
        ],
        (Kind::Node, Lang::C | Lang::Cpp) => vec![
            file("CMakeLists.txt", tpl::CMAKE_NODE, name),
            file(&format!("{name}.{ext}"), if lang == Lang::C { tpl::C_NODE } else { tpl::CPP_NODE }, name),
            file("README.md", tpl::CMAKE_NODE_README, name),
            file(".gitignore", tpl::CMAKE_GITIGNORE, name),
        ],
        (Kind::Dataflow, Lang::C | Lang::Cpp) => {
            let (talker, listener) =
                if lang == Lang::C { (tpl::C_TALKER, tpl::C_LISTENER) } else { (tpl::CPP_TALKER, tpl::CPP_LISTENER) };
            vec![
                file("dataflow.yml", tpl::CMAKE_DATAFLOW_YML, name),
                file("CMakeLists.txt", tpl::CMAKE_DATAFLOW, name),
                file(&format!("talker.{ext}"), talker, name),
                file(&format!("listener.{ext}"), listener, name),
                file("README.md", tpl::CMAKE_DATAFLOW_README, name),
                file(".gitignore", tpl::CMAKE_GITIGNORE, name),
            ]
        }
    }
}

/// Checks `name` is a node id and, for a Rust node, a Cargo package name.
fn check_name(name: &str, kind: Kind, lang: Lang) -> anyhow::Result<()> {
    if name.is_empty() || name == "." || name == ".." {
        anyhow::bail!("`{name}` is not a valid name: use letters, digits, `_`, `-` and `.`");
    }
    if let Some(bad) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))) {
        anyhow::bail!(
            "invalid character {bad:?} in name `{name}`: names are node ids, made of \
             letters, digits, `_`, `-` and `.`"
        );
    }
    if kind == Kind::Node && matches!(name, "dora" | "timer" | "topic") {
        // `dora/...` and `timer/...` inputs are timers and `topic/...` ones topics, so no input
        // could read such a node.
        anyhow::bail!("`{name}` is reserved (`{name}/...` inputs are timers or topics) and cannot be a node id");
    }
    if (kind, lang) == (Kind::Node, Lang::Rust) {
        if name.contains('.') {
            anyhow::bail!(
                "`{name}` cannot name a Rust node: Cargo package names have no `.` \
                 (use `_` or `-`)"
            );
        }
        if name.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
            anyhow::bail!(
                "`{name}` cannot name a Rust node: a Cargo package name starts with a letter \
                 or `_`"
            );
        }
        // The keywords `cargo new` refuses as package names: they cannot name the binary's crate.
        if nerve_types::RUST_KEYWORDS.contains(&name) {
            anyhow::bail!("`{name}` cannot name a Rust node: it is a Rust keyword");
        }
    }
    Ok(())
}

/// The `nerve-node` dependency: the published crate, or the local one at `local` (made
/// absolute, as Cargo reads a relative path from the generated `Cargo.toml`).
fn nerve_node_dependency(local: Option<std::ffi::OsString>) -> anyhow::Result<String> {
    let Some(local) = local.filter(|p| !p.is_empty()) else {
        return Ok("\"0.1\"".to_owned());
    };
    let local = PathBuf::from(local);
    let absolute = std::path::absolute(&local)
        .with_context(|| format!("{NERVE_NODE_PATH}={} cannot be made absolute", local.display()))?;
    let text = absolute
        .to_str()
        .with_context(|| format!("{NERVE_NODE_PATH}={} is not UTF-8, which Cargo.toml needs", absolute.display()))?;
    Ok(format!("{{ path = {} }}", toml_string(text)))
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Creates `root` (which must not exist yet) and `files` in it; on failure removes what
/// it created, so a retry starts clean.
fn create(root: &Path, files: &[File]) -> anyhow::Result<()> {
    if let Some(parent) = root.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).with_context(|| format!("cannot create folder {}", parent.display()))?;
    }
    // `create_dir` rather than an `exists` check: it cannot race with another process.
    if let Err(e) = std::fs::create_dir(root) {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            anyhow::bail!("{} already exists: choose another name, or --path for another folder", root.display());
        }
        return Err(e).with_context(|| format!("cannot create folder {}", root.display()));
    }
    let written = files.iter().try_for_each(|file| {
        let path = root.join(&file.path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create folder {}", dir.display()))?;
        }
        std::fs::write(&path, &file.text).with_context(|| format!("cannot write {}", path.display()))
    });
    if written.is_err() {
        // The folder is ours alone: it did not exist a moment ago.
        let _ = std::fs::remove_dir_all(root);
    }
    written
}

/// `text` quoted for a POSIX shell when it needs it, so printed commands can be pasted.
fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ':' | '=' | '+' | ','));
    if plain { text.to_owned() } else { format!("'{}'", text.replace('\'', "'\\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(files: &[File]) -> Vec<String> {
        files.iter().map(|f| f.path.display().to_string()).collect()
    }

    #[test]
    fn every_placeholder_is_filled() {
        for kind in [Kind::Node, Kind::Dataflow] {
            for lang in [Lang::Python, Lang::Rust, Lang::C, Lang::Cpp] {
                for file in files("my-node", kind, lang, "\"0.1\"") {
                    assert!(!file.text.contains("{{"), "{kind:?} {lang:?} {}: {}", file.path.display(), file.text);
                }
            }
        }
    }

    #[test]
    fn cmake_projects_name_their_sources_by_language() {
        let c = files("cam", Kind::Node, Lang::C, "\"0.1\"");
        assert_eq!(paths(&c), ["CMakeLists.txt", "cam.c", "README.md", ".gitignore"]);
        assert!(c[0].text.contains("project(cam C)") && c[0].text.contains("add_executable(cam cam.c)"));
        let cpp = files("demo", Kind::Dataflow, Lang::Cpp, "\"0.1\"");
        assert_eq!(
            paths(&cpp),
            ["dataflow.yml", "CMakeLists.txt", "talker.cpp", "listener.cpp", "README.md", ".gitignore"]
        );
        assert!(cpp[1].text.contains("project(demo CXX)") && cpp[2].text.contains("#include <nerve.hpp>"));
    }

    #[test]
    fn python_node_file_uses_underscores() {
        let files = files("my-cam.v2", Kind::Node, Lang::Python, "\"0.1\"");
        assert_eq!(paths(&files), ["my_cam.v2.py", "README.md"]);
        assert!(files[1].text.contains("path: my-cam.v2/my_cam.v2.py"));
        assert!(files[0].text.starts_with("\"\"\"my-cam.v2: a nerve node."));
    }

    #[test]
    fn rust_dataflow_has_two_packages_in_one_workspace() {
        let files = files("demo", Kind::Dataflow, Lang::Rust, "{ path = \"/x\" }");
        assert_eq!(
            paths(&files),
            [
                "dataflow.yml",
                "Cargo.toml",
                "talker/Cargo.toml",
                "talker/src/main.rs",
                "listener/Cargo.toml",
                "listener/src/main.rs",
                "README.md",
                ".gitignore"
            ]
        );
        assert!(files[1].text.contains("members = [\"talker\", \"listener\"]"));
        assert!(files[1].text.contains("nerve-node = { path = \"/x\" }"));
        assert!(files[2].text.contains("name = \"talker\""));
        assert!(files[4].text.contains("name = \"listener\""));
        assert!(files[2].text.contains("nerve-node = { workspace = true }"));
        assert!(files[0].text.contains("path: target/release/listener"));
    }

    #[test]
    fn names() {
        for ok in ["a", "my-node", "my_node", "v1.2", "X9"] {
            assert!(check_name(ok, Kind::Node, Lang::Python).is_ok(), "{ok}");
        }
        for bad in ["", ".", "..", "a b", "a/b", "é", "a:b"] {
            assert!(check_name(bad, Kind::Dataflow, Lang::Python).is_err(), "{bad:?}");
        }
        assert!(check_name("timer", Kind::Node, Lang::Python).is_err());
        assert!(check_name("topic", Kind::Node, Lang::Python).is_err());
        assert!(check_name("timer", Kind::Dataflow, Lang::Python).is_ok());
        for bad in ["v1.2", "9lives", "fn", "-x"] {
            assert!(check_name(bad, Kind::Node, Lang::Rust).is_err(), "{bad:?}");
        }
        assert!(check_name("v1.2", Kind::Dataflow, Lang::Rust).is_ok());
    }

    #[test]
    fn nerve_node_dependency_forms() -> anyhow::Result<()> {
        assert_eq!(nerve_node_dependency(None)?, "\"0.1\"");
        assert_eq!(nerve_node_dependency(Some("".into()))?, "\"0.1\"");
        assert_eq!(
            nerve_node_dependency(Some("/src/nerve/crates/nerve-node".into()))?,
            "{ path = \"/src/nerve/crates/nerve-node\" }"
        );
        let relative = nerve_node_dependency(Some("crates/nerve-node".into()))?;
        assert!(relative.starts_with("{ path = \"/"), "{relative}");
        assert_eq!(toml_string("C:\\a \"b\"\n"), "\"C:\\\\a \\\"b\\\"\\u000A\"");
        Ok(())
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("demo/x-1.yml"), "demo/x-1.yml");
        assert_eq!(shell_quote("my dir/it's"), "'my dir/it'\\''s'");
    }
}

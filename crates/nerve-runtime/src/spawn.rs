//! Building and starting node processes.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use nerve_message::env;
use nerve_spec::{NodePath, NodeSpec};

use crate::error::RuntimeError;
use crate::logs::{LogSink, Stream};
use crate::realtime::Realtime;

/// Fetches every node's `git:` repository or `path:` URL, then runs the `build:` command of
/// every node that has one, in its work dir (the clone, else the dataflow's folder).
///
/// # Errors
/// The first fetch or build that fails, or a program still missing afterwards.
pub fn build_all(nodes: &[NodeSpec], base_dir: &Path) -> Result<(), RuntimeError> {
    // Nodes of one repository and commit share a clone: fetch it once.
    let mut fetched = Vec::new();
    for node in nodes {
        if let Some(what) = &node.fetch
            && !fetched.contains(&what)
        {
            crate::fetch::fetch(&node.id, what)?;
            fetched.push(what);
        }
        let Some(command) = &node.build else { continue };
        println!("[{}] build: {command}", node.id);
        let status = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(node.work_dir(base_dir))
            .status()
            .map_err(|source| RuntimeError::Spawn { node: node.id.clone(), program: command.clone(), source })?;
        if !status.success() {
            return Err(RuntimeError::Build {
                node: node.id.clone(),
                command: command.clone(),
                status: status.to_string(),
            });
        }
        if let NodePath::ToBuild(path) = &node.path
            && !path.exists()
        {
            return Err(RuntimeError::BuildOutputMissing { node: node.id.clone(), path: path.clone() });
        }
    }
    Ok(())
}

/// What a node is started with.
pub struct Launch<'a> {
    /// The node.
    pub node: &'a NodeSpec,
    /// The dataflow's folder: the node's working directory unless it has a `git:` clone.
    pub base_dir: &'a Path,
    /// The runtime's socket.
    pub socket: &'a Path,
    /// Run id.
    pub run_id: &'a str,
    /// What the run's topics, services and actions are scoped to.
    pub run_name: &'a str,
    /// The names the run shares (`share:`).
    pub share: &'a [String],
    /// Scheduling and CPU pinning to apply before the program runs.
    pub realtime: Option<Realtime>,
    /// Environment set before the node's own `env:` (which may override it).
    pub network_env: &'a [(String, String)],
    /// The dataflow's folders of message definitions (`types:`), absolute.
    pub types: &'a [PathBuf],
}

/// Resolves the program and arguments of a node; `None` for a dynamic node.
///
/// # Errors
/// When the program still has to be fetched or built.
pub fn program(node: &NodeSpec, python: &Path) -> Result<Option<(PathBuf, Vec<String>)>, RuntimeError> {
    if let Some(what) = &node.fetch
        && !what.is_fetched()
    {
        return Err(RuntimeError::NotFetched { node: node.id.clone(), url: what.url().to_owned() });
    }
    if let Some(dir) = &node.working_dir
        && !dir.is_dir()
    {
        return Err(RuntimeError::NoWorkingDir { node: node.id.clone(), dir: dir.clone() });
    }
    Ok(match &node.path {
        NodePath::Dynamic => None,
        NodePath::Python(script) => {
            let mut args = vec![script.display().to_string()];
            args.extend(node.args.iter().cloned());
            Some((python.to_owned(), args))
        }
        // nerve's operator host reads the operators from its `HostPlan`, set by `spawn`.
        NodePath::Operators(_) => {
            let mut args = vec!["-m".to_owned(), "nerve.operators".to_owned()];
            args.extend(node.args.iter().cloned());
            Some((python.to_owned(), args))
        }
        NodePath::Executable(p) => Some((p.clone(), node.args.clone())),
        NodePath::ToBuild(p) => {
            if !p.exists() {
                return Err(RuntimeError::NotBuilt {
                    node: node.id.clone(),
                    path: p.clone(),
                    command: node.build.clone().unwrap_or_default(),
                });
            }
            Some((p.clone(), node.args.clone()))
        }
    })
}

/// `NERVE_TYPES_PATH` for a node: the dataflow's `types:` folders, then the folders the
/// variable already names, so the node finds the types its ports were checked against.
fn types_path(types: &[PathBuf]) -> Option<std::ffi::OsString> {
    if types.is_empty() {
        return None;
    }
    let inherited = std::env::var_os(nerve_types::TYPES_PATH_VAR).unwrap_or_default();
    let all = types.iter().cloned().chain(std::env::split_paths(&inherited).filter(|p| !p.as_os_str().is_empty()));
    std::env::join_paths(all)
        .inspect_err(|e| tracing::warn!(error = %e, "the dataflow's `types:` folders cannot reach its nodes"))
        .ok()
}

/// Starts a node in a process group of its own, killed if the runtime dies, with stdout and
/// stderr going to `logs`.
///
/// # Errors
/// When the process cannot be started.
pub fn spawn(
    l: &Launch<'_>,
    program: &Path,
    args: &[String],
    logs: &LogSink,
) -> Result<(Child, Vec<std::thread::JoinHandle<()>>), RuntimeError> {
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(l.node.work_dir(l.base_dir)).envs(l.network_env.iter().map(|(k, v)| (k, v)));
    if let Some(path) = types_path(l.types) {
        cmd.env(nerve_types::TYPES_PATH_VAR, path);
    }
    if let Some(plan) = nerve_spec::operators::HostPlan::of(l.node) {
        let json = serde_json::to_string(&plan).map_err(|e| RuntimeError::Spawn {
            node: l.node.id.clone(),
            program: program.display().to_string(),
            source: std::io::Error::other(e),
        })?;
        cmd.env(nerve_spec::operators::HOST_PLAN_VAR, json);
    }
    cmd.envs(&l.node.env)
        .env(env::SOCKET, l.socket)
        .env(env::NODE_ID, &l.node.id)
        .env(env::RUN_ID, l.run_id)
        .env(env::RUN, l.run_name)
        .env(env::SHARE, l.share.join(","))
        .env(env::LOG_RECORDS, "1")
        .envs(l.node.logs.min_level.map(|level| (env::MIN_LOG_LEVEL, level.as_str())))
        .env("PYTHONUNBUFFERED", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let parent = rustix::process::getpid();
    let realtime = l.realtime;
    // SAFETY: the closure runs between fork and exec and only makes async-signal-safe calls.
    unsafe {
        cmd.pre_exec(move || {
            if let Some(rt) = &realtime {
                rt.apply()?;
            }
            rustix::process::setsid().map_err(std::io::Error::from)?;
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
                .map_err(std::io::Error::from)?;
            // The runtime may have died between fork and the line above.
            if rustix::process::getppid() != Some(parent) {
                return Err(std::io::Error::other("nerve exited while starting the node"));
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|source| RuntimeError::Spawn {
        node: l.node.id.clone(),
        program: program.display().to_string(),
        source,
    })?;
    let mut pumps = Vec::new();
    if let Some(out) = child.stdout.take() {
        pumps.push(logs.pump(out, Stream::Stdout));
    }
    if let Some(err) = child.stderr.take() {
        pumps.push(logs.pump(err, Stream::Stderr));
    }
    Ok((child, pumps))
}

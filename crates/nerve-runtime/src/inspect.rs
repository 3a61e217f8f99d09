//! Finding the dataflows running on this host and talking to them, for `nerve list`,
//! `nerve stop`, `nerve logs`, `nerve node` and `nerve param`: every run answers on its
//! control socket. A run that ended is found by the record it left as it started.

use std::io::BufReader;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nerve_message::frame;
use nerve_message::graph_edit::GraphEdit;
use nerve_message::node_to_runtime::NodeRequest;
use nerve_message::param::{ParamAnswer, ParamOp};
pub use nerve_message::run_status::{InputStatus, NodeStatus, RunState, RunStatus};
use nerve_message::runtime_to_node::RuntimeMessage;

use crate::error::RuntimeError;

/// How many records of runs [`remember`] keeps: the newest.
const REMEMBERED_RUNS: usize = 200;

/// What a run on this host left to be found by once it ended: where its logs are.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunRecord {
    /// Its run id.
    pub run_id: String,
    /// Its `--name`, if it had one.
    pub name: Option<String>,
    /// Its dataflow file.
    pub dataflow: PathBuf,
    /// Its log folder: `<node>.log` for each node nerve started.
    pub log_dir: PathBuf,
}

impl RunRecord {
    /// How error messages name the run: its name and id, or its id.
    #[must_use]
    pub fn label(&self) -> String {
        match &self.name {
            Some(name) => format!("{name} ({})", self.run_id),
            None => self.run_id.clone(),
        }
    }
}

/// Where the records of this host's runs are kept.
fn records_dir() -> PathBuf {
    nerve_message::runtime_dir().join("runs")
}

/// Leaves the record of a run that starts, so that tools find its logs once it ended, and
/// forgets the oldest records past [`REMEMBERED_RUNS`].
pub(crate) fn remember(record: &RunRecord) -> std::io::Result<()> {
    let dir = records_dir();
    nerve_message::private_dir(&dir)?;
    std::fs::write(dir.join(format!("{}.json", record.run_id)), serde_json::to_vec(record)?)?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)?.flatten().map(|e| e.path()).collect();
    // Run ids sort by time: the oldest come first.
    files.sort();
    for old in files.iter().take(files.len().saturating_sub(REMEMBERED_RUNS)) {
        std::fs::remove_file(old)?;
    }
    Ok(())
}

/// The run of this host, running or ended, called `name` (the newest of that name), or whose
/// run id is or starts with it, from the records runs leave as they start.
///
/// # Errors
/// [`RuntimeError::NoRecordOfRun`] or [`RuntimeError::AmbiguousRun`].
pub fn find_recorded(name: &str) -> Result<RunRecord, RuntimeError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(records_dir())
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    // A record half written by a run starting this instant is skipped, as is any unreadable one.
    let records: Vec<RunRecord> =
        files.iter().filter_map(|f| serde_json::from_slice(&std::fs::read(f).ok()?).ok()).collect();
    if let Some(newest) = records.iter().rev().find(|r| r.name.as_deref() == Some(name)) {
        return Ok(newest.clone());
    }
    let matches: Vec<&RunRecord> = records.iter().filter(|r| !name.is_empty() && r.run_id.starts_with(name)).collect();
    match matches.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(RuntimeError::NoRecordOfRun { name: name.to_owned() }),
        many => Err(RuntimeError::AmbiguousRun {
            name: name.to_owned(),
            candidates: many.iter().map(|r| r.run_id.clone()).collect::<Vec<_>>().join(", "),
        }),
    }
}

/// Every dataflow running on this host for this user, oldest first (run ids sort by time).
#[must_use]
pub fn running() -> Vec<RunStatus> {
    // A socket nobody answers on belongs to a run that is ending: it is not running.
    nerve_message::run_sockets().iter().filter_map(|s| ask(s, NodeRequest::Inspect).ok()).collect()
}

/// Checks that no dataflow running on this host is called `name`, as `nerve run --name` wants.
///
/// # Errors
/// [`RuntimeError::NameTaken`] naming the run that has it.
pub fn check_name_free(name: &str) -> Result<(), RuntimeError> {
    match running().into_iter().find(|r| r.name.as_deref() == Some(name)) {
        Some(other) => Err(RuntimeError::NameTaken { name: name.to_owned(), run_id: other.run_id }),
        None => Ok(()),
    }
}

/// The running dataflow called `name` (its `--name`), or whose run id is or starts with it.
///
/// # Errors
/// [`RuntimeError::NoSuchRun`] listing what runs, or [`RuntimeError::AmbiguousRun`].
pub fn find(name: &str) -> Result<RunStatus, RuntimeError> {
    let runs = running();
    let by_name: Vec<&RunStatus> = runs.iter().filter(|r| r.name.as_deref() == Some(name)).collect();
    let matches = if by_name.is_empty() {
        runs.iter().filter(|r| !name.is_empty() && r.run_id.starts_with(name)).collect()
    } else {
        by_name
    };
    match matches.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(RuntimeError::NoSuchRun {
            name: name.to_owned(),
            running: runs.iter().map(label).collect::<Vec<_>>().join(", "),
        }),
        many => Err(RuntimeError::AmbiguousRun {
            name: name.to_owned(),
            candidates: many.iter().map(|r| r.run_id.clone()).collect::<Vec<_>>().join(", "),
        }),
    }
}

/// The running dataflow with a node called `node`: among all runs, or only in `dataflow` (a
/// name or id prefix, as [`find`] takes). Returns the run and the node's index in it.
///
/// # Errors
/// [`RuntimeError::NoSuchNode`] listing the nodes that run, [`RuntimeError::AmbiguousNode`] when
/// several runs have it; with `dataflow`, [`find`]'s errors and [`RuntimeError::NodeNotInRun`].
pub fn find_node(node: &str, dataflow: Option<&str>) -> Result<(RunStatus, usize), RuntimeError> {
    if let Some(name) = dataflow {
        let run = find(name)?;
        return match run.nodes.iter().position(|n| n.id == node) {
            Some(i) => Ok((run, i)),
            None => Err(RuntimeError::NodeNotInRun {
                run: label(&run),
                node: node.to_owned(),
                nodes: run.nodes.iter().map(|n| n.id.as_str()).collect::<Vec<_>>().join(", "),
            }),
        };
    }
    let runs = running();
    let mut found: Vec<(RunStatus, usize)> =
        runs.iter().filter_map(|r| r.nodes.iter().position(|n| n.id == node).map(|i| (r.clone(), i))).collect();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(RuntimeError::NoSuchNode {
            node: node.to_owned(),
            running: runs
                .iter()
                .flat_map(|r| {
                    r.nodes.iter().map(move |n| format!("{}/{}", r.name.as_deref().unwrap_or(&r.run_id), n.id))
                })
                .collect::<Vec<_>>()
                .join(", "),
        }),
        _ => Err(RuntimeError::AmbiguousNode {
            node: node.to_owned(),
            candidates: found.iter().map(|(r, _)| label(r)).collect::<Vec<_>>().join(", "),
        }),
    }
}

/// Asks `run` to stop, as Ctrl-C would, and returns its status as the stop began.
///
/// # Errors
/// When the run cannot be reached (it may have ended meanwhile).
pub fn stop(run: &RunStatus) -> Result<RunStatus, RuntimeError> {
    ask(&nerve_message::run_socket(&run.run_id), NodeRequest::StopRun)
}

/// Whether `run` still answers.
#[must_use]
pub fn is_running(run: &RunStatus) -> bool {
    ask(&nerve_message::run_socket(&run.run_id), NodeRequest::Inspect).is_ok()
}

/// How `nerve list` and error messages name a run: its name and id, or its id.
#[must_use]
pub fn label(run: &RunStatus) -> String {
    match &run.name {
        Some(name) => format!("{name} ({})", run.run_id),
        None => run.run_id.clone(),
    }
}

/// Reads, lists or sets parameters of node `node` of `run`: the node itself answers, through
/// the run's runtime. The outer error is about reaching the run; the inner one is the node's or
/// the runtime's refusal (unknown node or key, wrong type, a callback's rejection, no answer).
///
/// # Errors
/// When the run cannot be reached (it may have ended meanwhile).
pub fn param(run: &RunStatus, node: &str, op: ParamOp) -> Result<ParamAnswer, RuntimeError> {
    param_of_run(&run.run_id, node, op)
}

/// [`param`], for the run with id `run_id`.
///
/// # Errors
/// As [`param`].
pub fn param_of_run(run_id: &str, node: &str, op: ParamOp) -> Result<ParamAnswer, RuntimeError> {
    let socket = nerve_message::run_socket(run_id);
    match exchange(&socket, &NodeRequest::Param { node: node.to_owned(), op })? {
        RuntimeMessage::Param { answer } => Ok(answer),
        other => Err(unexpected(&socket, &other)),
    }
}

/// Changes the graph of `run` while it runs (`nerve node add|remove|connect|disconnect`). The
/// outer error is about reaching the run; the inner one is the run's refusal, in words for the
/// user; the text says what was done.
///
/// # Errors
/// When the run cannot be reached (it may have ended meanwhile).
pub fn edit(run: &RunStatus, edit: GraphEdit) -> Result<Result<String, String>, RuntimeError> {
    let socket = nerve_message::run_socket(&run.run_id);
    match exchange(&socket, &NodeRequest::Edit(edit))? {
        RuntimeMessage::Edited { answer } => Ok(answer),
        other => Err(unexpected(&socket, &other)),
    }
}

/// The running dataflow `name` names (as [`find`] takes it), or the only one running.
///
/// # Errors
/// [`find`]'s; without a name, [`RuntimeError::NothingRunning`] or [`RuntimeError::WhichRun`].
pub fn find_or_only(name: Option<&str>) -> Result<RunStatus, RuntimeError> {
    if let Some(name) = name {
        return find(name);
    }
    let mut runs = running();
    match runs.len() {
        1 => Ok(runs.remove(0)),
        0 => Err(RuntimeError::NothingRunning),
        _ => Err(RuntimeError::WhichRun { running: runs.iter().map(label).collect::<Vec<_>>().join(", ") }),
    }
}

fn ask(socket: &Path, request: NodeRequest) -> Result<RunStatus, RuntimeError> {
    match exchange(socket, &request)? {
        RuntimeMessage::Status(status) => Ok(*status),
        other => Err(unexpected(socket, &other)),
    }
}

/// Sends a tool's one request on a connection of its own and reads the one answer.
fn exchange(socket: &Path, request: &NodeRequest) -> Result<RuntimeMessage, RuntimeError> {
    let err = |source: std::io::Error| RuntimeError::Unreachable { path: socket.to_owned(), source };
    let mut stream = UnixStream::connect(socket).map_err(err)?;
    stream.set_read_timeout(Some(Duration::from_secs(10))).map_err(err)?;
    frame::write(&mut stream, request).map_err(|e| err(std::io::Error::other(e)))?;
    frame::read(&mut BufReader::new(&mut stream)).map_err(|e| err(std::io::Error::other(e)))
}

fn unexpected(socket: &Path, answer: &RuntimeMessage) -> RuntimeError {
    RuntimeError::Unreachable {
        path: socket.to_owned(),
        source: std::io::Error::other(format!("unexpected answer {answer:?}")),
    }
}

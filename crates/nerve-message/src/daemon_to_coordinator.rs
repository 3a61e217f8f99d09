//! What a machine's daemon tells the cluster's coordinator: its answers to
//! [`DaemonRequest`](crate::coordinator_to_daemon::DaemonRequest)s, and, unasked, that its part
//! of a dataflow ended ([`PartEnded`], sent as
//! [`CoordinatorRequest::PartEnded`](crate::tool_to_coordinator::CoordinatorRequest::PartEnded)
//! on the coordinator's key).

use serde::{Deserialize, Serialize};

use crate::coordinator_to_daemon::Assignment;
use crate::run_status::RunStatus;

/// A process of the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessInfo {
    /// Its host's name.
    pub hostname: String,
    /// nerve's host id of its machine (boot and network namespace).
    pub host: String,
    /// Process id.
    pub pid: u32,
    /// nerve version.
    pub version: String,
    /// Endpoints it listens on.
    pub listen: Vec<String>,
}

/// A daemon, as it introduces itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DaemonInfo {
    /// Its machine id.
    pub machine: String,
    /// What it was labelled with (`nerve daemon --label KEY=VALUE`): nodes that ask for labels
    /// (`deploy: {labels}`) go to a machine that has them all.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub labels: std::collections::BTreeMap<String, String>,
    /// Its process.
    pub process: ProcessInfo,
    /// Dataflows it runs a part of now.
    pub running: usize,
}

/// A daemon's answer to
/// [`DaemonRequest::Hello`](crate::coordinator_to_daemon::DaemonRequest::Hello): itself and
/// every part it knows, so a coordinator that starts (again) learns what runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DaemonHello {
    /// The daemon.
    pub info: DaemonInfo,
    /// Its parts, running or ended.
    pub parts: Vec<(Assignment, PartStatus)>,
}

/// Where a machine's part of a dataflow is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartState {
    /// Nodes are starting.
    Preparing,
    /// Every node is ready; waiting for the others machines.
    Ready,
    /// Started.
    Running,
    /// Stopping.
    Stopping,
    /// Every node ended; see the report.
    Ended,
    /// The machine's daemon is gone (or unreachable).
    Lost,
}

impl PartState {
    /// The word `nerve list` shows.
    #[must_use]
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Preparing => "preparing",
            Self::Ready => "ready",
            Self::Running => "running",
            Self::Stopping => "stopping",
            Self::Ended => "ended",
            Self::Lost => "lost",
        }
    }
}

/// How a machine's part ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartReport {
    /// Every node finished cleanly and nothing aborted the part.
    pub success: bool,
    /// Each node and how it ended, in the words of `nerve list`.
    pub nodes: Vec<(String, String)>,
    /// Why the part was aborted, if it was.
    pub aborted: Option<String>,
    /// The node whose failure stopped the part (`on_failure: stop_all`): the coordinator stops
    /// the other machines' parts too. Left out when `None`: the encoding of every other report
    /// stays what it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<String>,
}

/// One machine's part of a dataflow, now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartStatus {
    /// The machine.
    pub machine: String,
    /// Where the part is.
    pub state: PartState,
    /// Its nodes live, while it runs (the machine's runtime's view, bridges left out).
    pub run: Option<RunStatus>,
    /// How it ended, once it has.
    pub report: Option<PartReport>,
}

/// A piece of a node's log (the coordinator hands it on to the tool that asked).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogChunk {
    /// The log's bytes from the offset asked for (invalid UTF-8 replaced).
    pub text: String,
    /// The offset to ask for next.
    pub next_offset: u64,
    /// Whether the node's part still runs (more may come).
    pub running: bool,
}

/// A daemon's part of a dataflow ended: answered with `()`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartEnded {
    /// The dataflow.
    pub uuid: String,
    /// The daemon's machine.
    pub machine: String,
    /// How it ended.
    pub report: PartReport,
}

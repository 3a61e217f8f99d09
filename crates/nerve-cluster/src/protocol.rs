//! What the tools, the coordinator and the daemons ask each other: JSON over Zenoh queries.
//!
//! Every answer is a `Result` as JSON (`{"Ok": …}` or `{"Err": "why"}`); the error text is
//! meant for the user and names the machine, dataflow or node concerned.

use std::collections::BTreeMap;
use std::time::Duration;

use nerve_message::param::ParamOp;
pub use nerve_message::run_status::RunState;
use nerve_message::run_status::RunStatus;
use nerve_spec::Dataflow;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use zenoh::Wait;

use crate::error::ClusterError;

/// Which machine runs each node: node id → machine id.
pub type Placement = BTreeMap<String, String>;

/// How a dataflow runs on every machine (the flags of `nerve start`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartOptions {
    /// Milliseconds nodes get to exit after a stop before they are killed.
    pub grace_ms: u64,
    /// Milliseconds every node of every machine gets to become ready.
    pub ready_timeout_ms: u64,
    /// Bytes each output's pool keeps.
    pub pool_capacity: usize,
    /// Largest message a node may send.
    pub max_message: usize,
}

impl Default for StartOptions {
    fn default() -> Self {
        let run = nerve_runtime::RunOptions::default();
        Self {
            grace_ms: u64::try_from(run.grace.as_millis()).unwrap_or(u64::MAX),
            ready_timeout_ms: u64::try_from(run.ready_timeout.as_millis()).unwrap_or(u64::MAX),
            pool_capacity: run.pool_capacity,
            max_message: run.max_message,
        }
    }
}

/// A dataflow as the coordinator hands it to each machine's daemon: the whole of it, where
/// each node runs, and how; each daemon takes its own part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assignment {
    /// The dataflow's id (a UUID): the run id on every machine.
    pub uuid: String,
    /// Its name, if it was given one.
    pub name: Option<String>,
    /// The whole dataflow, as validated where `nerve start` ran.
    pub dataflow: Dataflow,
    /// Where each node runs.
    pub placement: Placement,
    /// How.
    pub options: StartOptions,
}

impl Assignment {
    /// The machines with nodes, each once, sorted.
    #[must_use]
    pub fn machines(&self) -> Vec<String> {
        let mut machines: Vec<String> = self.placement.values().cloned().collect();
        machines.sort();
        machines.dedup();
        machines
    }

    /// `name (uuid)`, or the uuid.
    #[must_use]
    pub fn label(&self) -> String {
        label(self.name.as_deref(), &self.uuid)
    }

    /// The run id of `machine`'s part: the dataflow's id and the machine's, so that parts on
    /// machines that share a file system (network namespaces of one host) never share a
    /// shared-memory object or a socket.
    #[must_use]
    pub fn run_id(&self, machine: &str) -> String {
        format!("{}-{machine}", self.uuid)
    }

    /// Where each machine writes its nodes' logs: `out/<uuid>` beside the dataflow file, as
    /// `nerve run` does (the dataflow's folder is at the same path on every machine).
    #[must_use]
    pub fn log_dir(&self) -> std::path::PathBuf {
        self.dataflow.base_dir.join("out").join(&self.uuid)
    }
}

/// How a dataflow is named in messages: `name (uuid)`, or the uuid.
#[must_use]
pub fn label(name: Option<&str>, uuid: &str) -> String {
    match name {
        Some(name) => format!("{name} ({uuid})"),
        None => uuid.to_owned(),
    }
}

/// A request to the coordinator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum CoordinatorRequest {
    /// Who is connected: answered with [`ClusterStatus`].
    Check,
    /// Run a dataflow: answered with [`Started`] once every node on every machine started.
    Start {
        /// The validated dataflow.
        dataflow: Box<Dataflow>,
        /// A name, unique among the cluster's running dataflows.
        name: Option<String>,
        /// The host id of the machine `nerve start` runs on: nodes without `deploy: machine`
        /// run on the daemon of that host.
        host: String,
        /// The dataflow's id, chosen by the tool (it follows the logs before the start).
        uuid: String,
        /// How.
        options: StartOptions,
    },
    /// Stop a dataflow (a name, or a uuid or a prefix of one): answered with its
    /// [`DataflowStatus`] as the stop began.
    Stop {
        /// Which.
        dataflow: String,
    },
    /// Every dataflow: answered with a list of [`DataflowStatus`].
    List,
    /// A node's output from `offset` on: answered with a [`LogChunk`].
    Logs {
        /// Which dataflow.
        dataflow: String,
        /// Which node.
        node: String,
        /// Bytes of the log already read.
        offset: u64,
    },
    /// Read or set a running node's parameters, on its machine: answered with an
    /// `Option<`[`ParamAnswer`](nerve_message::param::ParamAnswer)`>`, `None` when no running
    /// dataflow of the cluster has the node.
    Param {
        /// The dataflow (a name, or a uuid or a prefix of one), when several have the node.
        dataflow: Option<String>,
        /// The node.
        node: String,
        /// What to do.
        op: ParamOp,
    },
    /// Stop every dataflow, every daemon and the coordinator: answered with `()`.
    Destroy,
    /// A daemon's part of a dataflow ended: answered with `()`.
    PartEnded {
        /// The dataflow.
        uuid: String,
        /// The daemon's machine.
        machine: String,
        /// How it ended.
        report: PartReport,
    },
}

/// A request to a machine's daemon.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum DaemonRequest {
    /// Who are you, what do you run: answered with [`DaemonHello`].
    Hello,
    /// Set up this machine's part and answer `()` once every node of it is ready.
    Prepare(Box<Assignment>),
    /// Start the part of dataflow `uuid` that [`DaemonRequest::Prepare`] readied.
    Start {
        /// The dataflow.
        uuid: String,
    },
    /// Stop the part of dataflow `uuid`.
    Stop {
        /// The dataflow.
        uuid: String,
    },
    /// The part of dataflow `uuid` now: answered with [`PartStatus`].
    Status {
        /// The dataflow.
        uuid: String,
    },
    /// A node's output from `offset` on: answered with a [`LogChunk`].
    Logs {
        /// The dataflow.
        uuid: String,
        /// The node.
        node: String,
        /// Bytes already read.
        offset: u64,
    },
    /// Read or set the parameters of a node of the part of dataflow `uuid`: answered with the
    /// node's [`ParamAnswer`](nerve_message::param::ParamAnswer).
    Param {
        /// The dataflow.
        uuid: String,
        /// The node.
        node: String,
        /// What to do.
        op: ParamOp,
    },
    /// Stop every part and exit: answered with `()`.
    Exit,
}

/// What the coordinator answers to `nerve check`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterStatus {
    /// The coordinator itself.
    pub coordinator: ProcessInfo,
    /// Every connected daemon, by machine id.
    pub daemons: Vec<DaemonInfo>,
}

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
    /// Its process.
    pub process: ProcessInfo,
    /// Dataflows it runs a part of now.
    pub running: usize,
}

/// A daemon's answer to [`DaemonRequest::Hello`]: itself and every part it knows, so a
/// coordinator that starts (again) learns what runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DaemonHello {
    /// The daemon.
    pub info: DaemonInfo,
    /// Its parts, running or ended.
    pub parts: Vec<(Assignment, PartStatus)>,
}

/// Answer to [`CoordinatorRequest::Start`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Started {
    /// The dataflow's id.
    pub uuid: String,
    /// Where each node runs.
    pub placement: Placement,
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

/// A dataflow of the cluster, as `nerve list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataflowStatus {
    /// Its id.
    pub uuid: String,
    /// Its name.
    pub name: Option<String>,
    /// The dataflow file, as named where it was started.
    pub file: std::path::PathBuf,
    /// Where it is (a dataflow of the cluster is listed until it is over, with `--all` after).
    pub state: RunState,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// The node ids, in dataflow order.
    pub nodes: Vec<String>,
    /// Where each node runs.
    pub placement: Placement,
    /// Each machine's part.
    pub parts: Vec<PartStatus>,
    /// Where the nodes' logs are, on each node's machine.
    pub log_dir: std::path::PathBuf,
    /// The coordinator's process id.
    pub coordinator_pid: u32,
}

impl DataflowStatus {
    /// `name (uuid)`, or the uuid.
    #[must_use]
    pub fn label(&self) -> String {
        label(self.name.as_deref(), &self.uuid)
    }

    /// The dataflow in the shape `nerve list` gives every dataflow: each node with its machine
    /// and its state there (`lost` with its machine).
    #[must_use]
    pub fn to_run_status(&self, coordinator: &str) -> RunStatus {
        use nerve_message::run_status::NodeStatus;
        let nodes = self
            .nodes
            .iter()
            .map(|id| {
                let machine = self.placement.get(id).cloned().unwrap_or_default();
                let part = self.parts.iter().find(|p| p.machine == machine);
                let live = part.and_then(|p| p.run.as_ref()).and_then(|r| r.nodes.iter().find(|n| &n.id == id));
                let mut node = live.cloned().unwrap_or_else(|| NodeStatus {
                    id: id.clone(),
                    pid: None,
                    state: match part {
                        Some(p) if p.state == PartState::Lost => format!("lost (machine `{machine}` is gone)"),
                        Some(p) => p
                            .report
                            .as_ref()
                            .and_then(|r| r.nodes.iter().find(|(n, _)| n == id).map(|(_, how)| how.clone()))
                            .unwrap_or_else(|| p.state.as_str().to_owned()),
                        None => "unknown".to_owned(),
                    },
                    restarts: 0,
                    inputs: Vec::new(),
                    config: serde_json::Value::Null,
                    machine: None,
                });
                node.machine = Some(machine);
                node
            })
            .collect();
        RunStatus {
            run_id: self.uuid.clone(),
            name: self.name.clone(),
            dataflow: self.file.clone(),
            log_dir: self.log_dir.clone(),
            pid: self.coordinator_pid,
            state: self.state,
            nodes,
            coordinator: Some(coordinator.to_owned()),
            error: self.error.clone(),
        }
    }
}

/// A piece of a node's log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogChunk {
    /// The log's bytes from the offset asked for (invalid UTF-8 replaced).
    pub text: String,
    /// The offset to ask for next.
    pub next_offset: u64,
    /// Whether the node's part still runs (more may come).
    pub running: bool,
}

/// How long answers that need no work may take.
pub(crate) const QUICK: Duration = Duration::from_secs(5);

/// Ended dataflows (and parts) kept for `nerve list --all`, `nerve logs` and a new
/// coordinator's hello, the oldest forgotten first.
pub(crate) const KEEP_ENDED: usize = 100;

/// Largest piece of a log one answer carries.
pub const LOG_CHUNK: usize = 1 << 20;

/// Sends `request` to the queryable at `key` and reads its one answer.
///
/// # Errors
/// [`ClusterError::Refused`] with the peer's reason; [`ClusterError::Network`] when nobody
/// answers within `timeout` (`who` names the peer); [`ClusterError::Protocol`] for an answer
/// this version cannot read.
pub fn ask<Q: Serialize, A: DeserializeOwned>(
    session: &zenoh::Session,
    key: &str,
    who: &str,
    request: &Q,
    timeout: Duration,
) -> Result<A, ClusterError> {
    let payload =
        serde_json::to_vec(request).map_err(|e| ClusterError::Protocol { from: who.into(), why: e.to_string() })?;
    let asked = std::time::Instant::now();
    let replies = session
        .get(key)
        .payload(payload)
        .timeout(timeout)
        .wait()
        .map_err(|e| ClusterError::Network(format!("cannot ask {who}: {e}")))?;
    let Ok(reply) = replies.recv() else {
        // The query ends early when nobody serves the key at all.
        let why = if asked.elapsed() < timeout {
            "is not there (nobody serves its requests)".to_owned()
        } else {
            format!("did not answer within {timeout:?}")
        };
        return Err(ClusterError::Network(format!("{who} {why}")));
    };
    let bytes = match reply.result() {
        Ok(sample) => sample.payload().to_bytes(),
        Err(e) => {
            return Err(ClusterError::Network(format!(
                "{who} did not answer: {}",
                String::from_utf8_lossy(&e.payload().to_bytes())
            )));
        }
    };
    let answer: Result<A, String> =
        serde_json::from_slice(&bytes).map_err(|e| ClusterError::Protocol { from: who.into(), why: e.to_string() })?;
    answer.map_err(ClusterError::Refused)
}

/// Serves the requests of `queryable`, each on a thread of its own (some wait long: a machine
/// readying its part), until `done()`.
///
/// # Errors
/// When the queryable fails.
pub(crate) fn serve(
    queryable: &zenoh::query::Queryable<zenoh::handlers::FifoChannelHandler<zenoh::query::Query>>,
    whose: &str,
    done: impl Fn() -> bool,
    answer: impl Fn(zenoh::query::Query) + Clone + Send + 'static,
) -> Result<(), ClusterError> {
    while !done() {
        match queryable.recv_timeout(Duration::from_millis(200)) {
            Ok(Some(query)) => {
                let answer = answer.clone();
                if let Err(e) = std::thread::Builder::new().name("nerve-request".into()).spawn(move || answer(query)) {
                    tracing::error!(error = %e, "cannot serve a request");
                }
            }
            Ok(None) => {}
            Err(e) => return Err(ClusterError::Network(format!("{whose} requests: {e}"))),
        }
    }
    Ok(())
}

/// Answers `query` with `answer`.
pub fn answer<A: Serialize>(query: &zenoh::query::Query, answer: &Result<A, String>) {
    let payload = serde_json::to_vec(answer).unwrap_or_else(|e| {
        serde_json::to_vec(&Err::<(), String>(format!("cannot encode the answer: {e}"))).unwrap_or_default()
    });
    if let Err(e) = query.reply(query.key_expr().clone(), payload).wait() {
        tracing::debug!(error = %e, "the asker is gone");
    }
}

/// The request a query carries.
///
/// # Errors
/// The text to answer when it is not a request of this version.
pub fn request<Q: DeserializeOwned>(query: &zenoh::query::Query) -> Result<Q, String> {
    let bytes = query.payload().map(|p| p.to_bytes()).unwrap_or_default();
    serde_json::from_slice(&bytes).map_err(|e| {
        format!(
            "not a request this nerve {} understands (is every machine on the same version?): {e}",
            nerve_message::NERVE_VERSION
        )
    })
}

/// This process, as the cluster sees it, listening on `listen`.
#[must_use]
pub fn this_process(listen: Vec<String>) -> ProcessInfo {
    ProcessInfo {
        hostname: std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_owned()).unwrap_or_default(),
        host: nerve_topic::network::host_id(),
        pid: std::process::id(),
        version: nerve_message::NERVE_VERSION.to_owned(),
        listen,
    }
}

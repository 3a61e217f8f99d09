//! What a running dataflow reports about itself to tools (`nerve list`, `nerve stop`,
//! `nerve logs`), over the same socket its nodes use.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A running dataflow, as its runtime sees it now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunStatus {
    /// The run's id (a UUID).
    pub run_id: String,
    /// The name given with `--name`, if any.
    pub name: Option<String>,
    /// The dataflow file.
    pub dataflow: PathBuf,
    /// Where the nodes' logs are written (`<node>.log`; for a dataflow of a cluster, on each
    /// node's machine).
    pub log_dir: PathBuf,
    /// Process id of the runtime: `nerve run`, or for a dataflow of a cluster its coordinator
    /// (on the coordinator's machine).
    pub pid: u32,
    /// Where the run is in its life.
    pub state: RunState,
    /// Every node, in dataflow order.
    pub nodes: Vec<NodeStatus>,
    /// For a dataflow of a cluster: the coordinator's endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordinator: Option<String>,
    /// Why it failed, for a dataflow of a cluster that did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Where a run is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    /// Nodes are starting; none has been told to start yet.
    Starting,
    /// Every node was started.
    Running,
    /// A stop was requested (Ctrl-C, `nerve stop`, or a failure before start).
    Stopping,
    /// Every node finished cleanly (a dataflow of a cluster, listed with `--all`).
    Finished,
    /// It ended otherwise (a dataflow of a cluster, listed with `--all`).
    Failed,
}

impl RunState {
    /// The word `nerve list` shows.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Running => "running",
            Self::Stopping => "stopping",
            Self::Finished => "finished",
            Self::Failed => "failed",
        }
    }

    /// Whether the dataflow is over (only a cluster's dataflows are listed once over).
    #[must_use]
    pub fn is_over(self) -> bool {
        matches!(self, Self::Finished | Self::Failed)
    }
}

/// One node of a running dataflow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeStatus {
    /// Node id.
    pub id: String,
    /// Process id of its current process, if it has one.
    pub pid: Option<u32>,
    /// What it is doing: `starting`, `ready`, `running`, `restarting`, `waiting` (a dynamic
    /// node not connected yet), `finished`, or how it failed.
    pub state: String,
    /// Times its `restart:` policy started it again.
    pub restarts: u32,
    /// Its inputs fed by other nodes through shared memory.
    pub inputs: Vec<InputStatus>,
    /// Its entry of the dataflow as the run started it (path, inputs, outputs, services…), as
    /// JSON.
    #[serde(default)]
    pub config: serde_json::Value,
    /// The machine it runs on, in a dataflow of a cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
}

/// One shared-memory input of a node.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputStatus {
    /// Input id.
    pub id: String,
    /// The output it reads, `NODE/OUTPUT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Messages waiting in its queue.
    pub queued: usize,
    /// Its queue's size.
    pub capacity: usize,
    /// Messages dropped so far because the queue was full (`drop_oldest`).
    pub dropped: u64,
    /// Messages that reached its queue so far, dropped ones included: what `nerve top` takes
    /// rates from.
    #[serde(default)]
    pub received: u64,
    /// The time between a message's send stamp and its take by the node, sampled on one
    /// message in eight: the sum of the samples in nanoseconds, so two looks give the mean
    /// between them.
    #[serde(default)]
    pub latency_sum_ns: u64,
    /// Messages whose latency was sampled so far.
    #[serde(default)]
    pub latency_samples: u64,
    /// The largest latency sampled so far, in nanoseconds.
    #[serde(default)]
    pub latency_max_ns: u64,
}

//! What a cluster's coordinator asks each machine's daemon (`nerve daemon`): JSON over Zenoh
//! queries on the daemon's key, each answered with a `Result` (see [`crate`]).

use std::collections::BTreeMap;

use nerve_spec::Dataflow;
use serde::{Deserialize, Serialize};

use crate::param::ParamOp;

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

/// A request to a machine's daemon.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum DaemonRequest {
    /// Who are you, what do you run: answered with
    /// [`DaemonHello`](crate::daemon_to_coordinator::DaemonHello).
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
    /// The part of dataflow `uuid` now: answered with
    /// [`PartStatus`](crate::daemon_to_coordinator::PartStatus).
    Status {
        /// The dataflow.
        uuid: String,
    },
    /// A node's output from `offset` on: answered with a
    /// [`LogChunk`](crate::daemon_to_coordinator::LogChunk).
    Logs {
        /// The dataflow.
        uuid: String,
        /// The node.
        node: String,
        /// Bytes already read.
        offset: u64,
    },
    /// Read or set the parameters of a node of the part of dataflow `uuid`: answered with the
    /// node's [`ParamAnswer`](crate::param::ParamAnswer).
    Param {
        /// The dataflow.
        uuid: String,
        /// The node.
        node: String,
        /// What to do.
        op: ParamOp,
    },
    /// Change the graph of this machine's part of dataflow `uuid`: answered with what was
    /// done.
    Edit {
        /// The dataflow.
        uuid: String,
        /// The change, whose nodes all run on this machine.
        edit: crate::graph_edit::GraphEdit,
    },
    /// Lay one end of an edge between machines that the graph gains while dataflow `uuid`
    /// runs: answered with `()`.
    Link {
        /// The dataflow.
        uuid: String,
        /// Which end, of which edge.
        link: Link,
    },
    /// Stop every part and exit: answered with `()`.
    Exit,
}

/// One end of an edge between machines that a running dataflow gains (`nerve node connect`,
/// or an input of an added node): the output's machine sends it on the network, the reader's
/// receives it for its nodes. Each machine does so once per output, whatever reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Link {
    /// Send output `output` of `node`, which runs here, to the other machines.
    Send {
        /// The producing node.
        node: String,
        /// Its output.
        output: String,
    },
    /// Receive output `output` of `node`, which runs on `machine`, for input `input` of
    /// `reader` here.
    Receive {
        /// The producing node, as the dataflow declares it.
        node: Box<nerve_spec::NodeSpec>,
        /// Its output.
        output: String,
        /// Its machine.
        machine: String,
        /// The reading node here.
        reader: String,
        /// Its input.
        input: String,
        /// What the reader does if the output's machine is lost.
        on_host_lost: nerve_spec::HostLossPolicy,
    },
}

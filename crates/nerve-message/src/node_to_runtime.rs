//! Requests a node (or a tool such as `nerve list`) sends to the runtime of its run.

use serde::{Deserialize, Serialize};

use crate::param::{ParamAnswer, ParamOp};

/// A node's request, or a tool's: a tool's request is the only one on its connection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum NodeRequest {
    /// First message on a connection: who the node is and which nerve it was built with.
    Register {
        /// Node id from the dataflow.
        node_id: String,
        /// Version of the node library ([`crate::NERVE_VERSION`] on its side).
        nerve_version: String,
        /// Process id, so the runtime can tell a node started by hand.
        pid: u32,
    },
    /// The node mapped its channels and waits for the start signal.
    Ready,
    /// The node will send nothing more on these outputs: their readers are told now.
    CloseOutputs {
        /// Output ids.
        outputs: Vec<String>,
    },
    /// A tool asks how the run is doing; answered with [`crate::runtime_to_node::RuntimeMessage::Status`].
    Inspect,
    /// A tool asks the run to stop, as Ctrl-C would; answered with its status.
    StopRun,
    /// A tool reads or sets a parameter of node `node`; answered with
    /// [`crate::runtime_to_node::RuntimeMessage::Param`].
    Param {
        /// Node id.
        node: String,
        /// What to do.
        op: ParamOp,
    },
    /// A tool changes the running graph; answered with
    /// [`crate::runtime_to_node::RuntimeMessage::Edited`].
    Edit(crate::graph_edit::GraphEdit),
    /// A node's answer to [`crate::runtime_to_node::RuntimeMessage::ParamRequest`] `id`.
    ParamReply {
        /// The request's id.
        id: u64,
        /// The parameters read or set, or why not.
        answer: ParamAnswer,
    },
}

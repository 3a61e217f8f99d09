//! What the runtime sends to a node (and, on their own connection, to a tool that asked).

use serde::{Deserialize, Serialize};

use crate::ChannelTable;
use crate::param::{ParamAnswer, ParamOp};

/// The runtime's message to a node, or its answer to a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RuntimeMessage {
    /// Registration accepted: the node's channels.
    Registered(Box<ChannelTable>),
    /// Registration refused, with what to do about it.
    Refused {
        /// Human-readable reason.
        reason: String,
    },
    /// Every node is ready: start.
    Start,
    /// The dataflow is stopping: finish up and exit.
    Stop,
    /// A node that serves a service or action this node calls ended for good (see
    /// [`crate::channel_table::Called`]).
    ServerNodeEnded {
        /// The node that ended.
        node: String,
        /// How it ended, for the user.
        outcome: String,
    },
    /// The producer of this input is gone; nothing more will arrive on it.
    InputClosed {
        /// Input id.
        input: String,
    },
    /// The producer of this input, a `path: dynamic` node that had left, joined again: its
    /// messages arrive again, and its next leave closes the input again.
    InputReopened {
        /// Input id.
        input: String,
    },
    /// `nerve node connect` fed this node's input `input` (new, or closed before) from topic
    /// `topic`, the output's: the node subscribes with the queues `queue..queue +`
    /// [`TOPIC_FEEDS`](crate::channel_table::TOPIC_FEEDS) of its inbox, of `queue_size` entries.
    Connect {
        /// Input id.
        input: String,
        /// Topic of the output that feeds it (canonical).
        topic: String,
        /// Entries of each queue.
        queue_size: usize,
        /// Index of the first queue in the node's inbox.
        queue: usize,
    },
    /// `nerve node disconnect` cut input `input`, fed by `nerve node connect`: the node drops
    /// its subscription and the input closes.
    Disconnect {
        /// Input id.
        input: String,
    },
    /// The answer to a tool's [`crate::node_to_runtime::NodeRequest::Edit`]: what was done, or
    /// why not, in words for the user.
    Edited {
        /// What was done, or why not.
        answer: Result<String, String>,
    },
    /// What drives the run (the replayers of `nerve replay`) has ended: the node's timers,
    /// those of the dataflow and those its code made, close as its inputs do when their
    /// producers finish, so that it ends after reading what reached it.
    TimersClosed,
    /// The run's status, for a tool that asked.
    Status(Box<crate::run_status::RunStatus>),
    /// A tool's parameter request, forwarded to the node; the node answers with
    /// [`crate::node_to_runtime::NodeRequest::ParamReply`] and the same `id`.
    ParamRequest {
        /// Names the request in the reply.
        id: u64,
        /// What to do.
        op: ParamOp,
    },
    /// The node's answer to a tool's parameter request (or the runtime's, when the node could
    /// not be asked).
    Param {
        /// The parameters read or set, or why not.
        answer: ParamAnswer,
    },
}

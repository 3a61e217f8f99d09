//! What a run's event loop is told: by its nodes' connections, their processes' exits, tools,
//! signals, and the [`RunControl`](crate::RunControl) of the process that runs it.

use std::os::unix::net::UnixStream;
use std::process::ExitStatus;
use std::sync::mpsc::Sender;

use nerve_message::graph_edit::GraphEdit;
use nerve_message::node_to_runtime::NodeRequest;
use nerve_message::param::{ParamAnswer, ParamOp};
use nerve_message::run_status::RunStatus;

/// Which process of a node an event is about: it counts the node's starts, so what a dead
/// process still had in flight is never taken for its restarted successor's.
pub(crate) type Generation = u32;

pub(crate) enum Ev {
    Register {
        stream: UnixStream,
        node_id: String,
        version: String,
        pid: u32,
        accept: Sender<Option<(usize, Generation)>>,
    },
    Request(usize, Generation, NodeRequest),
    Disconnected(usize, Generation),
    Exited(usize, Generation, ExitStatus),
    Signal,
    /// A tool asks for the run's status (`stop`: and asks it to stop first).
    Tool {
        stop: bool,
        reply: Sender<RunStatus>,
    },
    /// A tool's parameter request for node `node`, answered on `reply`.
    Param {
        node: String,
        op: ParamOp,
        reply: Sender<ParamAnswer>,
    },
    /// A change to the running graph, answered on `reply`: from a tool on the run's socket, or
    /// (`by_control`) from the process that runs it through its [`RunControl`].
    Edit {
        edit: GraphEdit,
        by_control: bool,
        reply: Sender<Result<String, String>>,
    },
    /// A node its controlling process serves, to add to the running graph: answered on
    /// `reply`.
    AddHelper {
        spec: Box<nerve_spec::NodeSpec>,
        reply: Sender<Result<String, String>>,
    },
    /// The go of a [`RunControl`]: start the ready nodes.
    Go,
    /// Inputs, as (node id, input id), whose producer will send nothing more.
    CloseInputs(Vec<(String, String)>),
}

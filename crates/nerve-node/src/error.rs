//! Errors of the node API.

use std::path::PathBuf;

use nerve_message::frame::FrameError;
use nerve_shm::ShmError;

/// What went wrong talking to the runtime or sending data.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// The process was not started by nerve and no node id was given.
    #[error(
        "this process was not started by nerve ({var} is not set): run it with `nerve run dataflow.yml`, \
         or give its id (`Node(\"my-node\")`) for a node declared with `path: dynamic`"
    )]
    NotStartedByNerve {
        /// The missing environment variable.
        var: &'static str,
    },
    /// The runtime's socket could not be reached.
    #[error("cannot reach the nerve runtime at {path}: {source}")]
    Connect {
        /// Socket path.
        path: PathBuf,
        /// OS error.
        #[source]
        source: std::io::Error,
    },
    /// No running dataflow accepted this dynamic node.
    #[error("no running dataflow accepts node `{node}`{details}")]
    NoDataflow {
        /// Node id.
        node: String,
        /// What each running dataflow answered.
        details: String,
    },
    /// The runtime refused the node.
    #[error("the nerve runtime refused node `{node}`: {reason}")]
    Refused {
        /// Node id.
        node: String,
        /// The runtime's reason.
        reason: String,
    },
    /// The runtime is a version this library cannot talk to.
    #[error(
        "version mismatch: this node uses nerve {node} but the runtime is nerve {runtime}; \
         rebuild the node against nerve {runtime} (Rust: set `nerve-node = \"{runtime}\"`; Python: \
         reinstall nerve in the interpreter that runs the node)"
    )]
    VersionMismatch {
        /// Library version.
        node: String,
        /// Runtime version.
        runtime: String,
    },
    /// A timer was added under an id the node already has.
    #[error("the node already has an input or timer `{id}`: give the timer another id")]
    TimerId {
        /// The id asked for.
        id: String,
    },
    /// Simulated time was set in a run that keeps real time.
    #[error("this run keeps real time: start it with `nerve run --sim-time` to set the time from a node")]
    NotSimTime,
    /// `realtime: {lock_memory: true}` could not be honoured.
    #[error(
        "cannot lock the node's memory (realtime: lock_memory): {0}; raise the locked-memory limit \
         (`ulimit -l`, or LimitMEMLOCK= in a systemd unit) or run as root"
    )]
    LockMemory(#[source] std::io::Error),
    /// A control-plane failure.
    #[error("control connection to the runtime failed: {0}")]
    Control(#[from] FrameError),
    /// The runtime sent something out of order.
    #[error("unexpected message from the runtime: {0}")]
    Protocol(String),
    /// A shared-memory failure.
    #[error(transparent)]
    Shm(#[from] ShmError),
    /// A topic the dataflow wires to this node could not be set up or sent to.
    #[error(transparent)]
    Topic(#[from] nerve_topic::TopicError),
    /// A service or action the node calls has no server within the run's ready timeout.
    #[error("node `{node}` calls {kind} `{name}`, which had no server within {waited:?}; {hint}")]
    NoServer {
        /// Node id.
        node: String,
        /// `service` or `action`.
        kind: String,
        /// Its name.
        name: String,
        /// How long the node waited.
        waited: std::time::Duration,
        /// Where its server was expected to come from.
        hint: String,
    },
    /// Every node declared to serve a service or action the node calls ended before it served.
    #[error(
        "node `{node}` calls {kind} `{name}`, but node `{server}`, which serves it, ended ({outcome}) before serving it"
    )]
    ServerEnded {
        /// Node id.
        node: String,
        /// `service` or `action`.
        kind: String,
        /// Its name.
        name: String,
        /// The node that was to serve it.
        server: String,
        /// How that node ended.
        outcome: String,
    },
    /// Sending on an output the node did not declare.
    #[error(
        "node `{node}` has no output `{output}` (declared outputs: {declared}); add it to `outputs:` in the dataflow"
    )]
    UnknownOutput {
        /// Node id.
        node: String,
        /// Output asked for.
        output: String,
        /// Declared outputs.
        declared: String,
    },
    /// A value whose Arrow type is not the one its output declares (`output_types:`).
    #[error(
        "output `{output}` is declared `{declared}`, whose Arrow type is {expected}; this value is {actual}: \
         nothing was sent"
    )]
    WrongType {
        /// Output id.
        output: String,
        /// The type the dataflow declares.
        declared: String,
        /// Its Arrow type.
        expected: String,
        /// The Arrow type of the value given.
        actual: String,
    },
    /// A type declared on an output that this node cannot resolve.
    #[error("output `{output}` is declared `{declared}`: {reason}")]
    DeclaredType {
        /// Output id.
        output: String,
        /// The type the dataflow declares.
        declared: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// A typed message that cannot be made into its Arrow value.
    #[error("cannot send the message on output `{output}`: {source}")]
    Message {
        /// Output id.
        output: String,
        /// Why.
        #[source]
        source: nerve_msgs::MessageError,
    },
    /// A message larger than the run allows.
    #[error("message of {len} bytes on output `{output}` exceeds the limit of {limit} bytes")]
    TooLarge {
        /// Output id.
        output: String,
        /// Message size.
        len: usize,
        /// Limit.
        limit: usize,
    },
}

//! Everything a node needs to find its shared-memory channels.

// The queue shapes are the data plane's own types, so runtime and nodes map inboxes from the
// very values the runtime created them with.
pub use nerve_shm::inbox::QueueShape;
pub use nerve_shm::ring::Policy;
use serde::{Deserialize, Serialize};

/// Queues a topic subscriber has, one per publisher process it follows: a node's topic input
/// takes this many queues of its inbox.
pub const TOPIC_FEEDS: usize = 32;

/// The inbox of one node, as every node touching it must map it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxSpec {
    /// Node index in the run.
    pub node: usize,
    /// Its queues, in input order.
    pub queues: Vec<QueueShape>,
}

/// Where one input's messages come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum InputChannel {
    /// Another node's output, over shared memory.
    Shm {
        /// Input id.
        id: String,
        /// Queue index in this node's inbox.
        queue: usize,
        /// Producer node index.
        producer: usize,
        /// Output index within the producer.
        output: usize,
        /// This input's edge (holder bit) on that output.
        edge: usize,
    },
    /// A timer ticking in the node itself.
    Timer {
        /// Input id.
        id: String,
        /// Period in nanoseconds.
        period_ns: u64,
    },
    /// A named topic, which the node subscribes to itself (domain 0), with its queues in the
    /// node's inbox.
    Topic {
        /// Input id.
        id: String,
        /// Topic name (canonical).
        topic: String,
        /// Messages kept per publisher while the node is busy; the oldest go first.
        queue_size: usize,
        /// Index of the first of the input's [`TOPIC_FEEDS`] queues in this node's inbox.
        queue: usize,
    },
}

/// One reader of an output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReaderChannel {
    /// Reader node index.
    pub node: usize,
    /// Queue index in the reader's inbox.
    pub queue: usize,
    /// Edge (holder bit) on the output.
    pub edge: usize,
}

/// One output of the node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputChannel {
    /// Output id.
    pub id: String,
    /// Output index within the node.
    pub index: usize,
    /// Its readers.
    pub readers: Vec<ReaderChannel>,
    /// Topic the node also publishes this output on (domain 0), if any.
    #[serde(default)]
    pub topic: Option<String>,
    /// The type the dataflow declares for this output (`output_types:`), as written: the
    /// node refuses to send a value of another Arrow type.
    #[serde(default)]
    pub declared_type: Option<String>,
}

/// A node's view of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChannelTable {
    /// Run id: prefix of every shared-memory object.
    pub run_id: String,
    /// The run's name as the scope of its topics, services and actions (see
    /// [`crate::env::RUN`]); empty from a runtime that scoped nothing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub run_name: String,
    /// The names the run shares (`share:`): global rather than the run's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub share: Vec<String>,
    /// This node's id.
    pub node_id: String,
    /// This node's index.
    pub node_index: usize,
    /// Times the node's `restart:` policy started it again before this process: 0 for its
    /// first (dora-rs's `restart_count()`).
    #[serde(default)]
    pub restarts: u32,
    /// Version of the runtime.
    pub nerve_version: String,
    /// Inputs in declaration order.
    pub inputs: Vec<InputChannel>,
    /// Outputs in declaration order.
    pub outputs: Vec<OutputChannel>,
    /// Inboxes this node maps: its own, its producers' and its readers'.
    pub inboxes: Vec<InboxSpec>,
    /// Bytes an output's pool may keep before freeing unused blocks.
    pub pool_capacity: usize,
    /// Largest message a node may send, in bytes.
    pub max_message: usize,
    /// Lock the node's memory (`realtime: {lock_memory: true}`); a process must do this itself.
    #[serde(default)]
    pub lock_memory: bool,
    /// The run keeps simulated time (`nerve run --sim-time`): the node reads its clock and
    /// runs its timers from the run's shared clock ([`nerve_shm::names::RunNames::clock`]).
    #[serde(default)]
    pub sim_time: bool,
    /// The dataflow's `exit_when_nodes_finish`: once every input another node feeds has
    /// closed, the node's timers and topic inputs close too.
    #[serde(default)]
    pub exit_when_nodes_finish: bool,
    /// The node's parameters as the dataflow declares them (`params:`).
    #[serde(default)]
    pub params: std::collections::BTreeMap<String, crate::param::ParamValue>,
    /// The dataflow's folders of message definitions (`types:`), searched first for the
    /// declared types.
    #[serde(default)]
    pub types: Vec<std::path::PathBuf>,
    /// The whole dataflow, as JSON.
    pub descriptor: serde_json::Value,
    /// This node's entry of the dataflow, as JSON.
    pub config: serde_json::Value,
    /// The services and actions the node declares it calls and does not serve itself: the node
    /// starts once each has a server.
    #[serde(default)]
    pub calls: Vec<Called>,
    /// How long the node waits for the servers of `calls` before it fails, in milliseconds
    /// (the run's ready timeout); `None`: the node's default.
    #[serde(default)]
    pub server_wait_ms: Option<u64>,
    /// The `input_timeout` of each input that has one, in nanoseconds, by input id: once a
    /// message came, silence this long closes the input for the node until the next message.
    #[serde(default)]
    pub input_timeouts: std::collections::BTreeMap<String, u64>,
}

/// A service or action a node calls (`services: {call: [...]}`, `actions: {call: [...]}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Called {
    /// Whether it is a service or an action.
    pub kind: CalledKind,
    /// Its canonical name.
    pub name: String,
    /// The nodes of the dataflow that declare serving it (none: served from outside).
    pub served_by: Vec<String>,
}

/// What a [`Called`] name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CalledKind {
    /// A service.
    Service,
    /// An action.
    Action,
}

impl std::fmt::Display for CalledKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Service => "service",
            Self::Action => "action",
        })
    }
}

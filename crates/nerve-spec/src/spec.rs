//! The types a loaded dataflow is made of.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::param::ParamValue;

/// Queue length of an input that does not set `queue_size`.
pub const DEFAULT_QUEUE_SIZE: usize = 10;

/// Most inputs that may read one output.
pub const MAX_READERS_PER_OUTPUT: usize = 63;

/// Largest `queue_size` accepted, so that a typo cannot make a reader
/// reserve memory for billions of messages.
pub const MAX_QUEUE_SIZE: usize = 1_000_000;

/// A loaded, validated dataflow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dataflow {
    /// The YAML file as given.
    pub file: PathBuf,
    /// The file's directory, absolute (canonicalized when possible). Node paths
    /// and `build:` commands are relative to it.
    pub base_dir: PathBuf,
    /// The nodes, in declaration order.
    pub nodes: Vec<NodeSpec>,
    /// Folders of message definitions (`types:`), absolute, searched before
    /// `NERVE_TYPES_PATH`, installed ROS 2 packages and the shipped interfaces.
    pub types: Vec<PathBuf>,
    /// How `nerve run` lets the dataflow's processes reach other hosts (`network:`).
    #[serde(default)]
    pub network: NetworkSpec,
    /// Topic, service and action names the run uses in the global scope, shared with other
    /// runs and with processes outside any run (`share:`); every other name the run's nodes
    /// use is scoped to the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub share: Vec<String>,
    /// Once every input that another node feeds has closed, a node's timers and topic inputs
    /// close too, so it ends (dora-rs's `exit_when_nodes_finish:`, for batch runs). A node fed
    /// by no other node is a source, and unaffected.
    #[serde(default)]
    pub exit_when_nodes_finish: bool,
    /// The whole document as JSON, plain scalars read with the YAML 1.2 core
    /// schema (null, booleans, integers, floats; everything else a string).
    pub descriptor: serde_json::Value,
}

impl Dataflow {
    /// The node with this id.
    pub fn node(&self, id: &str) -> Option<&NodeSpec> {
        self.nodes.iter().find(|n| n.id == id)
    }

    /// The inputs that read `node`'s `output`, as (reader node id, reader input
    /// id), in node declaration order and then input declaration order.
    pub fn readers_of(&self, node: &str, output: &str) -> Vec<(String, String)> {
        self.nodes
            .iter()
            .flat_map(|reader| {
                reader.inputs.iter().filter_map(move |input| match &input.source {
                    InputSource::Output { node: n, output: o } if n == node && o == output => {
                        Some((reader.id.clone(), input.id.clone()))
                    }
                    _ => None,
                })
            })
            .collect()
    }
}

/// What a node's failure (a non-zero exit or a signal, once its `restart:` policy gave up)
/// does to the other nodes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailurePolicy {
    /// The others keep running; its readers see its outputs close (the default, as in dora-rs
    /// and ROS 2's launch).
    #[default]
    Continue,
    /// Every node of the dataflow is stopped, and the run fails naming this node.
    StopAll,
}

/// The dataflow's `network:` key: how far its processes' topics, services and actions reach,
/// the dataflow's own default where neither a `nerve run` flag nor the environment says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkSpec {
    /// `discovery_range: host | subnet`; `None` when not written.
    pub discovery_range: Option<DiscoveryRange>,
    /// `connect: [ENDPOINT, ...]`: peers to connect to whatever the range (`tcp/10.0.0.2:7447`).
    pub connect: Vec<String>,
}

/// How far discovery reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiscoveryRange {
    /// This machine only.
    Host,
    /// The local network, by multicast scouting.
    Subnet,
}

impl DiscoveryRange {
    /// How it is written: `host`, `subnet`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Host => "host",
            Self::Subnet => "subnet",
        }
    }
}

/// One node of a dataflow: a process nerve starts (or, for
/// [`NodePath::Dynamic`], waits for).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeSpec {
    /// Unique within the dataflow; letters, digits, `_`, `.` and `-`.
    pub id: String,
    /// Human-readable name.
    pub name: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// What to run.
    pub path: NodePath,
    /// Command-line arguments. `args:` written as one string is split the way
    /// a POSIX shell would split it, without expansions.
    pub args: Vec<String>,
    /// Environment variables; numbers and booleans as written.
    pub env: BTreeMap<String, String>,
    /// Shell command that builds the node, run in its [work dir](Self::work_dir).
    pub build: Option<String>,
    /// What `nerve build` fetches first: the node's repository (`git:`) or its file
    /// (`path: https://…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetch: Option<crate::fetch::Fetch>,
    /// Inputs, in declaration order.
    pub inputs: Vec<InputSpec>,
    /// Output ids, in declaration order, including those that also publish to a topic.
    pub outputs: Vec<String>,
    /// Output id → canonical topic name, for the outputs written
    /// `{id: …, topic: …}`: what the node also publishes on that topic. Empty
    /// when no output names a topic.
    #[serde(default)]
    pub output_topics: BTreeMap<String, String>,
    /// The machine to run on, from the node's `deploy: {machine: ID}` or else
    /// the dataflow's.
    pub machine: Option<String>,
    /// What the machine must be labelled with (`deploy: {labels: {gpu: "true"}}`, the node's or
    /// else the dataflow's): on a cluster, a node with no machine goes to a daemon started with
    /// all of them (`nerve daemon --label gpu=true`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// `deploy: {working_dir: DIR}` (the node's or else the dataflow's), absolute: the folder
    /// its build and process run in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<PathBuf>,
    /// Whether and how the node's process is started again after it exits (`restart:`).
    #[serde(default)]
    pub restart: RestartSpec,
    /// Real-time scheduling, CPU pinning and memory locking (`realtime:`).
    #[serde(default)]
    pub realtime: Option<RealtimeSpec>,
    /// Services the node serves and calls (`services: {serve: [...], call: [...]}`), canonical
    /// names: declared so the graph shows them; the node's code creates them.
    #[serde(default)]
    pub services: ServicesSpec,
    /// The node's parameters as declared (`params:`), by key; nested mappings are flattened to
    /// dotted keys (`pid: {kp: 1}` is `pid.kp`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, ParamValue>,
    /// Actions the node serves and sends goals to (`actions: {serve: [...], call: [...]}`),
    /// canonical names, declared like `services`.
    #[serde(default)]
    pub actions: ServicesSpec,
    /// What the node's inputs fed from another host do when that host is lost
    /// (`on_host_lost:`).
    #[serde(default)]
    pub on_host_lost: HostLossPolicy,
    /// What its failure does to the rest of the dataflow (`on_failure:`, the node's own or the
    /// dataflow's); `None`: [`FailurePolicy::Continue`].
    #[serde(default)]
    pub on_failure: Option<FailurePolicy>,
    /// Output id → the type declared for it (`output_types:`), as written.
    pub output_types: BTreeMap<String, String>,
    /// Input id → the type declared for it (`input_types:`), as written.
    pub input_types: BTreeMap<String, String>,
    /// The node's `ros2:` key: a bridge to ROS 2 that nerve runs in place of a program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ros2: Option<crate::ros2::Ros2Bridge>,
    /// What its log keeps and where it goes (`min_log_level`, `max_log_size`,
    /// `max_rotated_files`, `send_logs_as`, `send_stdout_as`).
    #[serde(default)]
    pub logs: crate::logs::NodeLogs,
    /// `finish_grace_secs`: how long the node may still run once every other node has ended
    /// and all its inputs are closed, before nerve kills it. `None`: as long as it likes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_grace: Option<Duration>,
    /// `health_check_timeout`: how long the node may go without calling nerve (asking for an
    /// event, sending) while not waiting for an event, once the run started, before nerve kills it as
    /// hung (its restart policy then applies). `None`: no such watch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_check: Option<Duration>,
    /// The node's YAML mapping as JSON: what the node API's config call returns.
    pub config: serde_json::Value,
    /// 1-based line where the node's mapping starts.
    pub line: usize,
}

impl NodeSpec {
    /// A node with only an id and a path (no inputs, outputs or settings; its config is
    /// `{id}`): for nodes a tool adds to a dataflow, such as a recorder or a bridge.
    #[must_use]
    pub fn new(id: &str, path: NodePath) -> Self {
        Self {
            id: id.to_owned(),
            name: None,
            description: None,
            path,
            args: Vec::new(),
            env: BTreeMap::new(),
            build: None,
            fetch: None,
            inputs: Vec::new(),
            outputs: Vec::new(),
            output_topics: BTreeMap::new(),
            machine: None,
            labels: BTreeMap::new(),
            working_dir: None,
            restart: RestartSpec::default(),
            realtime: None,
            services: ServicesSpec::default(),
            params: BTreeMap::new(),
            actions: ServicesSpec::default(),
            on_host_lost: HostLossPolicy::default(),
            on_failure: None,
            output_types: BTreeMap::new(),
            input_types: BTreeMap::new(),
            ros2: None,
            logs: crate::logs::NodeLogs::default(),
            finish_grace: None,
            health_check: None,
            config: serde_json::json!({ "id": id }),
            line: 0,
        }
    }

    /// The folder the node's `build:` and its process run in: its `deploy: {working_dir}`, else
    /// its `git:` clone, else `base_dir`, the dataflow's.
    #[must_use]
    pub fn work_dir<'a>(&'a self, base_dir: &'a std::path::Path) -> &'a std::path::Path {
        self.working_dir
            .as_deref()
            .or_else(|| self.fetch.as_ref().and_then(crate::fetch::Fetch::work_dir))
            .unwrap_or(base_dir)
    }

    /// Whether `input` is one operator of this node reading another's output: the operator host
    /// hands such messages over inside the process, so no shared-memory channel carries them.
    #[must_use]
    pub fn in_process(&self, input: &InputSpec) -> bool {
        matches!(self.path, NodePath::Operators(_))
            && matches!(&input.source, InputSource::Output { node, .. } if *node == self.id)
    }
}

/// What a node runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodePath {
    /// `path: dynamic`: started by hand, not spawned by nerve.
    Dynamic,
    /// A Python script (`.py`), absolute. It may not exist yet when the node
    /// has `build:`.
    Python(PathBuf),
    /// An existing executable file, absolute: relative to the dataflow's
    /// directory or found on `PATH`.
    Executable(PathBuf),
    /// An absolute path that does not exist yet; the node's `build:` makes it.
    ToBuild(PathBuf),
    /// dora-rs operators (`operator:`, `operators:`), run by nerve's operator host in one
    /// Python process.
    Operators(Vec<crate::operators::OperatorSpec>),
}

/// One input of a node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputSpec {
    /// The input's id, as the node sees it.
    pub id: String,
    /// Where its messages come from.
    pub source: InputSource,
    /// Most messages waiting in the input's queue; at least 1.
    pub queue_size: usize,
    /// What happens when the queue is full: [`QueuePolicy::Backpressure`]
    /// unless set; always [`QueuePolicy::DropOldest`] for a topic input.
    pub policy: QueuePolicy,
    /// `input_timeout`: once a message came, silence this long makes the node see the input
    /// closed ([`crate::InputSource::Output`] and topic inputs); a message after that reopens it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Duration>,
    /// 1-based line of the input's key.
    pub line: usize,
}

/// Where an input's messages come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputSource {
    /// Another node's output (possibly the reading node's own).
    Output {
        /// The writing node's id.
        node: String,
        /// The output id on that node.
        output: String,
    },
    /// A clock tick every `interval`.
    Timer {
        /// Time between ticks; never zero.
        interval: Duration,
    },
    /// Whatever is published on a topic (`topic/<name>`), by any process;
    /// not an edge of the dataflow, so [`Dataflow::readers_of`] leaves it out.
    Topic {
        /// The canonical topic name, without the `topic/` prefix or a leading `/`.
        topic: String,
    },
    /// The run's log entries (`dora/logs[/LEVEL[/NODE]]`), each as JSON text: those at `level`
    /// and above, of node `node` or of every node but the reader.
    Logs {
        /// The least level delivered.
        level: crate::logs::LogLevel,
        /// The only node whose entries are delivered.
        node: Option<String>,
    },
}

impl fmt::Display for InputSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputSource::Output { node, output } => write!(f, "{node}/{output}"),
            InputSource::Timer { interval } => write!(f, "timer every {interval:?}"),
            InputSource::Topic { topic } => write!(f, "topic/{topic}"),
            InputSource::Logs { level, node: None } => write!(f, "dora/logs/{level}"),
            InputSource::Logs { level, node: Some(node) } => write!(f, "dora/logs/{level}/{node}"),
        }
    }
}

/// What a full input queue does with the next message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueuePolicy {
    /// `drop_oldest`: drop the oldest queued message, keeping the newest ones.
    DropOldest,
    /// `backpressure`: the writer waits for room, so nothing is lost.
    #[default]
    Backpressure,
}

impl QueuePolicy {
    /// The name used in YAML.
    pub fn as_str(self) -> &'static str {
        match self {
            QueuePolicy::DropOldest => "drop_oldest",
            QueuePolicy::Backpressure => "backpressure",
        }
    }
}

impl fmt::Display for QueuePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an input fed by a node of another host does when that host is lost (its daemon gone,
/// or its network down past the link's lease).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostLossPolicy {
    /// `close`: the input is closed (INPUT_CLOSED), as if its producer had finished (the
    /// default).
    #[default]
    Close,
    /// `wait`: the input stays open; data flows again if the host comes back and its nodes
    /// are started again.
    Wait,
}

/// When a node's process is started again after it exits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RestartPolicy {
    /// `never`: an exit is final (the default).
    #[default]
    Never,
    /// `on-failure`: restart after a non-zero exit status or a signal.
    OnFailure,
    /// `always`: restart after any exit, even a clean one.
    Always,
}

impl RestartPolicy {
    /// The name used in YAML.
    pub fn as_str(self) -> &'static str {
        match self {
            RestartPolicy::Never => "never",
            RestartPolicy::OnFailure => "on-failure",
            RestartPolicy::Always => "always",
        }
    }
}

/// A node's `restart:`: the policy, and the back-off between attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestartSpec {
    /// When to restart.
    pub policy: RestartPolicy,
    /// Restarts counted (see [`RestartSpec::count`]) before nerve gives up on the node;
    /// `u32::MAX`: no limit.
    pub max_restarts: u32,
    /// Wait before the first restart counted; each further one waits twice as long.
    pub delay: Duration,
    /// Longest wait between two restarts.
    pub max_delay: Duration,
    /// When the count of restarts starts again from zero.
    #[serde(default)]
    pub count: RestartCount,
}

/// When the count of restarts that [`RestartSpec::max_restarts`] limits starts again from zero.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RestartCount {
    /// Once a process ran for [`RestartSpec::STABLE_RUN`]: restarts *in a row* are counted
    /// (nerve's `restart:`).
    #[default]
    InARow,
    /// Once this long passed since the first restart counted: "N restarts within M seconds"
    /// (`restart: {window: M}`, dora-rs's `restart_window`).
    Window(Duration),
    /// Never: the limit bounds the restarts of the whole run (dora-rs's `max_restarts`
    /// without `restart_window`).
    Run,
}

impl RestartSpec {
    /// How long a process must have run for its exit not to count as one more restart in a row.
    pub const STABLE_RUN: Duration = Duration::from_secs(60);

    /// Whether an exit (`failed`: non-zero status or a signal) calls for a restart, before
    /// counting how many there were.
    pub fn wants_restart(&self, failed: bool) -> bool {
        match self.policy {
            RestartPolicy::Never => false,
            RestartPolicy::OnFailure => failed,
            RestartPolicy::Always => true,
        }
    }

    /// The wait before restart number `attempt` counted (0 for the first).
    pub fn delay_before(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.min(31)).unwrap_or(u32::MAX);
        self.delay.saturating_mul(factor).min(self.max_delay)
    }
}

impl Default for RestartSpec {
    fn default() -> Self {
        Self {
            policy: RestartPolicy::Never,
            max_restarts: 5,
            delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(10),
            count: RestartCount::InARow,
        }
    }
}

/// How the operating system schedules a real-time node's threads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchedPolicy {
    /// `fifo` (`SCHED_FIFO`): runs until it blocks or a higher priority wakes.
    #[default]
    Fifo,
    /// `rr` (`SCHED_RR`): like `fifo`, with time slices among equal priorities.
    Rr,
}

impl SchedPolicy {
    /// The name used in YAML.
    pub fn as_str(self) -> &'static str {
        match self {
            SchedPolicy::Fifo => "fifo",
            SchedPolicy::Rr => "rr",
        }
    }
}

/// A node's `realtime:` settings, applied when its process starts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RealtimeSpec {
    /// Real-time priority, 1 (lowest) to 99; `None` keeps the normal scheduler.
    pub priority: Option<u8>,
    /// The real-time policy used with `priority`.
    pub policy: SchedPolicy,
    /// CPUs the node's threads may run on; empty for no pinning.
    pub cpus: Vec<usize>,
    /// Lock every page of the process in memory (`mlockall`), so no page fault waits for disk.
    pub lock_memory: bool,
    /// The longest, in microseconds, any CPU of the machine may take to leave an idle state
    /// while the node's run lasts (a Linux CPU latency QoS request). 0 keeps idle CPUs polling
    /// instead of halting: the fastest wake-ups, and idle CPUs that never rest.
    pub cpu_latency_us: Option<u32>,
}

/// A node's `services:` or `actions:` declaration: the names it serves and calls.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServicesSpec {
    /// Services the node serves.
    pub serve: Vec<String>,
    /// Services the node calls.
    pub call: Vec<String>,
}

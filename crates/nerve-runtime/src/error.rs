//! Errors of the runtime.

use std::path::PathBuf;

/// Why a run could not start or did not finish cleanly.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// Shared memory could not be set up.
    #[error("setting up shared memory: {0}")]
    Shm(#[from] nerve_shm::ShmError),
    /// A topic that feeds nodes the run's logs could not be published.
    #[error("cannot publish the run's logs on topic `{topic}`: {source}")]
    LogFeed {
        /// The topic.
        topic: String,
        /// Why.
        #[source]
        source: nerve_topic::TopicError,
    },
    /// The control socket could not be created.
    #[error("cannot create the control socket {path}: {source}")]
    Socket {
        /// Socket path.
        path: PathBuf,
        /// OS error.
        #[source]
        source: std::io::Error,
    },
    /// A node's build command failed.
    #[error("build of node `{node}` failed: `{command}` {status}")]
    Build {
        /// Node id.
        node: String,
        /// The command.
        command: String,
        /// How it ended.
        status: String,
    },
    /// A node's `git:` repository or `path:` URL could not be fetched.
    #[error("node `{node}`: cannot fetch {url}: {reason}")]
    Fetch {
        /// Node id.
        node: String,
        /// The repository or file.
        url: String,
        /// Why, in git's or the server's words.
        reason: String,
    },
    /// A node's files are fetched by the build, which has not run.
    #[error("node `{node}`: {url} is not fetched yet; run `nerve build` (or `nerve run --build`) first")]
    NotFetched {
        /// Node id.
        node: String,
        /// The repository or file.
        url: String,
    },
    /// A node's `deploy: {working_dir}` is not a folder of its machine.
    #[error("node `{node}`: its `working_dir` {dir} is not a folder here")]
    NoWorkingDir {
        /// Node id.
        node: String,
        /// The folder.
        dir: PathBuf,
    },
    /// After building, the node's program is still missing.
    #[error("node `{node}`: `{path}` does not exist after its build; check `build:` and `path:`")]
    BuildOutputMissing {
        /// Node id.
        node: String,
        /// Expected program.
        path: PathBuf,
    },
    /// A node's program is missing and `--build` was not given.
    #[error("node `{node}`: `{path}` does not exist yet; run with `--build` to build it with `{command}`")]
    NotBuilt {
        /// Node id.
        node: String,
        /// Expected program.
        path: PathBuf,
        /// Its build command.
        command: String,
    },
    /// A node could not be spawned.
    #[error("cannot start node `{node}` ({program}): {source}")]
    Spawn {
        /// Node id.
        node: String,
        /// Program.
        program: String,
        /// OS error.
        #[source]
        source: std::io::Error,
    },
    /// A process's own real-time priority (a daemon's `--realtime-priority`) cannot be set.
    #[error("realtime: {problem}")]
    Priority {
        /// Why, and what to do about it.
        problem: String,
    },
    /// A node's `realtime:` settings cannot be applied on this machine.
    #[error("node `{node}`: realtime: {problem}")]
    Realtime {
        /// Node id.
        node: String,
        /// Which setting, why, and what to do about it.
        problem: String,
    },
    /// The log folder could not be written.
    #[error("cannot write logs to {path}: {source}")]
    Logs {
        /// Folder.
        path: PathBuf,
        /// OS error.
        #[source]
        source: std::io::Error,
    },
    /// A running dataflow did not answer on its control socket.
    #[error("cannot talk to the dataflow at {path}: {source}")]
    Unreachable {
        /// Its socket.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// No running dataflow has this name or id.
    #[error("no running dataflow is called `{name}` or has an id starting with it (running: {})", if running.is_empty() { "none" } else { running.as_str() })]
    NoSuchRun {
        /// What was asked for.
        name: String,
        /// The runs there are, named.
        running: String,
    },
    /// No run of this host, running or ended, has this name or id, as far as its records go.
    #[error(
        "no dataflow that runs or ran on this host is called `{name}` or has an id starting with it; \
         a run's logs are the files out/<run id>/<node>.log in its dataflow's folder (or in its --log-dir)"
    )]
    NoRecordOfRun {
        /// What was asked for.
        name: String,
    },
    /// No dataflow runs on this host, and a command needs one.
    #[error("no dataflow is running on this host")]
    NothingRunning,
    /// Several dataflows run on this host, and a command did not say which.
    #[error("several dataflows are running ({running}): name one with `--dataflow NAME|ID`")]
    WhichRun {
        /// The runs there are, named.
        running: String,
    },
    /// Several dataflows have ids starting with this.
    #[error("`{name}` matches several dataflows: {candidates}; give more of the id")]
    AmbiguousRun {
        /// What was asked for.
        name: String,
        /// Their ids.
        candidates: String,
    },
    /// No running dataflow (of those asked) has a node with this id.
    #[error("no running dataflow has a node `{node}` (nodes running: {})", if running.is_empty() { "none" } else { running.as_str() })]
    NoSuchNode {
        /// What was asked for.
        node: String,
        /// The nodes there are, as `<dataflow>/<node>`.
        running: String,
    },
    /// The dataflow asked for has no node with this id.
    #[error("{run} has no node `{node}` (its nodes: {nodes})")]
    NodeNotInRun {
        /// The run, named.
        run: String,
        /// What was asked for.
        node: String,
        /// Its nodes.
        nodes: String,
    },
    /// Several running dataflows have a node with this id.
    #[error("several running dataflows have a node `{node}`: {candidates}; pick one with --dataflow NAME|ID")]
    AmbiguousNode {
        /// What was asked for.
        node: String,
        /// The runs, named.
        candidates: String,
    },
    /// `--name` is already the name of a running dataflow.
    #[error("a dataflow named `{name}` is already running (run {run_id}); stop it or choose another name")]
    NameTaken {
        /// The name.
        name: String,
        /// The run that has it.
        run_id: String,
    },
    /// A run name (its `--name`, or a cluster's) that cannot scope the run's topics, services
    /// and actions.
    #[error("run name `{name}`: {why}: it scopes the run's topics, services and actions; choose another --name")]
    BadRunName {
        /// The name.
        name: String,
        /// What is wrong with it.
        why: nerve_spec::topic_name::RunNameError,
    },
    /// Some other OS failure.
    #[error("{what}: {source}")]
    Os {
        /// What was being done.
        what: &'static str,
        /// OS error.
        #[source]
        source: std::io::Error,
    },
}

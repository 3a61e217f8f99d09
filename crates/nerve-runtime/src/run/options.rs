//! How to run a dataflow: [`RunOptions`].

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::control::RunControl;
use crate::logs::LogTap;
use crate::reaper::Reaper;

/// How to run a dataflow.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Run every node's `build:` command first.
    pub build: bool,
    /// How long nodes get to exit after a stop before they are killed.
    pub grace: Duration,
    /// How long nodes get to connect and report ready.
    pub ready_timeout: Duration,
    /// Folder for the run's logs (default `<dataflow folder>/out/<run id>`).
    pub log_dir: Option<PathBuf>,
    /// Interpreter for `.py` nodes.
    pub python: PathBuf,
    /// Bytes an output's pool keeps before freeing unused blocks.
    pub pool_capacity: usize,
    /// Largest message a node may send.
    pub max_message: usize,
    /// Echo node output to stdout (it always goes to the log files).
    pub echo: bool,
    /// A name for `nerve list`, `nerve stop` and `nerve logs`, besides the run id (see
    /// [`crate::inspect::check_name_free`]).
    pub name: Option<String>,
    /// The name the run's topics, services and actions are scoped to (the nodes get it as
    /// `NERVE_RUN`); `None`: [`RunOptions::name`], else the run id. A cluster gives every
    /// machine's part of a dataflow the same one, so the parts meet.
    pub scope: Option<String>,
    /// Keep simulated time: nodes' clocks and timers follow a shared clock that starts at zero
    /// and moves only when a node sets it.
    pub sim_time: bool,
    /// The run's id (a UUID); a fresh one when `None`. A cluster gives each host's part of a
    /// dataflow the dataflow's id.
    pub run_id: Option<String>,
    /// Stop on SIGINT and SIGTERM (a second one kills the nodes). A process that runs several
    /// dataflows handles signals itself and stops them through their [`RunControl`].
    pub handle_signals: bool,
    /// Ids of `path: dynamic` nodes that the calling process serves itself (a host daemon's
    /// bridges to other hosts): the run starts only once they are ready too, and they are
    /// told to stop once every other node has finished.
    pub helpers: Vec<String>,
    /// Ids of the nodes that drive the run (the replayers of `nerve replay`): once all of them
    /// have ended, the timer inputs of every other node close, so each node ends as it does
    /// when its last producer finishes, after reading all that reached it, instead of ticking
    /// on forever.
    pub end_with: Vec<String>,
    /// Hold the start until [`RunControl::start`], and let another thread stop the run.
    pub control: Option<Arc<RunControl>>,
    /// Also hands every line of node output to this.
    pub log_tap: Option<LogTap>,
    /// Environment every node starts with, under its own `env:`: the network settings of the
    /// command that runs the dataflow (see `nerve_topic::NetworkOptions::to_env`).
    pub node_env: Vec<(String, String)>,
    /// The watchdog that cleans up if this process dies; one of the run's own when `None`
    /// (forked at the start of [`run`](crate::run()), which must then be called before the process has
    /// threads). A process that runs dataflows on threads forks one with [`Reaper::spawn`]
    /// before its first thread.
    pub reaper: Option<Arc<Reaper>>,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            build: false,
            grace: Duration::from_secs(5),
            ready_timeout: Duration::from_secs(60),
            log_dir: None,
            python: PathBuf::from("python3"),
            pool_capacity: crate::DEFAULT_POOL_CAPACITY,
            max_message: 1 << 32,
            echo: true,
            name: None,
            scope: None,
            sim_time: false,
            run_id: None,
            handle_signals: true,
            helpers: Vec::new(),
            end_with: Vec::new(),
            control: None,
            log_tap: None,
            node_env: Vec::new(),
            reaper: None,
        }
    }
}

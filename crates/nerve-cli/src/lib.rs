//! The `nerve` command line.
//!
//! The same code serves the `nerve` binary and the `nerve` command the Python package installs
//! (which calls [`main`] inside the extension module, so library, CLI and runtime always share
//! one version).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};

mod action;
mod cluster;
mod foxglove;
pub mod graph;
pub mod logging;
mod network;
mod new;
mod node;
mod param;
mod record;
mod replay;
mod ros2;
mod runs;
mod sdk;
mod service;
mod tf;
mod top;
mod topic;
mod types;
mod values;
mod view;

/// nerve: run robot dataflows over zero-copy shared memory.
#[derive(Debug, Parser)]
#[command(name = "nerve", version, about, propagate_version = true, arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    network: network::NetworkArgs,
    #[command(flatten)]
    sdk: sdk::SdkArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a dataflow on this machine until every node finishes or Ctrl-C.
    Run(RunArgs),
    /// Run the `build:` command of every node.
    Build {
        /// The dataflow YAML file.
        dataflow: PathBuf,
    },
    /// Check a dataflow file without starting anything.
    Validate {
        /// The dataflow YAML file.
        dataflow: PathBuf,
    },
    /// Draw a dataflow as a Mermaid flowchart (text, Markdown or an HTML page).
    Graph(graph::GraphArgs),
    /// Create a new node or dataflow project from a template.
    New(new::NewArgs),
    /// Inspect the topics of this host: list them, print their messages, rate or bandwidth; publish on one.
    Topic(topic::TopicArgs),
    /// List the services that have a server, or call one.
    Service(service::ServiceArgs),
    /// Look at the transform tree: its frames, or one transform as it changes.
    Tf(tf::TfArgs),
    /// List the actions that have a server, or send one a goal and follow it.
    Action(action::ActionArgs),
    /// List the running dataflows, on this machine and on the cluster: their nodes, states,
    /// restarts and queues.
    List(runs::ListArgs),
    /// Watch the nodes of the running dataflows, refreshing: state, CPU, memory, input rates,
    /// drops and queues.
    Top(top::TopArgs),
    /// Stop a running dataflow as Ctrl-C would, and wait for it to end.
    Stop(runs::StopArgs),
    /// Run a dataflow on the cluster: every node on its `deploy: machine`, started together.
    Start(cluster::StartArgs),
    /// Run the coordinator of a cluster of machines (in the foreground).
    Coordinator(cluster::CoordinatorArgs),
    /// Run this machine's daemon of a cluster (in the foreground).
    Daemon(cluster::DaemonArgs),
    /// Start a coordinator and a daemon of this machine in the background.
    Up(cluster::UpArgs),
    /// Stop every dataflow of the cluster, its daemons and its coordinator.
    Destroy(cluster::ClusterArgs),
    /// Is the coordinator up, and which daemons are connected?
    Check(cluster::ClusterArgs),
    /// Print a node's output (its log file), with `--follow` until the dataflow ends.
    Logs(runs::LogsArgs),
    /// List the nodes of the running dataflows, show one's inputs, outputs and services, or
    /// change a running graph: add, remove, connect, disconnect.
    Node(node::NodeArgs),
    /// List, read or set a running node's parameters.
    Param(param::ParamArgs),
    /// List the message, service and action types this machine knows, or show one.
    Types(types::TypesArgs),
    /// Serve this host's topics, dataflow outputs, services and parameters to Foxglove (its
    /// WebSocket protocol) until Ctrl-C.
    Foxglove(foxglove::FoxgloveArgs),
    /// Serve a live dashboard of this host's running dataflows to a browser until Ctrl-C: the
    /// graph with each edge's rate and latency, nodes' state, CPU and memory, channel values,
    /// transforms and logs.
    View(view::ViewArgs),
    /// Join this machine's nerve topics with a ROS 2 graph.
    Ros2(ros2::Ros2Args),
    /// Record a dataflow's outputs and topics to an MCAP file while running it.
    Record(record::RecordArgs),
    /// Run a dataflow with its source nodes fed from a recording, or republish its topics.
    Replay(replay::ReplayArgs),
    /// The recorder node `nerve record` adds to a dataflow (started by the runtime).
    #[command(hide = true)]
    RecordNode(record::RecordNodeArgs),
    /// A source node replaced by `nerve replay` (started by the runtime).
    #[command(hide = true)]
    ReplayNode(replay::ReplayNodeArgs),
    /// A dataflow's `ros2:` bridge node (started by the runtime).
    #[command(hide = true)]
    Ros2Node,
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// The dataflow YAML file.
    dataflow: PathBuf,
    #[command(flatten)]
    flags: RunFlags,
}

/// How `nerve run` (and `nerve record` and `nerve replay`, which run a dataflow the same way)
/// runs a dataflow.
#[derive(Debug, Clone, clap::Args)]
struct RunFlags {
    /// Run every node's `build:` command first.
    #[arg(long)]
    build: bool,
    /// Seconds nodes get to exit after a stop before they are killed.
    #[arg(long, default_value_t = 5.0, value_name = "SECS")]
    grace: f64,
    /// Seconds nodes get to connect and report ready, and then to find the servers of the
    /// services and actions they declare calling.
    #[arg(long, default_value_t = 60.0, value_name = "SECS")]
    ready_timeout: f64,
    /// Folder for the run's logs [default: <dataflow folder>/out/<run id>].
    #[arg(long, value_name = "DIR")]
    log_dir: Option<PathBuf>,
    /// Don't echo node output (it still goes to the log folder).
    #[arg(long, short)]
    quiet: bool,
    /// Largest message a node may send, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 32)]
    max_message: usize,
    /// Bytes each output's pool of shared memory keeps; past it, blocks no reader holds are
    /// freed, oldest first.
    #[arg(long, value_name = "BYTES", default_value_t = nerve_runtime::DEFAULT_POOL_CAPACITY)]
    pool_capacity: usize,
    /// A name for `nerve list`, `nerve stop` and `nerve logs` (unique among running dataflows);
    /// the run's topics, services and actions are scoped to it [default: the run id].
    #[arg(long, value_parser = run_name)]
    name: Option<String>,
    /// Keep simulated time: every node's clock and timers follow a time that starts at zero
    /// and moves only when a node sets it (a simulator, or a replay).
    #[arg(long)]
    sim_time: bool,
    /// End each node once every input another node feeds has closed, its timers and topic
    /// inputs closing then [default: the dataflow's `exit_when_nodes_finish:`, else false].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    exit_when_nodes_finish: Option<bool>,
    /// Serve this host's topics, outputs, services and parameters to Foxglove on 127.0.0.1
    /// while the run lasts, as `nerve foxglove` does: on port 8765, or `--foxglove=PORT`.
    #[arg(long, value_name = "PORT", num_args = 0..=1, require_equals = true, default_missing_value = "8765")]
    foxglove: Option<u16>,
    /// Serve the live dashboard on 127.0.0.1 while the run lasts, as `nerve view` does: on
    /// port 8766, or `--view=PORT`.
    #[arg(long, value_name = "PORT", num_args = 0..=1, require_equals = true, default_missing_value = "8766")]
    view: Option<u16>,
}

/// A run's `--name`: it also scopes the run's topics, services and actions.
fn run_name(s: &str) -> Result<String, String> {
    nerve_spec::topic_name::check_run_name(s).map(|()| s.to_owned()).map_err(|e| e.to_string())
}

/// `--run RUN`: whose topic, service or action a command means.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct RunFlag {
    /// The run whose own name this is (its `--name`, else its run id, as the RUN column of
    /// `list` shows it) [default: the global name, shared by every run that shares it].
    #[arg(long, value_name = "RUN", value_parser = run_name)]
    run: Option<String>,
}

impl RunFlag {
    /// The scope an endpoint of the command takes.
    pub(crate) fn scope(&self) -> nerve_topic::RunScope {
        self.run.clone().map_or(nerve_topic::RunScope::Inherit, nerve_topic::RunScope::Run)
    }
}

/// Prints `rows` under `header`, each column as wide as its widest cell (the last one as it is).
pub(crate) fn print_columns(
    out: &mut dyn std::io::Write,
    header: &[&str],
    rows: &[Vec<String>],
) -> std::io::Result<()> {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let header: Vec<String> = header.iter().map(|h| (*h).to_owned()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let last = row.len().saturating_sub(1);
        let mut line = String::new();
        for (i, (cell, w)) in row.iter().zip(&widths).enumerate() {
            if i == last {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<w$}  "));
            }
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// A listing's RUN cell: the run a name belongs to, `-` for a global name.
pub(crate) fn run_cell(run: Option<&str>) -> String {
    run.unwrap_or("-").to_owned()
}

/// Runs the command line `args` (program name first) and returns the process exit code.
pub fn main<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    // A coordinator's or daemon's log shows Zenoh's warnings (a refused TLS handshake, a lost
    // link); a tool's error already says what its failed connection means.
    init_logging(matches!(cli.command, Some(Command::Coordinator(_) | Command::Daemon(_))));
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            1
        }
    }
}

fn init_logging(zenoh_warnings: bool) {
    // Zenoh's own start-up notes (ids, addresses) are noise on a terminal, as are the Foxglove
    // server's (`nerve foxglove` says where it listens) and the DDS stack's: rustdds logs every
    // discovered peer, and at shutdown warns of peers already gone and of multicast groups it
    // never joined on a loopback-only participant; ros2-client warns that ROS_DISTRO is unset,
    // which nerve never needs. The bridge reports what matters itself.
    const QUIET: &str = "foxglove=warn,ros2_client=error,rustdds=error,rustdds::network::udp_listener=off";
    let zenoh = if zenoh_warnings { "warn" } else { "error" };
    logging::init(&format!("info,zenoh={zenoh},{QUIET}"));
}

fn load(path: &Path) -> anyhow::Result<nerve_spec::Dataflow> {
    // The spec error lists every problem with file, line and field.
    let mut df = nerve_spec::load(path).map_err(|e| anyhow::anyhow!("{e}"))?;
    for node in &mut df.nodes {
        if let Some(bridge) = &node.ros2 {
            // A `ros2:` node is this command, which reads the bridge from its environment.
            let config = serde_json::to_string(bridge).context("writing a ROS 2 bridge's configuration")?;
            node.env.insert(nerve_ros2::bridge::CONFIG_VAR.to_owned(), config);
            (node.path, node.args) = nerve_itself(&["ros2-node".to_owned()])?;
        }
    }
    Ok(df)
}

fn dispatch(cli: Cli) -> anyhow::Result<i32> {
    cli.network.apply()?;
    if let Some(folder) = cli.sdk.folder() {
        return sdk::print(folder);
    }
    let Some(command) = cli.command else {
        anyhow::bail!("no command given: `nerve --help` lists them");
    };
    match command {
        Command::Run(args) => run(&load(&args.dataflow)?, &args.flags, Vec::new()),
        Command::Build { dataflow } => {
            let df = load(&dataflow)?;
            nerve_runtime::build(&df)?;
            Ok(0)
        }
        Command::Validate { dataflow } => {
            let df = load(&dataflow)?;
            println!("{}: {} nodes, valid", dataflow.display(), df.nodes.len());
            Ok(0)
        }
        Command::Graph(args) => graph::run(&args, &load(&args.dataflow)?),
        Command::New(args) => new::run(&args),
        Command::Topic(args) => topic::run(&args),
        Command::Service(args) => service::run(&args),
        Command::Tf(args) => tf::run(&args),
        Command::Action(args) => action::run(&args),
        Command::List(args) => runs::list(&args),
        Command::Top(args) => top::top(&args),
        Command::Stop(args) => runs::stop(&args),
        Command::Start(args) => cluster::start(&args),
        Command::Coordinator(args) => cluster::coordinator(&args),
        Command::Daemon(args) => cluster::daemon(&args),
        Command::Up(args) => cluster::up(&args),
        Command::Destroy(args) => cluster::destroy(&args),
        Command::Check(args) => cluster::check(&args),
        Command::Logs(args) => runs::logs(&args),
        Command::Node(args) => node::run(&args),
        Command::Param(args) => param::run(&args),
        Command::Types(args) => types::run(&args),
        Command::Foxglove(args) => foxglove::run(&args),
        Command::View(args) => view::run(&args),
        Command::Ros2(args) => ros2::run(&args),
        Command::Record(args) => record::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::RecordNode(args) => record::node(&args),
        Command::ReplayNode(args) => replay::node(&args),
        Command::Ros2Node => {
            nerve_ros2::bridge::run_from_env()?;
            Ok(0)
        }
    }
}

/// Set by the Python package's `nerve` command to the interpreter it runs in.
const PYTHON_VAR: &str = "NERVE_PYTHON";

/// How a node that is this very `nerve` command, run as `nerve <args>`, is started: through
/// the Python package (`python -m nerve`) when the command runs from it, else this executable.
fn nerve_itself(args: &[String]) -> anyhow::Result<(nerve_spec::NodePath, Vec<String>)> {
    let (program, mut full) = match std::env::var_os(PYTHON_VAR) {
        Some(python) => (PathBuf::from(python), vec!["-m".to_owned(), "nerve".to_owned()]),
        None => (std::env::current_exe().context("finding the nerve executable")?, Vec::new()),
    };
    full.extend_from_slice(args);
    Ok((nerve_spec::NodePath::Executable(program), full))
}

/// The interpreter `.py` nodes run with: the Python package's own, when the command runs from it.
fn python() -> PathBuf {
    std::env::var_os(PYTHON_VAR).map_or_else(|| PathBuf::from("python3"), PathBuf::from)
}

fn secs(s: f64, what: &str) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(s).with_context(|| format!("--{what} must be a non-negative number of seconds"))
}

/// Runs `df` on this machine as `nerve run` does; returns the exit code. Once every node of
/// `end_with` has ended, the timers of the others close (see `RunOptions::end_with`).
fn run(df: &nerve_spec::Dataflow, args: &RunFlags, end_with: Vec<String>) -> anyhow::Result<i32> {
    let overridden;
    let df = match args.exit_when_nodes_finish {
        Some(exit_when_nodes_finish) => {
            overridden = nerve_spec::Dataflow { exit_when_nodes_finish, ..df.clone() };
            &overridden
        }
        None => df,
    };
    for node in df.nodes.iter().filter(|n| n.machine.is_some() || !n.labels.is_empty()) {
        tracing::warn!(
            node = %node.id,
            "`deploy: machine` and `labels` are ignored by `nerve run`, which runs every node on this machine"
        );
    }
    if let Some(name) = &args.name {
        nerve_runtime::inspect::check_name_free(name)?;
    }
    // Forked while this process has one thread: the Foxglove and dashboard servers start
    // threads, and a fork beside them would copy whatever they hold at that moment (the host's
    // Zenoh rendezvous lock, taken while a session opens, would then never be released).
    let reaper = nerve_runtime::Reaper::spawn()?;
    let network = network::with_dataflow(&df.network)?;
    // Dropped, and so stopped, when the run has ended.
    let _foxglove = args.foxglove.map(|port| foxglove::for_run(port, args.sim_time)).transpose()?;
    let _view = args.view.map(view::for_run).transpose()?;
    let opts = nerve_runtime::RunOptions {
        build: args.build,
        grace: secs(args.grace, "grace")?,
        ready_timeout: secs(args.ready_timeout, "ready-timeout")?,
        log_dir: args.log_dir.clone(),
        python: python(),
        echo: !args.quiet,
        max_message: args.max_message,
        pool_capacity: args.pool_capacity,
        name: args.name.clone(),
        sim_time: args.sim_time,
        node_env: network.to_env(),
        end_with,
        reaper: Some(reaper),
        ..nerve_runtime::RunOptions::default()
    };
    let report = nerve_runtime::run(df, &opts)?;
    for (node, input, n) in &report.dropped {
        eprintln!("nerve: {node}/{input} dropped {n} message(s) in all (queue full, drop_oldest)");
    }
    for (node, n) in &report.restarts {
        eprintln!("nerve: {node} was restarted {n} time(s)");
    }
    if report.success() {
        eprintln!("nerve: dataflow finished (logs in {})", report.log_dir.display());
        return Ok(0);
    }
    let failed: Vec<String> = report
        .nodes
        .iter()
        .filter_map(|(id, o)| match o {
            nerve_runtime::Outcome::Failed(how) => Some(format!("{id} ({how})")),
            nerve_runtime::Outcome::KilledAfterGrace => Some(format!("{id} (did not stop within the grace period)")),
            nerve_runtime::Outcome::KilledOnInterrupt => Some(format!("{id} (killed at the second interrupt)")),
            nerve_runtime::Outcome::Finished | nerve_runtime::Outcome::NotRun | nerve_runtime::Outcome::Removed => None,
        })
        .collect();
    if let Some(reason) = &report.aborted {
        eprintln!("error: dataflow aborted: {reason}");
    }
    if !failed.is_empty() {
        eprintln!("error: node(s) failed: {}", failed.join(", "));
    }
    eprintln!("nerve: logs in {}", report.log_dir.display());
    Ok(1)
}

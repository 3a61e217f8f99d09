//! `nerve run`: one dataflow on this host, from spawn to clean-up.
//!
//! [`run`] sets the run up (shared memory, the socket, the reaper, the nodes' log sinks), hands
//! it to its event loop, and tears it down. The concepts live apart:
//!
//! * [`options`] and [`report`]: the public types, how to run and what a run did;
//! * [`server`]: the run's socket, nodes' connections and tools' requests turned into events;
//! * [`event_loop`]: the loop, and how the run as a whole starts, stops and aborts;
//! * [`edit`]: changes to the running graph (`nerve node add|remove|connect|disconnect`);
//! * [`supervise`]: node processes, their exits, restarts, and what a node's going means for
//!   its readers and producers;
//! * [`state`]: the run's phase and each node's state, one enum each; [`status`]: the run as
//!   `nerve list` shows it.

mod edit;
mod event_loop;
mod options;
mod report;
mod server;
mod state;
mod status;
mod supervise;

use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nerve_shm::inbox::Inbox;
use nerve_shm::names::RunNames;
use nerve_shm::pool::BlockTable;
use nerve_shm::sim_clock::SimClock;
use nerve_spec::Dataflow;

pub use options::RunOptions;
pub use report::{Outcome, RunReport};

use self::server::spawn_acceptor;
use self::state::{NodeRt, Phase};
use crate::control::Readiness;
use crate::cpu_latency::CpuLatency;
use crate::error::RuntimeError;
use crate::event::Ev;
use crate::inspect::RunRecord;
use crate::log_feeds::LogFeeds;
use crate::logs::{LogSink, LogTap};
use crate::params::ParamRelay;
use crate::plan::Plan;
use crate::realtime::Realtime;
use crate::reaper::{Reaper, RunReaper};
use crate::spawn::{build_all, program};

/// How a node's process is started, kept for restarts.
struct Starter {
    program: PathBuf,
    args: Vec<String>,
    logs: LogSink,
    realtime: Option<Realtime>,
}

struct Run<'a> {
    /// The dataflow as it runs now: what it declared, and the nodes added since.
    df: Dataflow,
    opts: &'a RunOptions,
    plan: Plan,
    run_id: String,
    /// What the run's names are scoped to ([`scope_name`]).
    run_name: String,
    socket: PathBuf,
    log_dir: PathBuf,
    names: RunNames,
    /// Where every node's log entries go besides its file and the terminal.
    log_tap: Option<LogTap>,
    inboxes: Vec<Arc<Inbox>>,
    tables: Vec<Vec<BlockTable>>,
    nodes: Vec<NodeRt>,
    starters: Vec<Option<Starter>>,
    reaper: RunReaper,
    pumps: Vec<JoinHandle<()>>,
    events: Sender<Ev>,
    phase: Phase,
    /// Helpers were told to stop because every other node finished.
    helpers_stopped: bool,
    /// Whether the timers were closed because every node of [`RunOptions::end_with`] ended.
    timers_closed: bool,
    aborted: Option<String>,
    /// The node whose failure stopped the run (`on_failure: stop_all`).
    stopped_by: Option<String>,
    params: ParamRelay,
    /// The run's log feeds, if a node reads logs.
    log_feeds: Option<Arc<LogFeeds>>,
}

/// Runs `df` to completion on this host.
///
/// Returns when every node has exited; on Ctrl-C (SIGINT) or SIGTERM the nodes get a stop
/// event, then are killed after the grace period; a second signal kills them at once.
///
/// # Errors
/// When the run cannot be set up (build, shared memory, socket, spawn); node failures are
/// reported in the [`RunReport`] instead.
pub fn run(df: &Dataflow, opts: &RunOptions) -> Result<RunReport, RuntimeError> {
    let result = set_up_and_run(df, opts);
    if let Some(control) = &opts.control {
        if let Err(e) = &result {
            control.set(Readiness::Failed(e.to_string()));
        }
        control.detach();
    }
    result
}

/// The name a run's topics, services and actions are scoped to: [`RunOptions::scope`], else
/// its name, else its run id.
fn scope_name(opts: &RunOptions, run_id: &str) -> String {
    opts.scope.clone().or_else(|| opts.name.clone()).unwrap_or_else(|| run_id.to_owned())
}

fn set_up_and_run(df: &Dataflow, opts: &RunOptions) -> Result<RunReport, RuntimeError> {
    let run_id = opts.run_id.clone().unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
    let run_name = scope_name(opts, &run_id);
    nerve_spec::topic_name::check_run_name(&run_name)
        .map_err(|why| RuntimeError::BadRunName { name: run_name.clone(), why })?;
    if opts.build {
        build_all(&df.nodes, &df.base_dir)?;
    }
    let programs = df.nodes.iter().map(|n| program(n, &opts.python)).collect::<Result<Vec<_>, _>>()?;
    let names = RunNames::new(&run_id);
    let dir = nerve_message::runtime_dir();
    nerve_message::private_dir(&dir)
        .map_err(|source| RuntimeError::Os { what: "creating the runtime folder", source })?;
    let socket = nerve_message::run_socket(&run_id);
    let reaper = match &opts.reaper {
        Some(reaper) => reaper.clone(),
        None => Reaper::spawn()?,
    }
    .watch(names.prefix(), &socket);
    let result = run_inner(df, opts, &run_id, &names, &socket, programs, reaper);
    // Whatever happened, nothing of the run stays in /dev/shm or the runtime folder but its
    // record (for `nerve logs` of the ended run).
    let removed = names.sweep();
    tracing::debug!(removed, "shared memory removed");
    let _ = std::fs::remove_file(&socket);
    result
}

fn run_inner(
    df: &Dataflow,
    opts: &RunOptions,
    run_id: &str,
    names: &RunNames,
    socket: &Path,
    programs: Vec<Option<(PathBuf, Vec<String>)>>,
    reaper: RunReaper,
) -> Result<RunReport, RuntimeError> {
    let plan = Plan::new(df);
    // Held for the whole run; its name goes with the run's other objects at the end.
    let _clock = opts.sim_time.then(|| SimClock::create(&names.clock())).transpose()?;
    let mut inboxes = Vec::new();
    let mut tables = Vec::new();
    for n in 0..df.nodes.len() {
        inboxes.push(Arc::new(Inbox::create(&names.inbox(n), &plan.inboxes[n])?));
        tables.push(
            (0..plan.outputs[n].len()).map(|o| BlockTable::create(&names.pool(n, o))).collect::<Result<Vec<_>, _>>()?,
        );
    }
    let log_dir = opts.log_dir.clone().unwrap_or_else(|| df.base_dir.join("out").join(run_id));
    std::fs::create_dir_all(&log_dir).map_err(|source| RuntimeError::Logs { path: log_dir.clone(), source })?;
    // Absolute: the record is read from any folder.
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
    let record = RunRecord {
        run_id: run_id.to_owned(),
        name: opts.name.clone(),
        dataflow: absolute(&df.file),
        log_dir: absolute(&log_dir),
    };
    if let Err(e) = crate::inspect::remember(&record) {
        // Only `nerve logs` of the ended run needs it, and the log folder still holds the logs.
        tracing::warn!(error = %e, "cannot leave a record of this run for `nerve logs` after it ends");
    }
    let feeds = LogFeeds::new(df, &scope_name(opts, run_id), run_id)?;
    let tap = match (opts.log_tap.clone(), feeds.clone()) {
        (tap, None) => tap,
        (tap, Some(feeds)) => {
            let publish = LogTap::new(move |entry| feeds.publish(entry));
            Some(tap.map_or(publish.clone(), |tap| tap.and(publish)))
        }
    };
    let starters = df
        .nodes
        .iter()
        .zip(programs)
        .map(|(node, prog)| starter(node, prog, &log_dir, opts, tap.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    // Held until the run ends; after the other `realtime:` checks, so a refusal comes first.
    let _cpu_latency = CpuLatency::hold(df)?;

    let _ = std::fs::remove_file(socket);
    let listener =
        UnixListener::bind(socket).map_err(|source| RuntimeError::Socket { path: socket.to_owned(), source })?;
    let (tx, rx) = mpsc::channel();
    let done = Arc::new(AtomicBool::new(false));
    spawn_acceptor(listener, tx.clone(), done.clone());
    if opts.handle_signals {
        spawn_signal_forwarder(tx.clone())?;
    }
    if let Some(control) = &opts.control {
        control.attach(tx.clone());
    }

    let mut run = Run {
        df: df.clone(),
        opts,
        plan,
        run_id: run_id.to_owned(),
        run_name: scope_name(opts, run_id),
        socket: socket.to_owned(),
        log_dir: log_dir.clone(),
        names: names.clone(),
        log_tap: tap,
        inboxes,
        tables,
        nodes: df.nodes.iter().map(|n| NodeRt::new(n.id.clone(), opts.helpers.contains(&n.id))).collect(),
        starters,
        reaper,
        pumps: Vec::new(),
        events: tx,
        phase: Phase::Starting { go: opts.control.is_none() },
        helpers_stopped: false,
        timers_closed: false,
        aborted: None,
        stopped_by: None,
        params: ParamRelay::default(),
        log_feeds: feeds,
    };
    tracing::info!(run = %run_id, logs = %log_dir.display(), "starting dataflow {}", df.file.display());
    for i in 0..df.nodes.len() {
        if let Err(e) = run.spawn_node(i) {
            tracing::error!("{e}");
            run.abort(e.to_string());
            break;
        }
    }
    run.event_loop(&rx);
    done.store(true, Ordering::SeqCst);
    let _ = UnixStream::connect(socket); // wakes the acceptor so it sees `done`
    let deadline = Instant::now() + Duration::from_secs(2);
    for p in std::mem::take(&mut run.pumps) {
        // A node's orphaned child may hold the pipe; don't wait for it forever.
        while !p.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    let dropped = crate::drops::totals(&run.plan, &run.df, &run.inboxes);
    let Run { nodes, reaper, aborted, stopped_by, .. } = run;
    reaper.disarm();
    Ok(RunReport {
        run_id: run_id.to_owned(),
        log_dir,
        restarts: nodes.iter().filter(|n| n.restarts > 0).map(|n| (n.id.clone(), n.restarts)).collect(),
        nodes: nodes.into_iter().map(|n| (n.id.clone(), n.outcome())).collect(),
        aborted,
        stopped_by,
        dropped,
    })
}

/// How `node` is started (`prog`: its program and arguments; `None` for a node started by
/// hand), with its log sink in `log_dir`.
fn starter(
    node: &nerve_spec::NodeSpec,
    prog: Option<(PathBuf, Vec<String>)>,
    log_dir: &Path,
    opts: &RunOptions,
    tap: Option<LogTap>,
) -> Result<Option<Starter>, RuntimeError> {
    let Some((program, args)) = prog else { return Ok(None) };
    Ok(Some(Starter {
        program,
        args,
        logs: LogSink::create(log_dir, &node.id, &node.logs, opts.echo, tap)?,
        realtime: node.realtime.as_ref().map(|rt| Realtime::prepare(&node.id, rt)).transpose()?,
    }))
}

fn spawn_signal_forwarder(tx: Sender<Ev>) -> Result<(), RuntimeError> {
    let mut signals = signal_hook::iterator::Signals::new([signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM])
        .map_err(|source| RuntimeError::Os { what: "installing signal handlers", source })?;
    std::thread::spawn(move || {
        for _ in signals.forever() {
            if tx.send(Ev::Signal).is_err() {
                return;
            }
        }
    });
    Ok(())
}

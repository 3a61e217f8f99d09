//! `nerve run`: one dataflow on this host, from spawn to clean-up.

use std::collections::HashSet;
use std::io::BufReader;
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nerve_message::channel_table::InputChannel;
use nerve_message::node_to_runtime::NodeRequest;
use nerve_message::param::{ParamAnswer, ParamError, ParamOp};
use nerve_message::run_status::{InputStatus, NodeStatus, RunState, RunStatus};
use nerve_message::runtime_to_node::RuntimeMessage;
use nerve_message::{NERVE_VERSION, frame, versions_compatible};
use nerve_shm::inbox::Inbox;
use nerve_shm::names::RunNames;
use nerve_shm::pool::BlockTable;
use nerve_shm::sim_clock::SimClock;
use nerve_spec::{Dataflow, NodePath};

use crate::control::{Readiness, RunControl};
use crate::cpu_latency::CpuLatency;
use crate::drops::DropWatch;
use crate::error::RuntimeError;
use crate::logs::{LogSink, LogTap};
use crate::params::{ANSWER_TIMEOUT, ParamRelay};
use crate::plan::Plan;
use crate::realtime::Realtime;
use crate::reaper::{Reaper, RunReaper};
use crate::spawn::{Launch, build_all, program, spawn};

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
    /// Hold the start until [`RunControl::start`], and let another thread stop the run.
    pub control: Option<Arc<RunControl>>,
    /// Also hands every line of node output to this.
    pub log_tap: Option<LogTap>,
    /// The watchdog that cleans up if this process dies; one of the run's own when `None`
    /// (forked at the start of [`run`], which must then be called before the process has
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
            sim_time: false,
            run_id: None,
            handle_signals: true,
            helpers: Vec::new(),
            control: None,
            log_tap: None,
            reaper: None,
        }
    }
}

/// How one node ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Exited with status 0.
    Finished,
    /// Exited otherwise; the text says how.
    Failed(String),
    /// Did not exit within the grace period after stop, and was killed.
    KilledAfterGrace,
    /// A dynamic node that never connected, or a node not started because the run aborted.
    NotRun,
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The run's id.
    pub run_id: String,
    /// Where its logs are.
    pub log_dir: PathBuf,
    /// Each node and how it ended, in dataflow order.
    pub nodes: Vec<(String, Outcome)>,
    /// Why the run was aborted, if it was.
    pub aborted: Option<String>,
    /// Inputs that dropped messages (drop_oldest with a full queue): node, input, messages.
    pub dropped: Vec<(String, String, u64)>,
    /// Nodes their `restart:` policy started again, and how many times.
    pub restarts: Vec<(String, u32)>,
}

impl RunReport {
    /// Whether every node finished cleanly and nothing aborted the run.
    #[must_use]
    pub fn success(&self) -> bool {
        self.aborted.is_none() && self.nodes.iter().all(|(_, o)| matches!(o, Outcome::Finished | Outcome::NotRun))
    }
}

/// Which process of a node an event is about: it counts the node's starts, so what a dead
/// process still had in flight is never taken for its restarted successor's.
type Generation = u32;

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
    /// The go of a [`RunControl`]: start the ready nodes.
    Go,
    /// Inputs, as (node id, input id), whose producer will send nothing more.
    CloseInputs(Vec<(String, String)>),
}

struct NodeRt {
    id: String,
    pid: Option<u32>,
    generation: Generation,
    writer: Option<UnixStream>,
    ready: bool,
    exited: Option<Outcome>,
    closed_outputs: HashSet<usize>,
    /// Inputs closed for good from outside ([`RunControl::close_inputs`]).
    closed_inputs: HashSet<String>,
    pending_closed: Vec<String>,
    killed: bool,
    /// When the current process was started.
    spawned_at: Option<Instant>,
    /// A restart waiting for its back-off, and how the process it replaces ended.
    restart: Option<(Instant, Outcome)>,
    /// Restarts in a row (the back-off and the limit count these).
    restarts_in_a_row: u32,
    /// Restarts during the whole run.
    restarts: u32,
    /// Served by the process that runs the dataflow ([`RunOptions::helpers`]).
    helper: bool,
}

/// How a node's process is started, kept for restarts.
struct Starter {
    program: PathBuf,
    args: Vec<String>,
    logs: LogSink,
    realtime: Option<Realtime>,
}

struct Run<'a> {
    df: &'a Dataflow,
    opts: &'a RunOptions,
    plan: Plan,
    run_id: String,
    socket: PathBuf,
    log_dir: PathBuf,
    inboxes: Vec<Arc<Inbox>>,
    tables: Vec<Vec<BlockTable>>,
    nodes: Vec<NodeRt>,
    starters: Vec<Option<Starter>>,
    reaper: RunReaper,
    pumps: Vec<JoinHandle<()>>,
    events: Sender<Ev>,
    started: bool,
    /// The [`RunControl`]'s go came (always true without a control).
    go: bool,
    /// Helpers were told to stop because every other node finished.
    helpers_stopped: bool,
    stopping: Option<Instant>,
    /// Every node was killed (the grace period ended, or a second interrupt came).
    killed_all: bool,
    aborted: Option<String>,
    drops: DropWatch,
    params: ParamRelay,
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

fn set_up_and_run(df: &Dataflow, opts: &RunOptions) -> Result<RunReport, RuntimeError> {
    if opts.build {
        build_all(&df.nodes, &df.base_dir)?;
    }
    let programs = df.nodes.iter().map(|n| program(n, &opts.python)).collect::<Result<Vec<_>, _>>()?;
    let run_id = opts.run_id.clone().unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
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
    // Whatever happened, nothing of the run stays in /dev/shm or the runtime folder.
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
    for (n, node) in df.nodes.iter().enumerate() {
        inboxes.push(Arc::new(Inbox::create(&names.inbox(n), &plan.inboxes[n])?));
        tables.push(
            (0..node.outputs.len()).map(|o| BlockTable::create(&names.pool(n, o))).collect::<Result<Vec<_>, _>>()?,
        );
    }
    let log_dir = opts.log_dir.clone().unwrap_or_else(|| df.base_dir.join("out").join(run_id));
    std::fs::create_dir_all(&log_dir).map_err(|source| RuntimeError::Logs { path: log_dir.clone(), source })?;
    let mut starters = Vec::new();
    for (node, prog) in df.nodes.iter().zip(programs) {
        starters.push(match prog {
            Some((program, args)) => Some(Starter {
                program,
                args,
                logs: LogSink::create(&log_dir, &node.id, opts.echo, opts.log_tap.clone())?,
                realtime: node.realtime.as_ref().map(|rt| Realtime::prepare(&node.id, rt)).transpose()?,
            }),
            None => None,
        });
    }
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

    let drops = DropWatch::new(&plan, df);
    let mut run = Run {
        df,
        opts,
        plan,
        run_id: run_id.to_owned(),
        socket: socket.to_owned(),
        log_dir: log_dir.clone(),
        inboxes,
        tables,
        nodes: df
            .nodes
            .iter()
            .map(|n| NodeRt {
                id: n.id.clone(),
                pid: None,
                generation: 0,
                writer: None,
                ready: false,
                exited: None,
                closed_outputs: HashSet::new(),
                closed_inputs: HashSet::new(),
                pending_closed: Vec::new(),
                killed: false,
                spawned_at: None,
                restart: None,
                restarts_in_a_row: 0,
                restarts: 0,
                helper: opts.helpers.contains(&n.id),
            })
            .collect(),
        starters,
        reaper,
        pumps: Vec::new(),
        events: tx,
        started: false,
        go: opts.control.is_none(),
        helpers_stopped: false,
        stopping: None,
        killed_all: false,
        aborted: None,
        drops,
        params: ParamRelay::default(),
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
    let dropped = run.drops.totals(&run.inboxes);
    let Run { nodes, reaper, aborted, .. } = run;
    reaper.disarm();
    Ok(RunReport {
        run_id: run_id.to_owned(),
        log_dir,
        restarts: nodes.iter().filter(|n| n.restarts > 0).map(|n| (n.id.clone(), n.restarts)).collect(),
        nodes: nodes.into_iter().map(|n| (n.id, n.exited.unwrap_or(Outcome::NotRun))).collect(),
        aborted,
        dropped,
    })
}

fn spawn_acceptor(listener: UnixListener, tx: Sender<Ev>, done: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            if done.load(Ordering::SeqCst) {
                return;
            }
            let Ok(stream) = stream else { continue };
            let tx = tx.clone();
            std::thread::spawn(move || serve_connection(stream, &tx));
        }
    });
}

fn serve_connection(stream: UnixStream, tx: &Sender<Ev>) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    // A peer that connects and says nothing must not hold a thread forever.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let first = frame::read::<NodeRequest>(&mut reader);
    let _ = stream.set_read_timeout(None);
    let (node_id, nerve_version, pid) = match first {
        Ok(NodeRequest::Register { node_id, nerve_version, pid }) => (node_id, nerve_version, pid),
        Ok(request @ (NodeRequest::Inspect | NodeRequest::StopRun)) => {
            answer_tool(stream, tx, request == NodeRequest::StopRun);
            return;
        }
        Ok(NodeRequest::Param { node, op }) => {
            answer_param(stream, tx, node, op);
            return;
        }
        _ => {
            tracing::warn!("ignoring a control connection that did not start with a registration");
            return;
        }
    };
    let (accept_tx, accept_rx) = mpsc::channel();
    if tx.send(Ev::Register { stream, node_id, version: nerve_version, pid, accept: accept_tx }).is_err() {
        return;
    }
    let Ok(Some((index, generation))) = accept_rx.recv() else {
        return;
    };
    while let Ok(req) = frame::read::<NodeRequest>(&mut reader) {
        if tx.send(Ev::Request(index, generation, req)).is_err() {
            return;
        }
    }
    let _ = tx.send(Ev::Disconnected(index, generation));
}

/// Sends a tool the run's status (after asking the run to stop, for `stop`).
fn answer_tool(mut stream: UnixStream, tx: &Sender<Ev>, stop: bool) {
    let (reply, status) = mpsc::channel();
    if tx.send(Ev::Tool { stop, reply }).is_err() {
        return;
    }
    if let Ok(status) = status.recv_timeout(Duration::from_secs(5)) {
        let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
        let _ = frame::write(&mut stream, &RuntimeMessage::Status(Box::new(status)));
    }
}

/// Sends a tool a node's answer to its parameter request, or why there is none.
fn answer_param(mut stream: UnixStream, tx: &Sender<Ev>, node: String, op: ParamOp) {
    let (reply, answer) = mpsc::channel();
    if tx.send(Ev::Param { node: node.clone(), op, reply }).is_err() {
        return;
    }
    // The event loop fails a request its node leaves unanswered at ANSWER_TIMEOUT; the margin
    // only covers a loop that is itself slow.
    let waited = ANSWER_TIMEOUT + Duration::from_secs(1);
    let answer = answer.recv_timeout(waited).unwrap_or_else(|_| {
        Err(ParamError::NoAnswer { node, waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX) })
    });
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    if let Err(e) = frame::write(&mut stream, &RuntimeMessage::Param { answer }) {
        tracing::debug!(error = %e, "the tool that asked for a parameter is gone");
    }
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

impl Run<'_> {
    fn event_loop(&mut self, rx: &Receiver<Ev>) {
        let ready_deadline = Instant::now() + self.opts.ready_timeout;
        while !self.finished() {
            let event = match self.next_deadline(ready_deadline) {
                Some(at) => rx.recv_timeout(at.saturating_duration_since(Instant::now())),
                None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            match event {
                Ok(Ev::Register { stream, node_id, version, pid, accept }) => {
                    let index = self.register(stream, &node_id, &version, pid);
                    let _ = accept.send(index.map(|i| (i, self.nodes[i].generation)));
                }
                Ok(Ev::Request(i, g, _) | Ev::Disconnected(i, g) | Ev::Exited(i, g, _))
                    if g != self.nodes[i].generation =>
                {
                    tracing::debug!(node = %self.nodes[i].id, "ignoring news of a process that was replaced");
                }
                Ok(Ev::Request(i, _, NodeRequest::Ready)) => self.ready(i),
                Ok(Ev::Request(i, _, NodeRequest::CloseOutputs { outputs })) => {
                    let idx: Vec<usize> =
                        outputs.iter().filter_map(|o| self.df.nodes[i].outputs.iter().position(|x| x == o)).collect();
                    self.close_outputs(i, &idx);
                }
                Ok(Ev::Request(i, _, NodeRequest::ParamReply { id, answer })) => self.params.answer(i, id, answer),
                Ok(Ev::Param { node, op, reply }) => self.forward_param(&node, op, reply),
                Ok(Ev::Request(
                    i,
                    _,
                    NodeRequest::Register { .. }
                    | NodeRequest::Inspect
                    | NodeRequest::StopRun
                    | NodeRequest::Param { .. },
                )) => {
                    tracing::warn!(node = %self.nodes[i].id, "ignoring a registration or tool request from a node");
                }
                Ok(Ev::Tool { stop, reply }) => {
                    if stop && self.stopping.is_none() {
                        let by = if self.opts.control.is_some() { "the cluster" } else { "`nerve stop`" };
                        eprintln!("nerve: stopping (asked by {by})");
                        self.stop();
                    }
                    let _ = reply.send(self.status());
                }
                Ok(Ev::Go) => {
                    self.go = true;
                    self.maybe_start();
                }
                Ok(Ev::CloseInputs(inputs)) => self.close_inputs(&inputs),
                Ok(Ev::Exited(i, _, status)) => self.exited(i, status),
                Ok(Ev::Disconnected(i, _)) => {
                    // A node started by hand has no exit status: leaving is how it finishes.
                    if self.nodes[i].pid.is_none() && self.nodes[i].exited.is_none() {
                        self.finish_node(i, Outcome::Finished);
                    }
                }
                Ok(Ev::Signal) => {
                    if self.stopping.is_some() {
                        eprintln!("nerve: second interrupt, killing every node");
                        self.kill_all();
                    } else {
                        eprintln!("nerve: stopping (interrupt again to kill at once)");
                        self.stop();
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            self.drops.check(&self.inboxes);
            self.restart_due();
            self.stop_idle_helpers();
            let now = Instant::now();
            let nodes = &self.nodes;
            self.params.expire(now, |i| nodes[i].id.clone());
            if !self.killed_all && self.stopping.is_some_and(|s| now >= s + self.opts.grace) {
                self.kill_all();
            }
            if !self.started && self.stopping.is_none() && now >= ready_deadline {
                let late: Vec<&str> = self
                    .nodes
                    .iter()
                    .filter(|n| (n.pid.is_some() || n.helper) && n.exited.is_none() && !n.ready)
                    .map(|n| n.id.as_str())
                    .collect();
                let reason = if late.is_empty() {
                    format!("every node was ready, but the start did not come within {:?}", self.opts.ready_timeout)
                } else {
                    format!(
                        "node(s) {} did not become ready within {:?}; do they create a nerve Node?",
                        late.join(", "),
                        self.opts.ready_timeout
                    )
                };
                self.abort(reason);
            }
        }
    }

    /// The next moment the event loop has work that no event brings: a restart's back-off ends,
    /// a parameter request's node runs out of time, drops are due for a report, the stop's
    /// grace period ends, or the wait for every node to be ready. `None`: nothing until the next
    /// event, so an idle run does not wake the runtime.
    fn next_deadline(&self, ready_deadline: Instant) -> Option<Instant> {
        let restarts = self.nodes.iter().filter_map(|n| n.restart.as_ref().map(|(at, _)| *at));
        let grace = self.stopping.filter(|_| !self.killed_all).map(|s| s + self.opts.grace);
        let ready = (!self.started && self.stopping.is_none()).then_some(ready_deadline);
        restarts.chain([self.params.next_deadline(), self.drops.next_check(), grace, ready].into_iter().flatten()).min()
    }

    /// Starts node `i`'s process (again, for a restart), if nerve starts it at all.
    fn spawn_node(&mut self, i: usize) -> Result<(), RuntimeError> {
        let Some(starter) = &self.starters[i] else {
            return Ok(());
        };
        let launch = Launch {
            node: &self.df.nodes[i],
            base_dir: &self.df.base_dir,
            socket: &self.socket,
            run_id: &self.run_id,
            realtime: starter.realtime,
        };
        let (mut child, pumps) = spawn(&launch, &starter.program, &starter.args, &starter.logs)?;
        self.pumps.extend(pumps);
        let pid = child.id();
        self.reaper.track(pid);
        let rt = &mut self.nodes[i];
        rt.generation += 1;
        rt.pid = Some(pid);
        rt.spawned_at = Some(Instant::now());
        let (tx, generation) = (self.events.clone(), rt.generation);
        std::thread::spawn(move || {
            if let Ok(status) = child.wait() {
                let _ = tx.send(Ev::Exited(i, generation, status));
            }
        });
        Ok(())
    }

    /// Whether node `i`'s `restart:` policy calls for starting it again after it ended with
    /// `outcome`; if so, the restart is scheduled after its back-off.
    fn schedule_restart(&mut self, i: usize, outcome: &Outcome) -> bool {
        let policy = self.df.nodes[i].restart;
        let rt = &mut self.nodes[i];
        if self.stopping.is_some() || rt.killed || !policy.wants_restart(!matches!(outcome, Outcome::Finished)) {
            return false;
        }
        if rt.spawned_at.is_some_and(|t| t.elapsed() >= nerve_spec::RestartSpec::STABLE_RUN) {
            rt.restarts_in_a_row = 0;
        }
        if rt.restarts_in_a_row >= policy.max_restarts {
            tracing::error!(
                node = %rt.id,
                "not restarting: {} restart(s) in a row already (max_restarts: {})",
                rt.restarts_in_a_row,
                policy.max_restarts
            );
            return false;
        }
        let wait = policy.delay_before(rt.restarts_in_a_row);
        rt.restarts_in_a_row += 1;
        tracing::warn!(
            node = %rt.id,
            "restarting in {wait:?} (restart {} of at most {} in a row, restart: {})",
            rt.restarts_in_a_row,
            policy.max_restarts,
            policy.policy.as_str()
        );
        rt.restart = Some((Instant::now() + wait, outcome.clone()));
        rt.writer = None;
        rt.ready = false;
        let id = rt.id.clone();
        self.params.node_gone(i, &id, "restarting");
        // Its queues take nothing more and what it held is freed now, as for any dead reader;
        // its outputs stay open: their readers wait for the new process.
        self.release_reader(i);
        true
    }

    /// Starts the nodes whose back-off is over.
    fn restart_due(&mut self) {
        let now = Instant::now();
        for i in 0..self.nodes.len() {
            if self.nodes[i].restart.as_ref().is_none_or(|(at, _)| *at > now) {
                continue;
            }
            self.nodes[i].restart = None;
            self.reopen_inputs(i);
            let restarts = self.nodes[i].restarts + 1;
            if let Some(s) = &self.starters[i] {
                s.logs.line(&format!("--- nerve: restart {restarts} of this node ---"));
            }
            match self.spawn_node(i) {
                Ok(()) => {
                    self.nodes[i].restarts = restarts;
                    tracing::info!(node = %self.nodes[i].id, restarts, "restarted");
                }
                Err(e) => {
                    tracing::error!("{e}");
                    self.finish_node(i, Outcome::Failed(format!("could not be restarted: {e}")));
                }
            }
        }
    }

    /// Makes node `i`'s queues usable again for its new process, and queues the input-closed
    /// events it must be told again.
    fn reopen_inputs(&mut self, i: usize) {
        let mut closed = Vec::new();
        for input in &self.plan.inputs[i] {
            if let InputChannel::Shm { id, queue, producer, output, .. } = input {
                if self.nodes[i].closed_inputs.contains(id) {
                    closed.push(id.clone());
                    continue;
                }
                self.inboxes[i].ring(*queue).reopen();
                if self.nodes[*producer].closed_outputs.contains(output) {
                    closed.push(id.clone());
                }
            }
        }
        self.nodes[i].pending_closed = closed;
    }

    /// How the run and each of its nodes are doing now.
    fn status(&self) -> RunStatus {
        let state = match (self.stopping, self.started) {
            (Some(_), _) => RunState::Stopping,
            (None, true) => RunState::Running,
            (None, false) => RunState::Starting,
        };
        let nodes = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, rt)| NodeStatus {
                id: rt.id.clone(),
                pid: rt.pid.filter(|_| rt.exited.is_none() && rt.restart.is_none()),
                state: self.node_state(i),
                restarts: rt.restarts,
                config: self.df.nodes[i].config.clone(),
                machine: None,
                inputs: self.plan.inputs[i]
                    .iter()
                    .filter_map(|input| match input {
                        InputChannel::Shm { id, queue, .. } => {
                            let ring = self.inboxes[i].ring(*queue);
                            Some(InputStatus {
                                id: id.clone(),
                                queued: ring.len(),
                                capacity: self.plan.inboxes[i][*queue].capacity,
                                dropped: ring.dropped(),
                            })
                        }
                        _ => None,
                    })
                    .collect(),
            })
            .collect();
        RunStatus {
            run_id: self.run_id.clone(),
            name: self.opts.name.clone(),
            dataflow: self.df.file.clone(),
            log_dir: self.log_dir.clone(),
            pid: std::process::id(),
            state,
            nodes,
            coordinator: None,
            error: None,
        }
    }

    /// What node `i` is doing, in the words of `nerve list`.
    fn node_state(&self, i: usize) -> String {
        let rt = &self.nodes[i];
        match (&rt.exited, &rt.restart) {
            (Some(Outcome::Finished), _) => "finished".to_owned(),
            (Some(Outcome::Failed(how)), _) => format!("failed ({how})"),
            (Some(Outcome::KilledAfterGrace), _) => "killed after the grace period".to_owned(),
            (Some(Outcome::NotRun), _) => "not run".to_owned(),
            (None, Some(_)) => "restarting".to_owned(),
            (None, None) if rt.pid.is_none() && rt.writer.is_none() => "waiting".to_owned(),
            (None, None) if rt.ready && self.started => "running".to_owned(),
            (None, None) if rt.ready => "ready".to_owned(),
            (None, None) => "starting".to_owned(),
        }
    }

    /// Forwards a tool's parameter request to node `node`'s process, or answers at once why it
    /// cannot be asked; the node's answer comes back as [`NodeRequest::ParamReply`].
    fn forward_param(&mut self, node: &str, op: ParamOp, reply: Sender<ParamAnswer>) {
        let Some(i) = self.nodes.iter().position(|n| n.id == node) else {
            let known = self.nodes.iter().map(|n| n.id.clone()).collect();
            let _ = reply.send(Err(ParamError::UnknownNode { node: node.to_owned(), known }));
            return;
        };
        let rt = &self.nodes[i];
        if rt.writer.is_none() || rt.exited.is_some() || rt.restart.is_some() {
            let _ = reply.send(Err(ParamError::NotRunning { node: node.to_owned(), state: self.node_state(i) }));
            return;
        }
        let id = self.params.open(i, reply);
        self.send(i, &RuntimeMessage::ParamRequest { id, op });
    }

    /// Every spawned node exited and no node started by hand is still connected.
    fn finished(&self) -> bool {
        self.nodes.iter().all(|n| match n.pid {
            Some(_) => n.exited.is_some(),
            None => n.writer.is_none() || n.exited.is_some(),
        })
    }

    fn send(&mut self, i: usize, msg: &RuntimeMessage) {
        if let Some(w) = self.nodes[i].writer.as_mut()
            && let Err(e) = frame::write(w, msg)
        {
            tracing::debug!(node = %self.nodes[i].id, error = %e, "node unreachable");
        }
    }

    fn register(&mut self, stream: UnixStream, node_id: &str, version: &str, pid: u32) -> Option<usize> {
        let mut stream = stream;
        let refuse = |stream: &mut UnixStream, reason: String| {
            tracing::warn!(node = %node_id, "refused: {reason}");
            let _ = frame::write(stream, &RuntimeMessage::Refused { reason });
            None
        };
        let Some(i) = self.df.nodes.iter().position(|n| n.id == node_id) else {
            let known: Vec<&str> = self.df.nodes.iter().map(|n| n.id.as_str()).collect();
            return refuse(
                &mut stream,
                format!("the dataflow has no node `{node_id}` (its nodes: {})", known.join(", ")),
            );
        };
        if !versions_compatible(version, NERVE_VERSION) {
            return refuse(
                &mut stream,
                format!(
                    "the node uses nerve {version} but this runtime is nerve {NERVE_VERSION}; install matching versions \
                     (Python: `pip install nerve=={NERVE_VERSION}` in the node's interpreter; Rust: `nerve-node = \"{NERVE_VERSION}\"`)"
                ),
            );
        }
        let rt = &self.nodes[i];
        if rt.writer.is_some() || rt.exited.is_some() {
            return refuse(&mut stream, format!("node `{node_id}` is already connected"));
        }
        match (rt.pid, &self.df.nodes[i].path) {
            (None, NodePath::Dynamic) => {}
            (None, _) => return refuse(&mut stream, format!("node `{node_id}` was not started")),
            (Some(spawned), _) => {
                // The node process, or a process it started (e.g. a shell wrapper's child).
                let session = rustix::process::Pid::from_raw(pid.try_into().unwrap_or(0))
                    .and_then(|p| rustix::process::getsid(Some(p)).ok())
                    .map(|s| s.as_raw_nonzero().get().unsigned_abs());
                if pid != spawned && session != Some(spawned) {
                    return refuse(
                        &mut stream,
                        format!(
                            "node `{node_id}` is started by nerve; declare it with `path: dynamic` to start it by hand"
                        ),
                    );
                }
            }
        }
        let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
        let mut table = self.plan.table(self.df, i, &self.run_id, self.opts.pool_capacity, self.opts.max_message);
        table.sim_time = self.opts.sim_time;
        if frame::write(&mut stream, &RuntimeMessage::Registered(Box::new(table))).is_err() {
            return None;
        }
        self.nodes[i].writer = Some(stream);
        for input in std::mem::take(&mut self.nodes[i].pending_closed) {
            self.send(i, &RuntimeMessage::InputClosed { input });
        }
        if self.stopping.is_some() {
            self.send(i, &RuntimeMessage::Stop);
        }
        Some(i)
    }

    fn ready(&mut self, i: usize) {
        self.nodes[i].ready = true;
        if self.started {
            self.send(i, &RuntimeMessage::Start);
        } else {
            self.maybe_start();
        }
    }

    /// Starts every ready node once all spawned nodes and helpers are ready (or already gone),
    /// and, under a [`RunControl`], its go came.
    fn maybe_start(&mut self) {
        let all = self.nodes.iter().all(|n| (n.pid.is_none() && !n.helper) || n.exited.is_some() || n.ready);
        if all && !self.started && self.stopping.is_none() {
            if let Some(control) = &self.opts.control {
                if !self.go {
                    control.set(Readiness::Ready);
                    return;
                }
                control.set(Readiness::Started);
            }
            self.started = true;
            tracing::info!("all nodes ready, starting");
            for j in 0..self.nodes.len() {
                if self.nodes[j].ready && self.nodes[j].exited.is_none() {
                    self.send(j, &RuntimeMessage::Start);
                }
            }
        }
    }

    fn exited(&mut self, i: usize, status: ExitStatus) {
        let rt = &mut self.nodes[i];
        let outcome = if rt.killed {
            Outcome::KilledAfterGrace
        } else if status.success() {
            Outcome::Finished
        } else if let Some(sig) = status.signal() {
            Outcome::Failed(format!("killed by signal {sig}"))
        } else {
            Outcome::Failed(format!("exit code {}", status.code().unwrap_or(-1)))
        };
        match &outcome {
            Outcome::Finished => tracing::info!(node = %rt.id, "finished"),
            Outcome::KilledAfterGrace => {
                tracing::warn!(node = %rt.id, "killed after the grace period")
            }
            Outcome::Failed(how) => tracing::error!(node = %rt.id, "failed: {how}"),
            Outcome::NotRun => {}
        }
        if !self.schedule_restart(i, &outcome) {
            self.finish_node(i, outcome);
        }
    }

    /// Node `i` is gone: free what it held, tell its readers, and see whether the run can
    /// start (or must abort) without it.
    fn finish_node(&mut self, i: usize, outcome: Outcome) {
        let failed_early = !self.started && !matches!(outcome, Outcome::Finished);
        let rt = &mut self.nodes[i];
        rt.exited = Some(outcome);
        rt.writer = None;
        let (id, state) = (rt.id.clone(), self.node_state(i));
        self.params.node_gone(i, &id, &state);
        self.release_reader(i);
        let all: Vec<usize> = (0..self.df.nodes[i].outputs.len()).collect();
        self.close_outputs(i, &all);
        if failed_early && self.stopping.is_none() {
            let id = self.nodes[i].id.clone();
            self.abort(format!("node `{id}` exited before the dataflow started"));
        } else {
            // A node that finished without connecting may have been the last one awaited.
            self.maybe_start();
        }
    }

    /// A reader is gone: its queues refuse new messages, its references are dropped, and a
    /// producer waiting on it for room is woken.
    fn release_reader(&mut self, i: usize) {
        for input in &self.plan.inputs[i] {
            if let InputChannel::Shm { queue, producer, output, edge, .. } = input {
                self.inboxes[i].ring(*queue).close();
                self.tables[*producer][*output].release_all(1u64 << edge);
                self.inboxes[*producer].doorbell().ring();
            }
        }
    }

    fn close_outputs(&mut self, i: usize, outputs: &[usize]) {
        for &o in outputs {
            if !self.nodes[i].closed_outputs.insert(o) {
                continue;
            }
            let edges = self.plan.outputs[i][o].1.clone();
            for e in edges {
                self.tell_input_closed(e.reader, e.input);
            }
        }
    }

    fn stop(&mut self) {
        if self.stopping.is_some() {
            return;
        }
        self.stopping = Some(Instant::now());
        for i in 0..self.nodes.len() {
            if let Some((_, previous)) = self.nodes[i].restart.take() {
                self.finish_node(i, previous);
            }
            if self.nodes[i].exited.is_none() {
                self.send(i, &RuntimeMessage::Stop);
            }
        }
    }

    fn abort(&mut self, reason: String) {
        tracing::error!("{reason}");
        if let Some(control) = &self.opts.control
            && !self.started
        {
            control.set(Readiness::Failed(reason.clone()));
        }
        if self.aborted.is_none() {
            self.aborted = Some(reason);
        }
        self.stop();
    }

    /// Tells each of `inputs`' nodes that the input, as (node id, input id), is closed.
    /// Their queues take nothing more (what is queued is still read), even from a producer
    /// that comes back.
    fn close_inputs(&mut self, inputs: &[(String, String)]) {
        for (node, input) in inputs {
            let Some(i) = self.nodes.iter().position(|n| &n.id == node) else {
                tracing::warn!(node, input, "no such node to close an input of");
                continue;
            };
            let Some(queue) = self.plan.inputs[i].iter().find_map(|c| match c {
                InputChannel::Shm { id, queue, .. } if id == input => Some(*queue),
                _ => None,
            }) else {
                tracing::warn!(node, input, "no such shared-memory input to close");
                continue;
            };
            self.inboxes[i].ring(queue).close();
            self.nodes[i].closed_inputs.insert(input.clone());
            self.tell_input_closed(i, input.clone());
        }
    }

    /// Tells node `i` that its input `input` is closed, now or when it connects.
    fn tell_input_closed(&mut self, i: usize, input: String) {
        let reader = &mut self.nodes[i];
        if reader.exited.is_some() {
            return;
        }
        if reader.writer.is_some() {
            self.send(i, &RuntimeMessage::InputClosed { input });
        } else {
            reader.pending_closed.push(input);
        }
    }

    /// Once every node but the helpers has finished, the helpers have nothing left to serve:
    /// they are told to stop, so the run can end.
    fn stop_idle_helpers(&mut self) {
        if self.helpers_stopped || !self.nodes.iter().any(|n| n.helper) {
            return;
        }
        if self.nodes.iter().filter(|n| !n.helper).all(|n| n.exited.is_some()) {
            self.helpers_stopped = true;
            for i in 0..self.nodes.len() {
                if self.nodes[i].helper {
                    self.send(i, &RuntimeMessage::Stop);
                }
            }
        }
    }

    fn kill_all(&mut self) {
        self.killed_all = true;
        let lingering: Vec<usize> =
            (0..self.nodes.len()).filter(|&i| self.nodes[i].pid.is_none() && self.nodes[i].writer.is_some()).collect();
        for i in lingering {
            tracing::warn!(node = %self.nodes[i].id, "node started by hand did not leave within the grace period");
            self.finish_node(i, Outcome::Failed("started by hand; still connected after the grace period".into()));
        }
        for n in &mut self.nodes {
            if let (Some(pid), None) = (n.pid, &n.exited)
                && !n.killed
            {
                n.killed = true;
                if let Some(pgid) = rustix::process::Pid::from_raw(pid.try_into().unwrap_or(0)) {
                    let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
                }
            }
        }
    }
}

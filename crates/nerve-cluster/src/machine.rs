//! The daemon of one machine (`nerve daemon`): runs its machine's part of each dataflow the
//! coordinator hands it, bridges outputs to and from the other machines, and reports.
//!
//! Each part runs in this process with the same runtime as `nerve run` ([`nerve_runtime::run`]),
//! on a thread of its own; its nodes are children of this process and die with it. A part is
//! prepared (nodes spawned and ready, network subscriptions declared) before the coordinator
//! starts every machine at once. A part keeps running whatever happens to the coordinator;
//! when another machine is lost, readers of its outputs here get INPUT_CLOSED or keep waiting,
//! as their `on_host_lost:` says.

use std::collections::{BTreeMap, HashSet};
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nerve_message::graph_edit::GraphEdit;
use nerve_runtime::param::{ParamAnswer, ParamOp};
use nerve_runtime::{Outcome, Readiness, Reaper, RunControl, RunOptions, RunReport};
use nerve_shm::sync::lock;
use nerve_spec::HostLossPolicy;
use zenoh::Wait;
use zenoh::sample::SampleKind;

use crate::bridge::{self, StandIn};
use crate::error::ClusterError;
use crate::keys;
use crate::net::{NetOptions, Role};
use crate::placement::{self, BRIDGE, Inbound, InboundOutput, Outbound, Part, Reader};
use crate::protocol::{
    self, Assignment, CoordinatorRequest, DaemonHello, DaemonInfo, DaemonRequest, KEEP_ENDED, LOG_CHUNK, Link,
    LogChunk, PartEnded, PartReport, PartState, PartStatus, ProcessInfo, QUICK,
};

/// How a daemon serves its machine.
#[derive(Debug, Clone)]
pub struct DaemonOptions {
    /// The machine id dataflows name in `deploy: {machine: …}`.
    pub machine: String,
    /// The labels dataflows ask for in `deploy: {labels: …}`.
    pub labels: std::collections::BTreeMap<String, String>,
    /// Where the cluster is.
    pub net: NetOptions,
    /// Interpreter for `.py` nodes.
    pub python: PathBuf,
}

/// How long a started part waits for the machines it sends to before it gives up.
const PEERS_WAIT: Duration = Duration::from_secs(10);

/// One dataflow's part on this machine.
struct Entry {
    assignment: Assignment,
    part: Part,
    control: Arc<RunControl>,
    log_dir: PathBuf,
    state: PartState,
    report: Option<PartReport>,
    /// Declared once this machine receives its inputs: the machines that send to it start
    /// only when they see it.
    inbound_token: Option<zenoh::liveliness::LivelinessToken>,
}

/// What a part's status needs, copied out of the daemon's lock: asking the run itself can take
/// a moment.
struct Snapshot {
    state: PartState,
    report: Option<PartReport>,
    control: Arc<RunControl>,
    helpers: Vec<String>,
}

impl Snapshot {
    fn of(entry: &Entry) -> Self {
        Self {
            state: entry.state.clone(),
            report: entry.report.clone(),
            control: entry.control.clone(),
            helpers: entry.part.helpers.clone(),
        }
    }

    fn status(self, machine: &str) -> PartStatus {
        let run = (self.state != PartState::Ended).then(|| self.control.status()).flatten().map(|mut run| {
            run.nodes.retain(|n| !self.helpers.contains(&n.id));
            run
        });
        PartStatus { machine: machine.to_owned(), state: self.state, run, report: self.report }
    }
}

struct Daemon {
    opts: DaemonOptions,
    reaper: Arc<Reaper>,
    session: zenoh::Session,
    /// The process's session, open while this lives.
    _network: Arc<nerve_topic::session::Network>,
    process: ProcessInfo,
    parts: Mutex<BTreeMap<String, Entry>>,
    /// Held while an edge between machines is linked: two links of one output, asked at once,
    /// would both find it unsent and send it twice.
    linking: Mutex<()>,
    exit: AtomicBool,
}

/// Checks a machine id: it names the daemon on the network and its folders.
///
/// # Errors
/// [`ClusterError::BadMachineId`].
pub fn check_machine_id(id: &str) -> Result<(), ClusterError> {
    nerve_spec::check_id(id).map_err(|why| ClusterError::BadMachineId { id: id.to_owned(), why: why.to_string() })
}

/// Serves machine `opts.machine` until `shutdown` is set or the coordinator asks every daemon
/// to exit; then stops every part and returns once they ended.
///
/// Call it before the process starts any thread: it forks the watchdog that kills every node
/// and removes every part's shared memory if the daemon dies.
///
/// # Errors
/// A bad machine id, a network that cannot be joined, or another daemon already serving this
/// machine id.
pub fn serve(opts: DaemonOptions, shutdown: &AtomicBool) -> Result<(), ClusterError> {
    check_machine_id(&opts.machine)?;
    let reaper = Reaper::spawn()?;
    let (network, listen) = opts.net.open(Role::Daemon)?;
    let session = network.session().clone();
    let machine = opts.machine.clone();
    if let Some(other) = session.liveliness().get(keys::alive_daemon(&machine)).timeout(QUICK).wait()?.recv().ok()
        && other.result().is_ok()
    {
        let hello: Result<DaemonHello, _> = protocol::ask(
            &session,
            &keys::daemon(&machine),
            &format!("the daemon of `{machine}`"),
            &DaemonRequest::Hello,
            QUICK,
        );
        let (pid, host) = hello.map_or((0, "?".into()), |h| (h.info.process.pid, h.info.process.hostname));
        return Err(ClusterError::DuplicateMachine { machine, pid, host });
    }
    let daemon = Arc::new(Daemon {
        process: protocol::this_process(listen),
        reaper,
        opts,
        session,
        _network: network,
        parts: Mutex::new(BTreeMap::new()),
        linking: Mutex::new(()),
        exit: AtomicBool::new(false),
    });
    let queryable = daemon.session.declare_queryable(keys::daemon(&machine)).wait()?;
    let _token = daemon.session.liveliness().declare_token(keys::alive_daemon(&machine)).wait()?;
    let watcher = Arc::downgrade(&daemon);
    let _machines = daemon
        .session
        .liveliness()
        .declare_subscriber(keys::ALIVE_DAEMONS)
        .callback(move |sample| {
            let (Some(daemon), Some(other)) = (watcher.upgrade(), keys::machine_of_alive(sample.key_expr().as_str()))
            else {
                return;
            };
            match sample.kind() {
                SampleKind::Delete => daemon.machine_lost(other),
                SampleKind::Put => tracing::info!(machine = other, "machine joined the cluster"),
            }
        })
        .wait()?;
    let _coordinator = daemon
        .session
        .liveliness()
        .declare_subscriber(keys::ALIVE_COORDINATOR)
        .history(true)
        .callback(|sample| match sample.kind() {
            SampleKind::Put => tracing::info!("connected to the coordinator"),
            SampleKind::Delete => tracing::warn!("lost the coordinator; running dataflows go on"),
        })
        .wait()?;
    tracing::info!(machine = %machine, listen = ?daemon.process.listen, "daemon ready");
    let d = daemon.clone();
    let served = protocol::serve(
        &queryable,
        "the daemon's",
        || shutdown.load(Ordering::Acquire) || daemon.exit.load(Ordering::Acquire),
        move |query| d.answer(&query),
    );
    daemon.stop_all_and_wait();
    served
}

impl Daemon {
    fn answer(self: &Arc<Self>, query: &zenoh::query::Query) {
        let request = match protocol::request::<DaemonRequest>(query) {
            Ok(request) => request,
            Err(why) => return protocol::answer::<()>(query, &Err(why.to_string())),
        };
        match request {
            DaemonRequest::Hello => protocol::answer(query, &Ok(self.hello())),
            DaemonRequest::Prepare(assignment) => protocol::answer(query, &self.prepare(*assignment)),
            DaemonRequest::Start { uuid } => protocol::answer(query, &self.start(&uuid)),
            DaemonRequest::Stop { uuid } => protocol::answer(query, &self.stop(&uuid)),
            DaemonRequest::Status { uuid } => protocol::answer(query, &self.status(&uuid)),
            DaemonRequest::Logs { uuid, node, offset } => protocol::answer(query, &self.logs(&uuid, &node, offset)),
            DaemonRequest::Param { uuid, node, op } => protocol::answer(query, &self.param(&uuid, &node, op)),
            DaemonRequest::Edit { uuid, edit } => protocol::answer(query, &self.edit(&uuid, edit)),
            DaemonRequest::Link { uuid, link } => protocol::answer(query, &self.link(&uuid, link)),
            DaemonRequest::Exit => {
                tracing::info!("the coordinator asks every daemon to exit");
                self.exit.store(true, Ordering::Release);
                protocol::answer(query, &Ok(()));
            }
        }
    }

    fn machine(&self) -> &str {
        &self.opts.machine
    }

    fn hello(&self) -> DaemonHello {
        let snapshots: Vec<(Assignment, Snapshot)> =
            lock(&self.parts).values().map(|e| (e.assignment.clone(), Snapshot::of(e))).collect();
        let running = snapshots.iter().filter(|(_, s)| s.state != PartState::Ended).count();
        DaemonHello {
            info: DaemonInfo {
                machine: self.machine().to_owned(),
                labels: self.opts.labels.clone(),
                process: self.process.clone(),
                running,
            },
            parts: snapshots.into_iter().map(|(a, s)| (a, s.status(self.machine()))).collect(),
        }
    }

    /// Sets this machine's part up and returns once all its nodes are ready.
    fn prepare(self: &Arc<Self>, assignment: Assignment) -> Result<(), String> {
        let me = self.machine().to_owned();
        let fail = |why: String| format!("machine `{me}`: {why}");
        let uuid = assignment.uuid.clone();
        if lock(&self.parts).contains_key(&uuid) {
            return Err(fail(format!("dataflow {uuid} is already here")));
        }
        let part =
            placement::part(&assignment.dataflow, &assignment.placement, &me).map_err(|e| fail(e.to_string()))?;
        let ready_timeout = Duration::from_millis(assignment.options.ready_timeout_ms);
        let deadline = Instant::now() + ready_timeout;
        let stand_ins = part
            .inbound
            .iter()
            .map(|i| StandIn::declare(&self.session, &uuid, i.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| fail(e.to_string()))?;
        let control = RunControl::new();
        let log_dir = assignment.log_dir();
        let session = self.session.clone();
        let tap_uuid = uuid.clone();
        let opts = RunOptions {
            grace: Duration::from_millis(assignment.options.grace_ms),
            ready_timeout,
            log_dir: Some(log_dir.clone()),
            python: self.opts.python.clone(),
            pool_capacity: assignment.options.pool_capacity,
            max_message: assignment.options.max_message,
            echo: false,
            name: assignment.name.clone(),
            // The dataflow's name or id, not the part's run id: every machine's part is one run
            // whose nodes must meet.
            scope: Some(assignment.name.clone().unwrap_or_else(|| uuid.clone())),
            run_id: Some(assignment.run_id(&me)),
            handle_signals: false,
            helpers: part.helpers.clone(),
            node_env: self.opts.net.network.to_env(),
            control: Some(control.clone()),
            reaper: Some(self.reaper.clone()),
            log_tap: Some(nerve_runtime::LogTap::new(move |entry| {
                if let Err(e) = session.put(keys::log(&tap_uuid, &entry.node), entry.text()).wait() {
                    tracing::debug!(error = %e, "cannot forward a log line");
                }
            })),
            ..RunOptions::default()
        };
        let socket = nerve_message::run_socket(&assignment.run_id(&me));
        let (outbound, dataflow) = (part.outbound.clone(), part.dataflow.clone());
        lock(&self.parts).insert(
            uuid.clone(),
            Entry {
                assignment,
                part,
                control: control.clone(),
                log_dir,
                state: PartState::Preparing,
                report: None,
                inbound_token: None,
            },
        );
        let daemon = self.clone();
        let run_uuid = uuid.clone();
        let spawned = std::thread::Builder::new().name(format!("nerve-part-{uuid}")).spawn(move || {
            let result = nerve_runtime::run(&dataflow, &opts);
            daemon.part_ended(&run_uuid, result);
        });
        if let Err(e) = spawned {
            lock(&self.parts).remove(&uuid);
            return Err(fail(format!("cannot start the part's thread: {e}")));
        }
        let bridges = (!outbound.is_empty())
            .then(|| bridge::spawn_out(&self.session, socket.clone(), BRIDGE.to_owned(), &uuid, &outbound, deadline))
            .into_iter()
            .chain(stand_ins.into_iter().map(|s| s.spawn(socket.clone(), deadline)))
            .collect::<Result<Vec<_>, _>>();
        if let Err(e) = bridges {
            control.stop();
            return Err(fail(e.to_string()));
        }
        match control.wait_ready(ready_timeout + QUICK) {
            Readiness::Ready | Readiness::Started => {
                let token = self.session.liveliness().declare_token(keys::inbound(&uuid, &me)).wait();
                let mut parts = lock(&self.parts);
                if let Some(entry) = parts.get_mut(&uuid) {
                    entry.state = PartState::Ready;
                    entry.inbound_token = token.map_err(|e| tracing::warn!(error = %e, "cannot announce inputs")).ok();
                }
                tracing::info!(dataflow = %uuid, "part ready");
                Ok(())
            }
            Readiness::Failed(why) => Err(fail(why)),
            Readiness::Preparing => {
                control.stop();
                Err(fail(format!("not ready within {ready_timeout:?}")))
            }
            Readiness::Ended => Err(fail("the part ended before it was ready".into())),
        }
    }

    /// Starts a prepared part once every machine that reads its outputs receives them.
    fn start(&self, uuid: &str) -> Result<(), String> {
        let (control, waiting_for) = {
            let parts = lock(&self.parts);
            let entry = parts.get(uuid).ok_or_else(|| self.unknown(uuid))?;
            let mut machines: Vec<String> = entry.part.outbound.iter().flat_map(|o| o.machines.clone()).collect();
            machines.sort();
            machines.dedup();
            (entry.control.clone(), machines)
        };
        let deadline = Instant::now() + PEERS_WAIT;
        loop {
            let missing = self.not_receiving(uuid, &waiting_for);
            if missing.is_empty() {
                break;
            }
            if Instant::now() >= deadline {
                control.stop();
                return Err(format!(
                    "machine `{}`: machine(s) {} never showed they receive this machine's outputs",
                    self.machine(),
                    missing.join(", ")
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if !control.start() {
            return Err(format!("machine `{}`: the part of {uuid} is over", self.machine()));
        }
        if let Some(entry) = lock(&self.parts).get_mut(uuid) {
            entry.state = PartState::Running;
        }
        Ok(())
    }

    /// The machines of `machines` that have not declared they receive their inputs of `uuid`.
    fn not_receiving(&self, uuid: &str, machines: &[String]) -> Vec<String> {
        let mut seen = HashSet::new();
        if let Ok(replies) = self.session.liveliness().get(keys::inbound(uuid, "*")).timeout(QUICK).wait() {
            while let Ok(reply) = replies.recv() {
                if let Ok(sample) = reply.result()
                    && let Some(machine) = sample.key_expr().as_str().rsplit('/').next()
                {
                    seen.insert(machine.to_owned());
                }
            }
        }
        machines.iter().filter(|m| !seen.contains(*m)).cloned().collect()
    }

    fn stop(&self, uuid: &str) -> Result<(), String> {
        let mut parts = lock(&self.parts);
        let entry = parts.get_mut(uuid).ok_or_else(|| self.unknown(uuid))?;
        if entry.state != PartState::Ended {
            entry.state = PartState::Stopping;
            entry.control.stop();
        }
        Ok(())
    }

    fn unknown(&self, uuid: &str) -> String {
        format!("machine `{}` runs no part of dataflow {uuid}", self.machine())
    }

    fn status(&self, uuid: &str) -> Result<PartStatus, String> {
        let snapshot = lock(&self.parts).get(uuid).map(Snapshot::of).ok_or_else(|| self.unknown(uuid))?;
        Ok(snapshot.status(self.machine()))
    }

    fn param(&self, uuid: &str, node: &str, op: ParamOp) -> Result<ParamAnswer, String> {
        let run_id = {
            let parts = lock(&self.parts);
            let entry = parts.get(uuid).ok_or_else(|| self.unknown(uuid))?;
            entry.assignment.run_id(self.machine())
        };
        nerve_runtime::inspect::param_of_run(&run_id, node, op)
            .map_err(|e| format!("machine `{}`: {e}", self.machine()))
    }

    /// Changes the graph of this machine's part of dataflow `uuid`, through its run; a node
    /// added joins the part, so its logs are found.
    fn edit(&self, uuid: &str, edit: GraphEdit) -> Result<String, String> {
        let control = lock(&self.parts).get(uuid).ok_or_else(|| self.unknown(uuid))?.control.clone();
        let added = match &edit {
            GraphEdit::AddNode { yaml, file } => Some((yaml.clone(), file.clone())),
            _ => None,
        };
        let done = control.edit(edit).map_err(|why| format!("machine `{}`: {why}", self.machine()))?;
        if let Some((yaml, file)) = added
            && let Some(entry) = lock(&self.parts).get_mut(uuid)
        {
            // The run took it, so the part does.
            match nerve_spec::with_added_node(&entry.part.dataflow, &yaml, &file) {
                Ok(grown) => entry.part.dataflow = grown,
                Err(e) => tracing::warn!(error = %e, "a node the run added is not in the part's dataflow"),
            }
        }
        Ok(done)
    }

    /// Lays this machine's end of an edge between machines that running dataflow `uuid`
    /// gains, unless the part already sends (or receives) that output.
    fn link(&self, uuid: &str, link: Link) -> Result<(), String> {
        let _linking = lock(&self.linking);
        let me = self.machine().to_owned();
        let fail = |why: String| format!("machine `{me}`: {why}");
        let (control, run_id) = {
            let parts = lock(&self.parts);
            let entry = parts.get(uuid).ok_or_else(|| self.unknown(uuid))?;
            (entry.control.clone(), entry.assignment.run_id(&me))
        };
        let socket = nerve_message::run_socket(&run_id);
        // The run is up: its socket answers at once.
        let deadline = Instant::now() + QUICK;
        match link {
            Link::Send { node, output } => {
                let id = {
                    let parts = lock(&self.parts);
                    let part = &parts.get(uuid).ok_or_else(|| self.unknown(uuid))?.part;
                    if part.outbound.iter().any(|o| o.node == node && o.output == output) {
                        return Ok(());
                    }
                    format!("{BRIDGE}-{}", part.outbound.len())
                };
                // Readers connected while running drop their oldest (see `nerve_runtime`): so may
                // the bridge and the network.
                let outbound = Outbound {
                    input: format!("{node}/{output}"),
                    node,
                    output,
                    machines: Vec::new(),
                    drop_oldest: true,
                };
                let spec = placement::bridge(&id, &me, std::slice::from_ref(&outbound));
                control.add_helper(spec.clone()).map_err(fail)?;
                bridge::spawn_out(&self.session, socket, id.clone(), uuid, std::slice::from_ref(&outbound), deadline)
                    .map_err(|e| fail(e.to_string()))?;
                self.grow_part(uuid, spec, |part| part.outbound.push(outbound));
            }
            Link::Receive { node, output, machine, reader, input, on_host_lost } => {
                let received = {
                    let parts = lock(&self.parts);
                    let part = &parts.get(uuid).ok_or_else(|| self.unknown(uuid))?.part;
                    match part.inbound.iter().find(|i| i.node == node.id) {
                        Some(i) if i.outputs.iter().any(|o| o.output == output) => true,
                        Some(i) => {
                            let has: Vec<&str> = i.outputs.iter().map(|o| o.output.as_str()).collect();
                            return Err(fail(format!(
                                "it receives output(s) {} of `{}` through a stand-in, which cannot take output \
                                 `{output}` while running: declare an edge from `{}/{output}` to a node of this \
                                 machine in the dataflow",
                                has.join(", "),
                                node.id,
                                node.id
                            )));
                        }
                        None => false,
                    }
                };
                let reader = Reader { node: reader, input, on_host_lost, drop_oldest: true };
                if received {
                    // The reader only joins those the loss of the output's machine closes.
                    self.grow_readers(uuid, &node.id, &output, reader);
                    return Ok(());
                }
                let inbound = Inbound {
                    node: node.id.clone(),
                    machine,
                    outputs: vec![InboundOutput { output: output.clone(), readers: vec![reader] }],
                };
                let spec = placement::stand_in(&node, vec![output]);
                // Subscribed before the stand-in joins the run: it misses nothing sent after.
                let stand_in =
                    StandIn::declare(&self.session, uuid, inbound.clone()).map_err(|e| fail(e.to_string()))?;
                control.add_helper(spec.clone()).map_err(fail)?;
                stand_in.spawn(socket, deadline).map_err(|e| fail(e.to_string()))?;
                self.grow_part(uuid, spec, |part| part.inbound.push(inbound));
            }
        }
        Ok(())
    }

    /// Records helper `spec`, added to the run of `uuid`, in the part.
    fn grow_part(&self, uuid: &str, spec: nerve_spec::NodeSpec, also: impl FnOnce(&mut Part)) {
        if let Some(entry) = lock(&self.parts).get_mut(uuid) {
            entry.part.helpers.push(spec.id.clone());
            entry.part.dataflow.nodes.push(spec);
            also(&mut entry.part);
        }
    }

    /// Adds `reader` to those of output `output` of `node`, received from another machine.
    fn grow_readers(&self, uuid: &str, node: &str, output: &str, reader: Reader) {
        if let Some(entry) = lock(&self.parts).get_mut(uuid)
            && let Some(o) = entry
                .part
                .inbound
                .iter_mut()
                .filter(|i| i.node == node)
                .flat_map(|i| &mut i.outputs)
                .find(|o| o.output == output)
        {
            o.readers.push(reader);
        }
    }

    fn logs(&self, uuid: &str, node: &str, offset: u64) -> Result<LogChunk, String> {
        let (path, running) = {
            let parts = lock(&self.parts);
            let entry = parts.get(uuid).ok_or_else(|| self.unknown(uuid))?;
            if !entry.part.dataflow.nodes.iter().any(|n| n.id == node) || entry.part.helpers.iter().any(|h| h == node) {
                return Err(format!("node `{node}` does not run on machine `{}`", self.machine()));
            }
            (entry.log_dir.join(format!("{node}.log")), entry.state != PartState::Ended)
        };
        let read = || -> std::io::Result<(Vec<u8>, u64)> {
            let mut file = std::fs::File::open(&path)?;
            // Shorter than what was read of it: the log was rotated (`max_log_size`), and this
            // is the new file.
            let offset = if offset > file.metadata()?.len() { 0 } else { offset };
            file.seek(SeekFrom::Start(offset))?;
            let mut bytes = Vec::new();
            file.take(LOG_CHUNK as u64).read_to_end(&mut bytes)?;
            let next = offset + bytes.len() as u64;
            Ok((bytes, next))
        };
        let (bytes, next_offset) = read().map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(LogChunk { text: String::from_utf8_lossy(&bytes).into_owned(), next_offset, running })
    }

    /// A part's run returned: keep how it ended, and tell the coordinator.
    fn part_ended(&self, uuid: &str, result: Result<RunReport, nerve_runtime::RuntimeError>) {
        let mut report = match result {
            Ok(report) => PartReport {
                success: report.success(),
                nodes: report.nodes.iter().map(|(id, o)| (id.clone(), outcome_text(o))).collect(),
                aborted: report.aborted.clone(),
                stopped_by: report.stopped_by.clone(),
            },
            Err(e) => PartReport { success: false, nodes: Vec::new(), aborted: Some(e.to_string()), stopped_by: None },
        };
        {
            let mut parts = lock(&self.parts);
            let Some(entry) = parts.get_mut(uuid) else { return };
            report.nodes.retain(|(id, _)| !entry.part.helpers.contains(id));
            entry.state = PartState::Ended;
            entry.report = Some(report.clone());
            entry.inbound_token = None;
            // Dataflow ids sort by time: the first ended ones are the oldest.
            let ended: Vec<String> =
                parts.iter().filter(|(_, e)| e.state == PartState::Ended).map(|(id, _)| id.clone()).collect();
            for id in ended.iter().take(ended.len().saturating_sub(KEEP_ENDED)) {
                parts.remove(id);
            }
        }
        tracing::info!(dataflow = %uuid, success = report.success, "part ended");
        let ended = CoordinatorRequest::PartEnded(PartEnded {
            uuid: uuid.to_owned(),
            machine: self.machine().to_owned(),
            report,
        });
        if let Err(e) = protocol::ask::<_, ()>(&self.session, keys::COORDINATOR, "the coordinator", &ended, QUICK) {
            // A coordinator that comes back learns it from this daemon's hello.
            tracing::warn!(dataflow = %uuid, error = %e, "cannot tell the coordinator the part ended");
        }
    }

    /// Machine `lost` left the cluster: readers here of its nodes' outputs get INPUT_CLOSED,
    /// unless they wait for it (`on_host_lost: wait`).
    fn machine_lost(&self, lost: &str) {
        if lost == self.machine() {
            return;
        }
        tracing::warn!(machine = lost, "machine lost");
        for entry in lock(&self.parts).values().filter(|e| e.state != PartState::Ended) {
            let closing: Vec<(String, String)> = entry
                .part
                .inbound
                .iter()
                .filter(|i| i.machine == lost)
                .flat_map(|i| &i.outputs)
                .flat_map(|o| &o.readers)
                .filter(|r| r.on_host_lost == HostLossPolicy::Close)
                .map(|r| (r.node.clone(), r.input.clone()))
                .collect();
            if !closing.is_empty() {
                tracing::warn!(dataflow = %entry.assignment.uuid, machine = lost, inputs = ?closing, "closing inputs of the lost machine");
                entry.control.close_inputs(closing);
            }
        }
    }

    fn stop_all_and_wait(&self) {
        let controls: Vec<Arc<RunControl>> =
            lock(&self.parts).values().filter(|e| e.state != PartState::Ended).map(|e| e.control.clone()).collect();
        for c in &controls {
            c.stop();
        }
        for c in &controls {
            while !c.is_over() {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// How `nerve list` words a node's end.
fn outcome_text(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Finished => "finished".into(),
        Outcome::Failed(how) => format!("failed ({how})"),
        Outcome::KilledAfterGrace => "killed after the grace period".into(),
        Outcome::KilledOnInterrupt => "killed at the second interrupt".into(),
        Outcome::NotRun => "not run".into(),
        Outcome::Removed => "removed".into(),
    }
}

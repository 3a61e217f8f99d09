//! The coordinator (`nerve coordinator`): knows the daemons, splits each dataflow by machine,
//! readies every part, then starts them together; answers the tools.
//!
//! It holds nothing a dataflow needs to keep running: the daemons run their parts on their
//! own, and a coordinator that starts again learns what runs from each daemon's hello (every
//! daemon says hello when it joins, and again to a new coordinator).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nerve_message::graph_edit::GraphEdit;
use nerve_runtime::param::{ParamAnswer, ParamOp};
use nerve_shm::sync::lock;
use nerve_spec::Dataflow;
use zenoh::Wait;
use zenoh::sample::SampleKind;

use crate::error::ClusterError;
use crate::keys;
use crate::net::{NetOptions, Role};
use crate::placement;
use crate::protocol::{
    self, Assignment, ClusterStatus, CoordinatorRequest, DaemonHello, DaemonInfo, DaemonRequest, DataflowStatus,
    KEEP_ENDED, Link, LogChunk, PartEnded, PartReport, PartState, PartStatus, ProcessInfo, QUICK, RunState,
    StartOptions, Started,
};

/// One dataflow, as the coordinator tracks it.
struct Record {
    assignment: Assignment,
    state: RunState,
    error: Option<String>,
    /// Per machine: where its part is, and how it ended.
    parts: BTreeMap<String, (PartState, Option<PartReport>)>,
}

impl Record {
    fn new(assignment: Assignment, state: RunState) -> Self {
        let parts = assignment.machines().into_iter().map(|m| (m, (PartState::Preparing, None))).collect();
        Self { assignment, state, error: None, parts }
    }

    /// Once every part ended or was lost, the dataflow is over: finished if every node of every
    /// part finished cleanly.
    fn settle(&mut self) {
        if self.state.is_over() || self.parts.values().any(|(s, _)| !matches!(s, PartState::Ended | PartState::Lost)) {
            return;
        }
        let mut problems = Vec::new();
        for (machine, (state, report)) in &self.parts {
            match (state, report) {
                (PartState::Lost, _) => {
                    let nodes: Vec<&str> = self
                        .assignment
                        .placement
                        .iter()
                        .filter(|(_, m)| *m == machine)
                        .map(|(node, _)| node.as_str())
                        .collect();
                    problems.push(format!("machine `{machine}` was lost, and its nodes with it: {}", nodes.join(", ")));
                }
                (_, Some(r)) if !r.success => {
                    let failed: Vec<String> = r
                        .nodes
                        .iter()
                        .filter(|(_, how)| how != "finished" && how != "not run")
                        .map(|(id, how)| format!("{id} {how}"))
                        .collect();
                    let mut why = failed.join(", ");
                    if let Some(aborted) = &r.aborted {
                        why = if why.is_empty() { aborted.clone() } else { format!("{why}; {aborted}") };
                    }
                    problems.push(format!("on `{machine}`: {why}"));
                }
                _ => {}
            }
        }
        if problems.is_empty() {
            self.state = RunState::Finished;
        } else {
            self.state = RunState::Failed;
            if self.error.is_none() {
                self.error = Some(problems.join("; "));
            }
        }
    }

    fn status(&self, live: BTreeMap<String, PartStatus>) -> DataflowStatus {
        let a = &self.assignment;
        DataflowStatus {
            uuid: a.uuid.clone(),
            name: a.name.clone(),
            file: a.dataflow.file.clone(),
            state: self.state,
            error: self.error.clone(),
            nodes: a.dataflow.nodes.iter().map(|n| n.id.clone()).collect(),
            log_dir: a.log_dir(),
            coordinator_pid: std::process::id(),
            placement: a.placement.clone(),
            parts: self
                .parts
                .iter()
                .map(|(machine, (state, report))| {
                    live.get(machine).cloned().unwrap_or_else(|| PartStatus {
                        machine: machine.clone(),
                        state: state.clone(),
                        run: None,
                        report: report.clone(),
                    })
                })
                .collect(),
        }
    }
}

struct Coordinator {
    session: zenoh::Session,
    /// The process's session, open while this lives.
    _network: Arc<nerve_topic::session::Network>,
    process: ProcessInfo,
    daemons: Mutex<BTreeMap<String, DaemonInfo>>,
    /// Oldest first.
    records: Mutex<Vec<Record>>,
    exit: AtomicBool,
}

/// Serves the cluster until `shutdown` is set or a tool asks to destroy it.
///
/// # Errors
/// When the network cannot be joined (an address in use, say).
pub fn serve(net: &NetOptions, shutdown: &AtomicBool) -> Result<(), ClusterError> {
    let (network, listen) = net.open(Role::Coordinator)?;
    let coordinator = Arc::new(Coordinator {
        process: protocol::this_process(listen.clone()),
        session: network.session().clone(),
        _network: network,
        daemons: Mutex::new(BTreeMap::new()),
        records: Mutex::new(Vec::new()),
        exit: AtomicBool::new(false),
    });
    let queryable = coordinator.session.declare_queryable(keys::COORDINATOR).wait()?;
    let watcher = Arc::downgrade(&coordinator);
    let _daemons = coordinator
        .session
        .liveliness()
        .declare_subscriber(keys::ALIVE_DAEMONS)
        .history(true)
        .callback(move |sample| {
            let (Some(c), Some(machine)) = (watcher.upgrade(), keys::machine_of_alive(sample.key_expr().as_str()))
            else {
                return;
            };
            let machine = machine.to_owned();
            match sample.kind() {
                // Asked on a thread of its own: the answer comes through this session too.
                SampleKind::Put => {
                    if let Err(e) = std::thread::Builder::new().spawn(move || c.greet(&machine)) {
                        tracing::error!(error = %e, "cannot greet a daemon");
                    }
                }
                SampleKind::Delete => c.machine_lost(&machine),
            }
        })
        .wait()?;
    let _token = coordinator.session.liveliness().declare_token(keys::ALIVE_COORDINATOR).wait()?;
    tracing::info!(listen = ?listen, "coordinator ready");
    let c = coordinator.clone();
    protocol::serve(
        &queryable,
        "the coordinator's",
        || shutdown.load(Ordering::Acquire) || coordinator.exit.load(Ordering::Acquire),
        move |query| c.answer(&query),
    )
}

impl Coordinator {
    fn answer(self: &Arc<Self>, query: &zenoh::query::Query) {
        let request = match protocol::request::<CoordinatorRequest>(query) {
            Ok(request) => request,
            Err(why) => return protocol::answer::<()>(query, &Err(why.to_string())),
        };
        match request {
            CoordinatorRequest::Check => protocol::answer(query, &Ok(self.check())),
            CoordinatorRequest::Start { dataflow, name, host, uuid, options } => {
                protocol::answer(query, &self.start(*dataflow, name, &host, uuid, options));
            }
            CoordinatorRequest::Stop { dataflow } => protocol::answer(query, &self.stop(&dataflow)),
            CoordinatorRequest::List => protocol::answer(query, &Ok(self.list())),
            CoordinatorRequest::Logs { dataflow, node, offset } => {
                protocol::answer(query, &self.logs(&dataflow, &node, offset));
            }
            CoordinatorRequest::Param { dataflow, node, op } => {
                protocol::answer(query, &self.param(dataflow.as_deref(), &node, op));
            }
            CoordinatorRequest::Edit { dataflow, edit } => protocol::answer(query, &self.edit(&dataflow, edit)),
            CoordinatorRequest::Destroy => {
                self.destroy();
                protocol::answer(query, &Ok(()));
            }
            CoordinatorRequest::PartEnded(PartEnded { uuid, machine, report }) => {
                let stop_all = self.part_ended(&uuid, &machine, report);
                // Answered first: the daemon waits for the answer, and is asked to stop next.
                protocol::answer(query, &Ok(()));
                if let Some(node) = stop_all {
                    tracing::warn!(
                        dataflow = uuid,
                        machine,
                        node,
                        "`on_failure: stop_all`: stopping every machine's part"
                    );
                    if let Err(e) = self.stop(&uuid) {
                        tracing::warn!(dataflow = uuid, error = %e, "could not stop the dataflow");
                    }
                }
            }
        }
    }

    fn check(&self) -> ClusterStatus {
        ClusterStatus { coordinator: self.process.clone(), daemons: lock(&self.daemons).values().cloned().collect() }
    }

    /// A daemon (re)joined: learn who it is and what it runs.
    fn greet(&self, machine: &str) {
        let who = format!("the daemon of `{machine}`");
        let hello: DaemonHello =
            match protocol::ask(&self.session, &keys::daemon(machine), &who, &DaemonRequest::Hello, QUICK) {
                Ok(hello) => hello,
                Err(e) => {
                    tracing::warn!(machine, error = %e, "a daemon joined but did not say hello");
                    return;
                }
            };
        tracing::info!(machine, host = %hello.info.process.hostname, parts = hello.parts.len(), "daemon joined");
        let mut records = lock(&self.records);
        for (assignment, status) in hello.parts {
            let index = match records.iter().position(|r| r.assignment.uuid == assignment.uuid) {
                Some(i) => i,
                None => {
                    // A dataflow started before this coordinator: it runs on.
                    records.push(Record::new(assignment, RunState::Running));
                    records.len() - 1
                }
            };
            let record = &mut records[index];
            record.parts.insert(status.machine.clone(), (status.state, status.report));
            record.settle();
        }
        drop(records);
        lock(&self.daemons).insert(machine.to_owned(), hello.info);
    }

    /// A daemon left: its parts are lost.
    fn machine_lost(&self, machine: &str) {
        if lock(&self.daemons).remove(machine).is_none() {
            return;
        }
        tracing::warn!(machine, "daemon lost");
        for record in lock(&self.records).iter_mut().filter(|r| !r.state.is_over()) {
            if let Some((state, _)) = record.parts.get_mut(machine)
                && *state != PartState::Ended
            {
                *state = PartState::Lost;
                tracing::warn!(dataflow = %record.assignment.label(), machine, "the machine's nodes are lost");
                record.settle();
            }
        }
    }

    /// Records how a machine's part ended; returns the node whose failure asks every other
    /// part to stop (`on_failure: stop_all`), if the dataflow still runs.
    fn part_ended(&self, uuid: &str, machine: &str, report: PartReport) -> Option<String> {
        let stopped_by = report.stopped_by.clone();
        let mut records = lock(&self.records);
        let record = records.iter_mut().find(|r| r.assignment.uuid == uuid)?;
        record.parts.insert(machine.to_owned(), (PartState::Ended, Some(report)));
        record.settle();
        if record.state.is_over() {
            tracing::info!(dataflow = %record.assignment.label(), state = record.state.as_str(), "dataflow ended");
        }
        stopped_by.filter(|_| !record.state.is_over() && record.state != RunState::Stopping)
    }

    fn daemon_who(machine: &str) -> String {
        format!("the daemon of machine `{machine}`")
    }

    /// Runs a dataflow: places it, readies every machine's part, and starts them all at once.
    fn start(
        &self,
        dataflow: Dataflow,
        name: Option<String>,
        host: &str,
        uuid: String,
        options: StartOptions,
    ) -> Result<Started, String> {
        let assignment = {
            let daemons = lock(&self.daemons);
            let mut records = lock(&self.records);
            if let Some(name) = &name
                && let Some(other) =
                    records.iter().find(|r| !r.state.is_over() && r.assignment.name.as_ref() == Some(name))
            {
                return Err(format!("a dataflow named `{name}` already runs ({})", other.assignment.uuid));
            }
            if records.iter().any(|r| r.assignment.uuid == uuid) {
                return Err(format!("dataflow {uuid} was already started"));
            }
            let default = default_machine(&daemons, &dataflow, host)?;
            let labels = daemons.iter().map(|(m, d)| (m.clone(), d.labels.clone())).collect();
            let placement = placement::place(&dataflow, &default, &labels)?;
            let mut missing: Vec<&str> =
                placement.values().filter(|m| !daemons.contains_key(*m)).map(String::as_str).collect();
            missing.sort_unstable();
            missing.dedup();
            if !missing.is_empty() {
                return Err(format!(
                    "no daemon is connected for machine(s) {} (connected: {}); start one there with \
                     `nerve daemon --machine-id ID --coordinator ADDRESS`",
                    missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", "),
                    connected(&daemons)
                ));
            }
            let assignment = Assignment { uuid: uuid.clone(), name, dataflow, placement, options };
            records.push(Record::new(assignment.clone(), RunState::Starting));
            let ended = records.iter().filter(|r| r.state.is_over()).count();
            if ended > KEEP_ENDED
                && let Some(oldest) = records.iter().position(|r| r.state.is_over())
            {
                records.remove(oldest);
            }
            assignment
        };
        let machines = assignment.machines();
        tracing::info!(dataflow = %assignment.label(), machines = ?machines, "starting");
        let ready_wait = Duration::from_millis(assignment.options.ready_timeout_ms) + QUICK * 2;
        let prepared =
            self.on_each::<()>(&machines, ready_wait, |_| DaemonRequest::Prepare(Box::new(assignment.clone())));
        let failed: Vec<String> = prepared.iter().filter_map(|(_, r)| Some(r.as_ref().err()?.to_string())).collect();
        if failed.is_empty() {
            self.set_parts(&uuid, &machines, &PartState::Ready);
            let started = self.on_each::<()>(&machines, QUICK * 3, |_| DaemonRequest::Start { uuid: uuid.clone() });
            let failed: Vec<String> = started.iter().filter_map(|(_, r)| Some(r.as_ref().err()?.to_string())).collect();
            if failed.is_empty() {
                self.set_parts(&uuid, &machines, &PartState::Running);
                self.with_record(&uuid, |r| r.state = RunState::Running);
                tracing::info!(dataflow = %assignment.label(), "started on every machine");
                return Ok(Started { uuid, placement: assignment.placement });
            }
            return Err(self.abort(&uuid, &machines, &failed));
        }
        Err(self.abort(&uuid, &machines, &failed))
    }

    /// A start failed: stop whatever was readied anywhere, and say why.
    fn abort(&self, uuid: &str, machines: &[String], failed: &[String]) -> String {
        let why = format!("the dataflow could not start: {}", failed.join("; "));
        tracing::error!(dataflow = uuid, "{why}");
        // A machine that did not answer stops its part by itself: a part not started within
        // its ready timeout is aborted on its machine.
        self.on_each::<()>(machines, QUICK, |_| DaemonRequest::Stop { uuid: uuid.to_owned() });
        self.with_record(uuid, |r| {
            r.state = RunState::Failed;
            r.error = Some(why.clone());
        });
        why
    }

    /// Sends each machine its request, all at once, and gathers the answers.
    fn on_each<A: serde::de::DeserializeOwned + Send>(
        &self,
        machines: &[String],
        timeout: Duration,
        request: impl Fn(&str) -> DaemonRequest + Sync,
    ) -> Vec<(String, Result<A, Failure>)> {
        std::thread::scope(|scope| {
            let asks: Vec<_> = machines
                .iter()
                .map(|m| {
                    let request = request(m);
                    let session = &self.session;
                    (
                        m.clone(),
                        scope.spawn(move || {
                            protocol::ask::<_, A>(session, &keys::daemon(m), &Self::daemon_who(m), &request, timeout)
                                .map_err(|e| match e {
                                    ClusterError::Refused(why) => Failure::Refused(why),
                                    ClusterError::Network(_) => Failure::Unreached(format!("machine `{m}`: {e}")),
                                    other => Failure::Refused(format!("machine `{m}`: {other}")),
                                })
                        }),
                    )
                })
                .collect();
            asks.into_iter()
                .map(|(m, h)| {
                    let panicked = || Err(Failure::Refused("a request thread panicked".to_owned()));
                    (m, h.join().unwrap_or_else(|_| panicked()))
                })
                .collect()
        })
    }

    fn set_parts(&self, uuid: &str, machines: &[String], state: &PartState) {
        self.with_record(uuid, |r| {
            for m in machines {
                if let Some((s, _)) = r.parts.get_mut(m)
                    && matches!(s, PartState::Preparing | PartState::Ready)
                {
                    *s = state.clone();
                }
            }
        });
    }

    fn with_record(&self, uuid: &str, f: impl FnOnce(&mut Record)) {
        if let Some(r) = lock(&self.records).iter_mut().find(|r| r.assignment.uuid == uuid) {
            f(r);
        }
    }

    /// The record a tool names: by name among running dataflows first, else by uuid or prefix.
    fn find(&self, which: &str) -> Result<(Assignment, Vec<String>), String> {
        let records = lock(&self.records);
        let by_name: Vec<&Record> =
            records.iter().rev().filter(|r| r.assignment.name.as_deref() == Some(which)).collect();
        let running_by_name: Vec<&&Record> = by_name.iter().filter(|r| !r.state.is_over()).collect();
        let chosen: Vec<&Record> = if let Some(r) = running_by_name.first() {
            vec![**r]
        } else if let Some(r) = by_name.first() {
            vec![*r]
        } else {
            records.iter().filter(|r| !which.is_empty() && r.assignment.uuid.starts_with(which)).collect()
        };
        match chosen.as_slice() {
            [one] => Ok((
                one.assignment.clone(),
                one.parts.iter().filter(|(_, (s, _))| *s != PartState::Lost).map(|(m, _)| m.clone()).collect(),
            )),
            [] => Err(format!(
                "no dataflow `{which}` on the cluster (dataflows: {})",
                if records.is_empty() {
                    "none".to_owned()
                } else {
                    records.iter().map(|r| r.assignment.label()).collect::<Vec<_>>().join(", ")
                }
            )),
            many => Err(format!(
                "`{which}` names several dataflows: {}",
                many.iter().map(|r| r.assignment.uuid.clone()).collect::<Vec<_>>().join(", ")
            )),
        }
    }

    fn stop(&self, which: &str) -> Result<DataflowStatus, String> {
        let (assignment, machines) = self.find(which)?;
        let uuid = assignment.uuid.clone();
        self.with_record(&uuid, |r| {
            if !r.state.is_over() {
                r.state = RunState::Stopping;
            }
        });
        let stopped = self.on_each::<()>(&machines, QUICK, |_| DaemonRequest::Stop { uuid: uuid.clone() });
        for (machine, result) in stopped {
            match result {
                Ok(()) => {}
                // Gone, though its daemon's departure may not have been noticed yet: what it
                // ran is lost, and the stop must not wait for it.
                Err(Failure::Unreached(e)) => {
                    tracing::warn!(dataflow = %assignment.label(), machine, error = %e, "cannot reach a machine to stop its part: its nodes are lost");
                    self.with_record(&uuid, |r| {
                        if let Some((state, _)) = r.parts.get_mut(&machine)
                            && *state != PartState::Ended
                        {
                            *state = PartState::Lost;
                            r.settle();
                        }
                    });
                }
                Err(e) => tracing::warn!(dataflow = %assignment.label(), machine, error = %e, "could not stop a part"),
            }
        }
        Ok(self.status_of(&uuid))
    }

    fn status_of(&self, uuid: &str) -> DataflowStatus {
        self.list().into_iter().find(|d| d.uuid == uuid).unwrap_or_else(|| DataflowStatus {
            uuid: uuid.to_owned(),
            name: None,
            file: std::path::PathBuf::new(),
            state: RunState::Failed,
            error: Some("forgotten".into()),
            nodes: Vec::new(),
            placement: BTreeMap::new(),
            parts: Vec::new(),
            log_dir: std::path::PathBuf::new(),
            coordinator_pid: std::process::id(),
        })
    }

    /// Every dataflow; those still running with their machines' live view.
    fn list(&self) -> Vec<DataflowStatus> {
        let running: Vec<(String, Vec<String>)> = lock(&self.records)
            .iter()
            .filter(|r| !r.state.is_over())
            .map(|r| {
                let live = r.parts.iter().filter(|(_, (s, _))| !matches!(s, PartState::Lost | PartState::Ended));
                (r.assignment.uuid.clone(), live.map(|(m, _)| m.clone()).collect())
            })
            .collect();
        let mut live: BTreeMap<String, BTreeMap<String, PartStatus>> = BTreeMap::new();
        for (uuid, machines) in running {
            let answers =
                self.on_each::<PartStatus>(&machines, QUICK, |_| DaemonRequest::Status { uuid: uuid.clone() });
            live.insert(uuid, answers.into_iter().filter_map(|(m, r)| r.ok().map(|s| (m, s))).collect());
        }
        lock(&self.records).iter().map(|r| r.status(live.remove(&r.assignment.uuid).unwrap_or_default())).collect()
    }

    fn logs(&self, which: &str, node: &str, offset: u64) -> Result<LogChunk, String> {
        let (assignment, _) = self.find(which)?;
        let machine = assignment.placement.get(node).ok_or_else(|| {
            format!(
                "dataflow {} has no node `{node}` (its nodes: {})",
                assignment.label(),
                assignment.placement.keys().cloned().collect::<Vec<_>>().join(", ")
            )
        })?;
        let request = DaemonRequest::Logs { uuid: assignment.uuid.clone(), node: node.to_owned(), offset };
        protocol::ask(&self.session, &keys::daemon(machine), &Self::daemon_who(machine), &request, QUICK)
            .map_err(|e| e.to_string())
    }

    /// Reads or sets a node's parameters on its machine; `None` when no running dataflow has
    /// the node (so the tool looks on its own machine).
    fn param(&self, which: Option<&str>, node: &str, op: ParamOp) -> Result<Option<ParamAnswer>, String> {
        let assignment = match which {
            Some(which) => match self.find(which) {
                Ok((a, _)) => a,
                Err(_) => return Ok(None),
            },
            None => {
                let records = lock(&self.records);
                let mut having: Vec<&Record> = records
                    .iter()
                    .filter(|r| !r.state.is_over() && r.assignment.placement.contains_key(node))
                    .collect();
                match having.len() {
                    0 => return Ok(None),
                    1 => having.remove(0).assignment.clone(),
                    _ => {
                        return Err(format!(
                            "several running dataflows have a node `{node}`: {}; pick one with --dataflow NAME|ID",
                            having.iter().map(|r| r.assignment.label()).collect::<Vec<_>>().join(", ")
                        ));
                    }
                }
            }
        };
        let Some(machine) = assignment.placement.get(node) else {
            return Err(format!("dataflow {} has no node `{node}`", assignment.label()));
        };
        let request = DaemonRequest::Param { uuid: assignment.uuid.clone(), node: node.to_owned(), op };
        protocol::ask(&self.session, &keys::daemon(machine), &Self::daemon_who(machine), &request, QUICK * 2)
            .map(Some)
            .map_err(|e| e.to_string())
    }

    /// Changes the graph of running dataflow `uuid` on the machine its nodes run on: the
    /// added node's (its `deploy:`, or the dataflow's one machine), or the reader's. An edge
    /// from another machine is linked first: the output's machine sends it, the reader's
    /// receives it.
    fn edit(&self, uuid: &str, edit: GraphEdit) -> Result<String, String> {
        let (assignment, _) = self.find(uuid)?;
        let machine_of = |node: &str| {
            assignment.placement.get(node).cloned().ok_or_else(|| {
                format!(
                    "dataflow {} has no node `{node}` (its nodes: {})",
                    assignment.label(),
                    assignment.placement.keys().cloned().collect::<Vec<_>>().join(", ")
                )
            })
        };
        let mut grown = None;
        // The edges from other machines: (writer, output, reader, input, reader's on_host_lost).
        let mut across = Vec::new();
        let machine = match &edit {
            GraphEdit::AddNode { yaml, file } => {
                let df = nerve_spec::with_added_node(&assignment.dataflow, yaml, file).map_err(|e| e.to_string())?;
                let node = df.nodes.last().ok_or("no node was added")?;
                let machine = self.machine_for(&assignment, node)?;
                for input in &node.inputs {
                    if let nerve_spec::InputSource::Output { node: writer, output } = &input.source
                        && machine_of(writer)? != machine
                    {
                        across.push((
                            writer.clone(),
                            output.clone(),
                            node.id.clone(),
                            input.id.clone(),
                            node.on_host_lost,
                        ));
                    }
                }
                grown = Some((node.id.clone(), df));
                machine
            }
            GraphEdit::RemoveNode { node, .. } => machine_of(node)?,
            GraphEdit::Connect { source, target } => {
                let to = machine_of(&target.node)?;
                if machine_of(&source.node)? != to {
                    let on_host_lost =
                        assignment.dataflow.node(&target.node).map(|n| n.on_host_lost).unwrap_or_default();
                    across.push((
                        source.node.clone(),
                        source.port.clone(),
                        target.node.clone(),
                        target.port.clone(),
                        on_host_lost,
                    ));
                }
                to
            }
            // The reader's machine holds the edge: a stand-in there feeds it.
            GraphEdit::Disconnect { target, .. } => machine_of(&target.node)?,
        };
        for (writer, output, reader, input, on_host_lost) in across {
            let from = machine_of(&writer)?;
            let spec = assignment.dataflow.node(&writer).ok_or_else(|| format!("no node `{writer}`"))?;
            if !spec.outputs.contains(&output) {
                return Err(format!(
                    "node `{writer}` has no output `{output}` (its outputs: {})",
                    spec.outputs.join(", ")
                ));
            }
            let receive = Link::Receive {
                node: Box::new(spec.clone()),
                output: output.clone(),
                machine: from.clone(),
                reader,
                input,
                on_host_lost,
            };
            self.link(&assignment.uuid, &machine, receive)?;
            self.link(&assignment.uuid, &from, Link::Send { node: writer, output })?;
        }
        let request = DaemonRequest::Edit { uuid: assignment.uuid.clone(), edit };
        let done: String =
            protocol::ask(&self.session, &keys::daemon(&machine), &Self::daemon_who(&machine), &request, QUICK * 2)
                .map_err(|e| e.to_string())?;
        if let Some((node, df)) = grown
            && let Some(record) = lock(&self.records).iter_mut().find(|r| r.assignment.uuid == assignment.uuid)
        {
            record.assignment.dataflow = df;
            record.assignment.placement.insert(node, machine.clone());
        }
        Ok(format!("{done} (machine `{machine}`)"))
    }

    /// Lays `machine`'s end of an edge between machines of dataflow `uuid`.
    fn link(&self, uuid: &str, machine: &str, link: Link) -> Result<(), String> {
        let request = DaemonRequest::Link { uuid: uuid.to_owned(), link };
        protocol::ask(&self.session, &keys::daemon(machine), &Self::daemon_who(machine), &request, QUICK * 2)
            .map_err(|e| e.to_string())
    }

    /// The machine a node added to running dataflow `assignment` goes to: the one its
    /// `deploy:` names or whose labels it asks for, or the dataflow's only machine.
    fn machine_for(&self, assignment: &Assignment, node: &nerve_spec::NodeSpec) -> Result<String, String> {
        let machines = assignment.machines();
        let default = match machines.as_slice() {
            [only] => only.clone(),
            _ if node.machine.is_some() || !node.labels.is_empty() => String::new(),
            _ => {
                return Err(format!(
                    "dataflow {} runs on machines {}: say which one takes node `{}` with `deploy: {{machine: ID}}` \
                     or `deploy: {{labels: …}}`",
                    assignment.label(),
                    machines.join(", "),
                    node.id
                ));
            }
        };
        let labels = lock(&self.daemons).iter().map(|(m, d)| (m.clone(), d.labels.clone())).collect();
        let alone = Dataflow { nodes: vec![node.clone()], ..assignment.dataflow.clone() };
        let placement = placement::place(&alone, &default, &labels)?;
        placement.get(&node.id).cloned().ok_or_else(|| format!("no machine takes node `{}`", node.id))
    }

    /// Stops every dataflow, then every daemon, then itself.
    fn destroy(&self) {
        let running: Vec<String> =
            lock(&self.records).iter().filter(|r| !r.state.is_over()).map(|r| r.assignment.uuid.clone()).collect();
        for uuid in running {
            if let Err(e) = self.stop(&uuid) {
                tracing::warn!(dataflow = %uuid, error = %e, "could not stop");
            }
        }
        let machines: Vec<String> = lock(&self.daemons).keys().cloned().collect();
        for (machine, result) in self.on_each::<()>(&machines, QUICK, |_| DaemonRequest::Exit) {
            if let Err(e) = result {
                tracing::warn!(machine, error = %e, "a daemon did not take the exit");
            }
        }
        self.exit.store(true, Ordering::Release);
    }
}

/// Why a machine's part of a request failed.
#[derive(Debug)]
enum Failure {
    /// The machine answered no (or something went wrong there); the text says why.
    Refused(String),
    /// No answer came: the machine is gone or cut off.
    Unreached(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Refused(why) | Self::Unreached(why) => f.write_str(why),
        }
    }
}

fn connected(daemons: &BTreeMap<String, DaemonInfo>) -> String {
    if daemons.is_empty() { "none".into() } else { daemons.keys().cloned().collect::<Vec<_>>().join(", ") }
}

/// Where nodes without `deploy: machine` run: on the daemon of the host `nerve start` runs
/// on (of several there, the first machine id in alphabetical order, whichever joined first),
/// else on the only daemon there is.
fn default_machine(daemons: &BTreeMap<String, DaemonInfo>, dataflow: &Dataflow, host: &str) -> Result<String, String> {
    let here: Vec<&String> = daemons.iter().filter(|(_, d)| d.process.host == host).map(|(m, _)| m).collect();
    if let Some(machine) = here.first() {
        if here.len() > 1 && dataflow.nodes.iter().any(|n| n.machine.is_none()) {
            tracing::info!(
                machine = %machine,
                daemons_here = ?here,
                "nodes without `deploy:` go to the first of this host's daemons, by machine id"
            );
        }
        return Ok((*machine).clone());
    }
    if let [(machine, _)] = daemons.iter().collect::<Vec<_>>().as_slice() {
        return Ok((*machine).clone());
    }
    // A node asking for labels is placed by them.
    let unplaced: Vec<&str> =
        dataflow.nodes.iter().filter(|n| n.machine.is_none() && n.labels.is_empty()).map(|n| n.id.as_str()).collect();
    if unplaced.is_empty() {
        // Every node names its machine: the default is never used.
        return Ok(String::new());
    }
    Err(format!(
        "node(s) {} have no `deploy: {{machine: …}}` and no daemon runs on this machine to take them \
         (connected: {}); add `deploy:` to the dataflow or start a daemon here",
        unplaced.join(", "),
        connected(daemons)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn daemon(machine: &str, host: &str) -> (String, DaemonInfo) {
        let process =
            ProcessInfo { hostname: "h".into(), host: host.into(), pid: 1, version: String::new(), listen: Vec::new() };
        (machine.into(), DaemonInfo { machine: machine.into(), labels: BTreeMap::new(), process, running: 0 })
    }

    #[test]
    fn unplaced_nodes_go_to_this_hosts_first_daemon_by_machine_id() -> Result<(), String> {
        let df = nerve_spec::parse_str("nodes:\n  - id: a\n    path: dynamic\n", std::path::Path::new("/tmp/d.yml"))
            .map_err(|e| e.to_string())?;
        // Two daemons on this host: the first machine id wins, whatever order they came in.
        let daemons: BTreeMap<_, _> =
            [daemon("zeta", "here"), daemon("other", "there"), daemon("alpha", "here")].into();
        assert_eq!(default_machine(&daemons, &df, "here")?, "alpha");
        let err = default_machine(&daemons, &df, "elsewhere").err().ok_or("placed on a daemon of another host")?;
        assert!(err.contains("node(s) a have no `deploy"), "{err}");
        Ok(())
    }
}

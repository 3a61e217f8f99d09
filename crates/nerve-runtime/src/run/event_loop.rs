//! The event loop of a run, and how the run as a whole moves: nodes register and report
//! ready, the run starts them together, and stops, aborts or kills them.

use std::os::unix::net::UnixStream;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use nerve_message::channel_table::InputChannel;
use nerve_message::node_to_runtime::NodeRequest;
use nerve_message::param::{ParamAnswer, ParamError, ParamOp};
use nerve_message::runtime_to_node::RuntimeMessage;
use nerve_message::{NERVE_VERSION, frame, versions_compatible};
use nerve_spec::NodePath;

use super::Run;
use super::report::Outcome;
use super::state::{Kill, NodeRt, NodeState, Phase};
use crate::control::Readiness;
use crate::event::Ev;

impl Run<'_> {
    pub(super) fn event_loop(&mut self, rx: &Receiver<Ev>) {
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
                        outputs.iter().filter_map(|o| self.plan.outputs[i].iter().position(|(x, _)| x == o)).collect();
                    self.close_outputs(i, &idx);
                }
                Ok(Ev::Request(i, _, NodeRequest::ParamReply { id, answer })) => self.params.answer(i, id, answer),
                Ok(Ev::Param { node, op, reply }) => self.forward_param(&node, op, reply),
                Ok(Ev::Edit { edit, by_control, reply }) => {
                    let answer = self.edit(edit, by_control);
                    if let Err(why) = &answer {
                        tracing::warn!("graph change refused: {why}");
                    }
                    let _ = reply.send(answer);
                }
                Ok(Ev::AddHelper { spec, reply }) => {
                    let answer = self.add_helper(*spec);
                    if let Err(why) = &answer {
                        tracing::warn!("helper not added: {why}");
                    }
                    let _ = reply.send(answer);
                }
                Ok(Ev::Request(
                    i,
                    _,
                    NodeRequest::Register { .. }
                    | NodeRequest::Inspect
                    | NodeRequest::StopRun
                    | NodeRequest::Param { .. }
                    | NodeRequest::Edit(_),
                )) => {
                    tracing::warn!(node = %self.nodes[i].id, "ignoring a registration or tool request from a node");
                }
                Ok(Ev::Tool { stop, reply }) => {
                    if stop && self.phase.stopping_since().is_none() {
                        let by = if self.opts.control.is_some() { "the cluster" } else { "`nerve stop`" };
                        eprintln!("nerve: stopping (asked by {by})");
                        self.stop();
                    }
                    let _ = reply.send(self.status());
                }
                Ok(Ev::Go) => {
                    if let Phase::Starting { go } = &mut self.phase {
                        *go = true;
                    }
                    self.maybe_start();
                }
                Ok(Ev::CloseInputs(inputs)) => self.close_inputs(&inputs),
                Ok(Ev::Exited(i, _, status)) => self.exited(i, status),
                Ok(Ev::Disconnected(i, _)) => {
                    // A node started by hand has no exit status: leaving is how it finishes.
                    if self.nodes[i].pid.is_none() && !self.nodes[i].exited() {
                        self.finish_node(i, Outcome::Finished);
                    }
                }
                Ok(Ev::Signal) => {
                    if self.phase.stopping_since().is_some() {
                        eprintln!("nerve: second interrupt, killing every node");
                        self.kill_all(Kill::OnInterrupt);
                    } else {
                        eprintln!("nerve: stopping (interrupt again to kill at once)");
                        self.stop();
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            self.restart_due();
            self.stop_idle_helpers();
            let now = Instant::now();
            self.finish_grace_due(now);
            self.health_checks_due(now);
            self.removals_due(now);
            let nodes = &self.nodes;
            self.params.expire(now, |i| nodes[i].id.clone());
            if let Phase::Stopping { since, killed: false, .. } = self.phase
                && now >= since + self.opts.grace
            {
                self.kill_all(Kill::AfterGrace);
            }
            if matches!(self.phase, Phase::Starting { .. }) && now >= ready_deadline {
                let late: Vec<&str> = self
                    .nodes
                    .iter()
                    .filter(|n| (n.pid.is_some() || n.helper) && !n.exited() && !n.ready())
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
    /// a node's `finish_grace_secs` ends or its liveness is due a look, a parameter request's
    /// node runs out of time, the stop's grace period ends, or the wait for every node to be
    /// ready. `None`: nothing until the next event, so an idle run does not wake the runtime.
    pub(super) fn next_deadline(&self, ready_deadline: Instant) -> Option<Instant> {
        let restarts = self.nodes.iter().filter_map(NodeRt::restart_at);
        let finishes = self.nodes.iter().filter(|n| n.killed.is_none() && !n.exited()).filter_map(|n| n.finish_by);
        let removals = self.nodes.iter().filter(|n| n.killed.is_none() && !n.exited()).filter_map(|n| n.removed);
        let health_checks =
            (0..self.nodes.len()).filter_map(|i| Some(self.nodes[i].seen?.looked_at + self.health_watch(i)? / 4));
        let (grace, ready) = match self.phase {
            Phase::Starting { .. } => (None, Some(ready_deadline)),
            Phase::Running | Phase::Stopping { killed: true, .. } => (None, None),
            Phase::Stopping { since, killed: false, .. } => (Some(since + self.opts.grace), None),
        };
        restarts
            .chain(finishes)
            .chain(removals)
            .chain(health_checks)
            .chain([self.params.next_deadline(), grace, ready].into_iter().flatten())
            .min()
    }

    pub(super) fn register(&mut self, stream: UnixStream, node_id: &str, version: &str, pid: u32) -> Option<usize> {
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
        let dynamic = rt.pid.is_none() && self.df.nodes[i].path == NodePath::Dynamic;
        match rt.state {
            NodeState::Connected { .. } => {
                return refuse(&mut stream, format!("node `{node_id}` is already connected"));
            }
            // A node started by hand may leave and join again (a viewer restarted at will) for
            // as long as the run lasts.
            NodeState::Exited(_) if dynamic => {
                if self.phase.stopping_since().is_some() {
                    return refuse(&mut stream, "the dataflow is stopping".to_owned());
                }
                self.rejoin(i);
            }
            NodeState::Exited(_) => {
                let state = self.node_state(i);
                return refuse(&mut stream, format!("node `{node_id}` is started by nerve and has ended ({state})"));
            }
            // Its process is gone; the one its restart starts registers itself.
            NodeState::Restarting { .. } => {
                return refuse(&mut stream, format!("node `{node_id}` is restarting"));
            }
            NodeState::Unconnected => {}
        }
        match (self.nodes[i].pid, &self.df.nodes[i].path) {
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
        let mut table = self.plan.table(&self.df, i, &self.run_id, self.opts.pool_capacity, self.opts.max_message);
        // An edge cut and its input connected to another output since: the input is that
        // output's topic now.
        let connected = &self.nodes[i].connected;
        table.inputs.retain(|c| !matches!(c, InputChannel::Shm { id, .. } if connected.contains_key(id)));
        table.sim_time = self.opts.sim_time;
        table.restarts = self.nodes[i].restarts;
        table.run_name.clone_from(&self.run_name);
        table.server_wait_ms = Some(u64::try_from(self.opts.ready_timeout.as_millis()).unwrap_or(u64::MAX));
        if frame::write(&mut stream, &RuntimeMessage::Registered(Box::new(table))).is_err() {
            return None;
        }
        self.nodes[i].state = NodeState::Connected { control: stream, ready: false };
        self.nodes[i].registered = true;
        for input in std::mem::take(&mut self.nodes[i].pending_closed) {
            self.send(i, &RuntimeMessage::InputClosed { input });
        }
        self.tell_of_ended_servers(i);
        if self.timers_closed {
            self.send(i, &RuntimeMessage::TimersClosed);
        }
        if self.phase.stopping_since().is_some() || self.nodes[i].removed.is_some() {
            self.send(i, &RuntimeMessage::Stop);
        }
        Some(i)
    }

    pub(super) fn ready(&mut self, i: usize) {
        // Only a connected node speaks; what a replaced process still had in flight is dropped.
        if let NodeState::Connected { ready, .. } = &mut self.nodes[i].state {
            *ready = true;
        }
        if self.phase.started() {
            self.send(i, &RuntimeMessage::Start);
        } else {
            self.maybe_start();
        }
    }

    /// Starts every ready node once all spawned nodes and helpers are ready (or already gone),
    /// and, under a [`RunControl`], its go came.
    pub(super) fn maybe_start(&mut self) {
        let all = self.nodes.iter().all(|n| (n.pid.is_none() && !n.helper) || n.exited() || n.ready());
        if let Phase::Starting { go } = self.phase
            && all
        {
            if let Some(control) = &self.opts.control {
                if !go {
                    control.set(Readiness::Ready);
                    return;
                }
                control.set(Readiness::Started);
            }
            if let Some(feeds) = &self.log_feeds {
                // What a node logs from its first moment reaches the nodes reading it.
                let ready: Vec<&str> = self.nodes.iter().filter(|n| n.ready()).map(|n| n.id.as_str()).collect();
                feeds.wait_for_readers(&ready, self.opts.ready_timeout);
            }
            self.phase = Phase::Running;
            tracing::info!("all nodes ready, starting");
            for j in 0..self.nodes.len() {
                if self.nodes[j].ready() {
                    self.send(j, &RuntimeMessage::Start);
                }
            }
        }
    }

    /// Forwards a tool's parameter request to node `node`'s process, or answers at once why it
    /// cannot be asked; the node's answer comes back as [`NodeRequest::ParamReply`].
    pub(super) fn forward_param(&mut self, node: &str, op: ParamOp, reply: Sender<ParamAnswer>) {
        let Some(i) = self.nodes.iter().position(|n| n.id == node) else {
            let known = self.nodes.iter().map(|n| n.id.clone()).collect();
            let _ = reply.send(Err(ParamError::UnknownNode { node: node.to_owned(), known }));
            return;
        };
        if !self.nodes[i].connected() {
            let _ = reply.send(Err(ParamError::NotRunning { node: node.to_owned(), state: self.node_state(i) }));
            return;
        }
        let id = self.params.open(i, reply);
        self.send(i, &RuntimeMessage::ParamRequest { id, op });
    }

    /// Every spawned node exited and no node started by hand is still connected.
    pub(super) fn finished(&self) -> bool {
        self.nodes.iter().all(|n| match n.pid {
            Some(_) => n.exited(),
            None => !n.connected(),
        })
    }

    pub(super) fn send(&mut self, i: usize, msg: &RuntimeMessage) {
        if let NodeState::Connected { control, .. } = &mut self.nodes[i].state
            && let Err(e) = frame::write(control, msg)
        {
            tracing::debug!(node = %self.nodes[i].id, error = %e, "node unreachable");
        }
    }

    pub(super) fn stop(&mut self) {
        if self.phase.stopping_since().is_some() {
            return;
        }
        self.phase = Phase::Stopping { since: Instant::now(), started: self.phase.started(), killed: false };
        for i in 0..self.nodes.len() {
            // A restart waiting for its back-off will not come: the process it replaces ended
            // the node.
            if let NodeState::Restarting { previous, .. } = &self.nodes[i].state {
                let previous = previous.clone();
                self.finish_node(i, previous);
            }
            if !self.nodes[i].exited() {
                self.send(i, &RuntimeMessage::Stop);
            }
        }
    }

    pub(super) fn abort(&mut self, reason: String) {
        tracing::error!("{reason}");
        if let Some(control) = &self.opts.control
            && !self.phase.started()
        {
            control.set(Readiness::Failed(reason.clone()));
        }
        if self.aborted.is_none() {
            self.aborted = Some(reason);
        }
        self.stop();
    }

    /// Once every node but the helpers has finished, the helpers have nothing left to serve:
    /// they are told to stop, so the run can end.
    pub(super) fn stop_idle_helpers(&mut self) {
        if self.helpers_stopped || !self.nodes.iter().any(|n| n.helper) {
            return;
        }
        if self.nodes.iter().filter(|n| !n.helper).all(NodeRt::exited) {
            self.helpers_stopped = true;
            for i in 0..self.nodes.len() {
                if self.nodes[i].helper {
                    self.send(i, &RuntimeMessage::Stop);
                }
            }
        }
    }

    /// Kills what is left of a stopping run: the grace period ended, or a second interrupt came.
    pub(super) fn kill_all(&mut self, why: Kill) {
        if let Phase::Stopping { killed, .. } = &mut self.phase {
            *killed = true;
        }
        let lingering: Vec<usize> =
            (0..self.nodes.len()).filter(|&i| self.nodes[i].pid.is_none() && self.nodes[i].connected()).collect();
        for i in lingering {
            let when = match why {
                Kill::AfterGrace | Kill::AfterFinishGrace(_) | Kill::Unresponsive(_) | Kill::Removed => {
                    "after the grace period"
                }
                Kill::OnInterrupt => "at the second interrupt",
            };
            tracing::warn!(node = %self.nodes[i].id, "node started by hand still connected {when}");
            self.finish_node(i, Outcome::Failed(format!("started by hand; still connected {when}")));
        }
        for i in 0..self.nodes.len() {
            self.kill_node(i, why);
        }
    }

    /// Kills the process group of node `i`, if nerve started it and it still runs.
    pub(super) fn kill_node(&mut self, i: usize, why: Kill) {
        let n = &mut self.nodes[i];
        if let Some(pid) = n.pid
            && !n.exited()
            && n.killed.is_none()
        {
            n.killed = Some(why);
            if let Some(pgid) = rustix::process::Pid::from_raw(pid.try_into().unwrap_or(0)) {
                let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
            }
        }
    }
}

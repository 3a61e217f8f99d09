//! Node processes: starting one, what its exit means, restarts by its `restart:` policy, and
//! what a node that is gone (or restarting) means for the nodes it reads from and writes to.

use nerve_spec::{FailurePolicy, InputSource};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use nerve_message::channel_table::InputChannel;
use nerve_message::runtime_to_node::RuntimeMessage;

use super::Run;
use super::report::Outcome;
use super::state::{Kill, NodeRt, NodeState, Phase, Seen};
use crate::error::RuntimeError;
use crate::event::Ev;
use crate::spawn::{Launch, spawn};

/// What a node process that never connected to its run most likely misses.
pub(super) const NO_NODE_HINT: &str =
    "does it create a nerve Node (`Node()` in Python, `Node::init_from_env()` in Rust)?";

impl Run<'_> {
    /// Starts node `i`'s process (again, for a restart), if nerve starts it at all.
    pub(super) fn spawn_node(&mut self, i: usize) -> Result<(), RuntimeError> {
        let Some(starter) = &self.starters[i] else {
            return Ok(());
        };
        let launch = Launch {
            node: &self.df.nodes[i],
            base_dir: &self.df.base_dir,
            socket: &self.socket,
            run_id: &self.run_id,
            run_name: &self.run_name,
            share: &self.df.share,
            realtime: starter.realtime,
            network_env: &self.opts.node_env,
            types: &self.df.types,
        };
        let (mut child, pumps) = spawn(&launch, &starter.program, &starter.args, &starter.logs)?;
        self.pumps.extend(pumps);
        let pid = child.id();
        self.reaper.track(pid);
        let rt = &mut self.nodes[i];
        rt.generation += 1;
        rt.pid = Some(pid);
        rt.registered = false;
        rt.killed = None;
        rt.spawned_at = Some(Instant::now());
        let (tx, generation) = (self.events.clone(), rt.generation);
        std::thread::spawn(move || {
            if let Ok(status) = child.wait() {
                let _ = tx.send(Ev::Exited(i, generation, status));
            }
        });
        Ok(())
    }

    pub(super) fn exited(&mut self, i: usize, status: ExitStatus) {
        let rt = &mut self.nodes[i];
        let outcome = if let Some(kill) = rt.killed {
            kill.outcome()
        } else if rt.removed.is_some() {
            Outcome::Removed
        } else if status.success() {
            Outcome::Finished
        } else if let Some(sig) = status.signal() {
            Outcome::Failed(format!("killed by signal {sig}"))
        } else {
            Outcome::Failed(format!("exit code {}", status.code().unwrap_or(-1)))
        };
        if !rt.registered && rt.killed.is_none() {
            let how = match &outcome {
                Outcome::Failed(how) => how.as_str(),
                _ => "exit code 0",
            };
            tracing::warn!(node = %rt.id, "exited ({how}) without connecting to the run: {NO_NODE_HINT}");
        }
        match &outcome {
            Outcome::Finished => tracing::info!(node = %rt.id, "finished"),
            Outcome::KilledAfterGrace => {
                tracing::warn!(node = %rt.id, "killed after the grace period")
            }
            Outcome::KilledOnInterrupt => tracing::warn!(node = %rt.id, "killed at the second interrupt"),
            Outcome::Failed(how) => tracing::error!(node = %rt.id, "failed: {how}"),
            Outcome::NotRun => {}
            Outcome::Removed => tracing::info!(node = %rt.id, %status, "left the graph"),
        }
        if !self.schedule_restart(i, &outcome) {
            self.finish_node(i, outcome);
        }
    }

    /// Whether node `i`'s `restart:` policy calls for starting it again after it ended with
    /// `outcome`; if so, the restart is scheduled after its back-off.
    pub(super) fn schedule_restart(&mut self, i: usize, outcome: &Outcome) -> bool {
        let policy = self.df.nodes[i].restart;
        let rt = &mut self.nodes[i];
        // A stopping run, or a node nerve killed to end it, is not restarted whatever its policy.
        if self.phase.stopping_since().is_some()
            || rt.removed.is_some()
            || rt.killed.is_some_and(|kill| !kill.may_restart())
            || rt.schedule_restart(&policy, outcome, Instant::now()).is_none()
        {
            return false;
        }
        let id = rt.id.clone();
        self.params.node_gone(i, &id, "restarting");
        // Its queues take nothing more and what it held is freed now, as for any dead reader;
        // its outputs stay open: their readers wait for the new process.
        self.release_reader(i);
        true
    }

    /// Starts the nodes whose back-off is over.
    pub(super) fn restart_due(&mut self) {
        let now = Instant::now();
        for i in 0..self.nodes.len() {
            if self.nodes[i].restart_at().is_none_or(|at| at > now) {
                continue;
            }
            self.nodes[i].state = NodeState::Unconnected;
            self.reopen_inputs(i);
            let restarts = self.nodes[i].restarts + 1;
            if let Some(s) = &self.starters[i] {
                s.logs.note(&format!("--- nerve: restart {restarts} of this node ---"));
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
    pub(super) fn reopen_inputs(&mut self, i: usize) {
        let mut closed = Vec::new();
        for input in &self.plan.inputs[i] {
            if let InputChannel::Shm { id, queue, producer, output, .. } = input {
                if self.nodes[i].closed_inputs.contains(id) {
                    // Cut, and maybe connected to another output since: that one is open.
                    if !self.nodes[i].connected.contains_key(id) {
                        closed.push(id.clone());
                    }
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

    /// Node `i`, started by hand, left and now joins again: its queues take messages again,
    /// and its outputs, closed when it left, reach their readers again. What the old process
    /// had in flight is told apart from the new one's by the generation.
    pub(super) fn rejoin(&mut self, i: usize) {
        tracing::info!(node = %self.nodes[i].id, "joins again");
        self.nodes[i].generation += 1;
        self.nodes[i].state = NodeState::Unconnected;
        self.reopen_inputs(i);
        let outputs: Vec<usize> = self.nodes[i].closed_outputs.drain().collect();
        for o in outputs {
            let edges = self.plan.outputs[i][o].1.clone();
            for e in edges {
                self.tell_input_reopened(e.reader, e.input);
            }
            let (node, output) = (&self.nodes[i].id, &self.plan.outputs[i][o].0);
            let connected: Vec<(usize, String)> = (0..self.nodes.len())
                .flat_map(|j| {
                    self.nodes[j]
                        .connected
                        .iter()
                        .filter(|(_, c)| &c.node == node && &c.output == output)
                        .map(move |(input, _)| (j, input.clone()))
                })
                .collect();
            for (j, input) in connected {
                self.tell_input_reopened(j, input);
            }
        }
    }

    /// Node `i` is gone: free what it held, tell its readers, and see whether the run can
    /// start (or must abort) without it.
    pub(super) fn finish_node(&mut self, i: usize, outcome: Outcome) {
        let failed_early = !self.phase.started() && !matches!(outcome, Outcome::Finished);
        // A failure while the run runs (not one Ctrl-C or a stop caused).
        let failed_running = match &outcome {
            Outcome::Failed(how) if self.phase.started() && self.phase.stopping_since().is_none() => Some(how.clone()),
            _ => None,
        };
        self.nodes[i].state = NodeState::Exited(outcome);
        let (id, state) = (self.nodes[i].id.clone(), self.node_state(i));
        self.params.node_gone(i, &id, &state);
        self.tell_callers(i, &state);
        self.release_reader(i);
        let all: Vec<usize> = (0..self.plan.outputs[i].len()).collect();
        self.close_outputs(i, &all);
        self.close_timers_once_driven();
        if failed_early && self.phase.stopping_since().is_none() {
            let rt = &self.nodes[i];
            let hint = if rt.pid.is_some() && !rt.registered {
                format!(" without connecting to the run: {NO_NODE_HINT}")
            } else {
                String::new()
            };
            let id = rt.id.clone();
            self.abort(format!("node `{id}` exited before the dataflow started{hint}"));
        } else {
            // A node that finished without connecting may have been the last one awaited.
            self.maybe_start();
        }
        if let Some(how) = failed_running {
            self.on_failure(i, &how);
        }
    }

    /// Node `i` failed for good (`how`) while the run ran: its `on_failure:` says whether the
    /// others go on.
    fn on_failure(&mut self, i: usize, how: &str) {
        let id = self.nodes[i].id.clone();
        match self.df.nodes[i].on_failure.unwrap_or_default() {
            FailurePolicy::StopAll => {
                self.stopped_by.get_or_insert_with(|| id.clone());
                self.abort(format!("node `{id}` failed ({how}); `on_failure: stop_all` stops every node"));
            }
            FailurePolicy::Continue => tracing::warn!(
                node = %id,
                "the other nodes keep running (`on_failure: continue`, the default; `on_failure: stop_all` stops them all)"
            ),
        }
    }

    /// Once every node the run ends with ([`RunOptions::end_with`](crate::RunOptions)) has
    /// ended, closes the timers of the others (a node that connects later is told as it
    /// registers): a node ticked by a timer would otherwise never see all its inputs closed,
    /// and the run would outlast what drives it.
    fn close_timers_once_driven(&mut self) {
        let ended = |id: &String| self.nodes.iter().any(|n| &n.id == id && n.exited());
        if self.timers_closed || self.opts.end_with.is_empty() || !self.opts.end_with.iter().all(ended) {
            return;
        }
        self.timers_closed = true;
        for i in 0..self.nodes.len() {
            if self.nodes[i].connected() {
                self.send(i, &RuntimeMessage::TimersClosed);
            }
        }
    }

    /// Node `i`, which ended for good as `state` says, may serve what others call: each
    /// connected node that calls a service or action it declares serving is told, so one still
    /// waiting for that server fails at once, naming it, instead of at its timeout.
    fn tell_callers(&mut self, i: usize, state: &str) {
        let callers: Vec<usize> =
            (0..self.nodes.len()).filter(|&j| self.nodes[j].connected() && self.serves_a_call(i, j)).collect();
        let msg = RuntimeMessage::ServerNodeEnded { node: self.nodes[i].id.clone(), outcome: state.to_owned() };
        for j in callers {
            self.send(j, &msg);
        }
    }

    /// Tells node `j`, which just registered (a restart, say), of the nodes serving what it
    /// calls that had already ended for good.
    pub(super) fn tell_of_ended_servers(&mut self, j: usize) {
        let ended: Vec<usize> =
            (0..self.nodes.len()).filter(|&i| self.nodes[i].exited() && self.serves_a_call(i, j)).collect();
        for i in ended {
            let msg = RuntimeMessage::ServerNodeEnded { node: self.nodes[i].id.clone(), outcome: self.node_state(i) };
            self.send(j, &msg);
        }
    }

    /// Whether node `i` declares serving a service or action that node `j` declares calling.
    fn serves_a_call(&self, i: usize, j: usize) -> bool {
        let (server, caller) = (&self.df.nodes[i], &self.df.nodes[j]);
        i != j
            && (caller.services.call.iter().any(|s| server.services.serve.contains(s))
                || caller.actions.call.iter().any(|a| server.actions.serve.contains(a)))
    }

    /// A reader is gone: its queues refuse new messages, its references are dropped, and a
    /// producer waiting on it for room is woken.
    pub(super) fn release_reader(&mut self, i: usize) {
        for input in &self.plan.inputs[i] {
            if let InputChannel::Shm { queue, producer, output, edge, .. } = input {
                self.inboxes[i].ring(*queue).close();
                self.tables[*producer][*output].release_all(1u64 << edge);
                self.inboxes[*producer].doorbell().ring();
            }
        }
    }

    pub(super) fn close_outputs(&mut self, i: usize, outputs: &[usize]) {
        for &o in outputs {
            if !self.nodes[i].closed_outputs.insert(o) {
                continue;
            }
            let edges = self.plan.outputs[i][o].1.clone();
            for e in edges {
                // An input cut from this edge and connected to another output since is not
                // this output's to close.
                if !self.nodes[e.reader].connected.contains_key(&e.input) {
                    self.tell_input_closed(e.reader, e.input);
                }
            }
            let (node, output) = (self.nodes[i].id.clone(), self.plan.outputs[i][o].0.clone());
            self.close_connections_from(&node, &output);
        }
    }

    /// Tells each of `inputs`' nodes that the input, as (node id, input id), is closed.
    /// Their queues take nothing more (what is queued is still read), even from a producer
    /// that comes back.
    pub(super) fn close_inputs(&mut self, inputs: &[(String, String)]) {
        for (node, input) in inputs {
            let Some(i) = self.nodes.iter().position(|n| &n.id == node) else {
                tracing::warn!(node, input, "no such node to close an input of");
                continue;
            };
            let queue = self.plan.inputs[i].iter().find_map(|c| match c {
                InputChannel::Shm { id, queue, .. } if id == input => Some(*queue),
                _ => None,
            });
            match queue {
                Some(queue) => self.inboxes[i].ring(queue).close(),
                // Connected while running: its node stops reading the output's topic.
                None if self.nodes[i].connected.contains_key(input) => {}
                None => {
                    tracing::warn!(node, input, "no such input to close");
                    continue;
                }
            }
            self.nodes[i].closed_inputs.insert(input.clone());
            self.tell_input_closed(i, input.clone());
        }
    }

    /// Tells node `i` that its input `input`, closed when its producer left, is open again,
    /// unless it was closed for good from outside.
    pub(super) fn tell_input_reopened(&mut self, i: usize, input: String) {
        let reader = &mut self.nodes[i];
        if reader.closed_inputs.contains(&input) {
            return;
        }
        reader.inputs_closed.remove(&input);
        match reader.state {
            NodeState::Exited(_) => {}
            NodeState::Connected { .. } => self.send(i, &RuntimeMessage::InputReopened { input }),
            NodeState::Unconnected | NodeState::Restarting { .. } => reader.pending_closed.retain(|c| *c != input),
        }
    }

    /// Gives node `i`, running once every other node ended and all its inputs closed, its
    /// `finish_grace_secs`; past it, nerve kills the node.
    pub(super) fn finish_grace_due(&mut self, now: Instant) {
        for i in 0..self.nodes.len() {
            let Some(grace) = self.df.nodes[i].finish_grace else { continue };
            let rt = &self.nodes[i];
            let running = matches!(rt.state, NodeState::Connected { .. } | NodeState::Unconnected);
            if rt.pid.is_none() || rt.killed.is_some() || !running || !self.alone_and_unfed(i) {
                // Not (or no longer: an input reopened) alone and unfed: the wait starts again
                // once it is.
                self.nodes[i].finish_by = None;
                continue;
            }
            if now >= *self.nodes[i].finish_by.get_or_insert(now + grace) {
                tracing::warn!(
                    node = %self.nodes[i].id,
                    "still running {grace:?} after every other node ended and all its inputs closed \
                     (finish_grace_secs): killing it"
                );
                self.kill_node(i, Kill::AfterFinishGrace(grace));
            }
        }
    }

    /// Node `i`'s `health_check_timeout`, if it is watched now: the run is running, and nerve
    /// started the node, which is connected and not being killed.
    pub(super) fn health_watch(&self, i: usize) -> Option<Duration> {
        let rt = &self.nodes[i];
        let watched = matches!(self.phase, Phase::Running)
            && rt.pid.is_some()
            && rt.killed.is_none()
            && matches!(rt.state, NodeState::Connected { .. });
        self.df.nodes[i].health_check.filter(|_| watched)
    }

    /// Kills each watched node (see [`Run::health_watch`]) that has neither called nerve nor
    /// waited for an event for its timeout; looks at each four times per timeout.
    pub(super) fn health_checks_due(&mut self, now: Instant) {
        for i in 0..self.nodes.len() {
            let Some(timeout) = self.health_watch(i) else {
                // Watched afresh once it is again.
                self.nodes[i].seen = None;
                continue;
            };
            let rt = &self.nodes[i];
            if rt.seen.is_some_and(|seen| now < seen.looked_at + timeout / 4) {
                continue;
            }
            let (calls, waiting) = self.inboxes[i].liveness();
            let seen = match rt.seen {
                Some(seen) if seen.calls == calls && !waiting => Seen { looked_at: now, ..seen },
                _ => Seen { calls, active_at: now, looked_at: now },
            };
            self.nodes[i].seen = Some(seen);
            if now >= seen.active_at + timeout {
                tracing::warn!(
                    node = %self.nodes[i].id,
                    "unresponsive: no call to nerve and no wait for an event in {timeout:?} \
                     (health_check_timeout): killing it"
                );
                self.kill_node(i, Kill::Unresponsive(timeout));
            }
        }
    }

    /// Whether every node but `i` (and the helpers) ended and all of `i`'s inputs are closed.
    fn alone_and_unfed(&self, i: usize) -> bool {
        let ended = |n: &NodeRt| n.helper || n.exited() || (n.pid.is_none() && !n.connected());
        let alone = self.nodes.iter().enumerate().all(|(j, n)| j == i || ended(n));
        let closed = &self.nodes[i].inputs_closed;
        let node = &self.df.nodes[i];
        // Its operators' inputs from one another close as its operators stop, inside the node.
        let (from_nodes, others): (Vec<_>, Vec<_>) = node
            .inputs
            .iter()
            .filter(|input| !node.in_process(input))
            .partition(|input| matches!(input.source, InputSource::Output { .. }));
        let nodes_closed = from_nodes.iter().all(|input| closed.contains(&input.id));
        // The node's timers and topics close with its inputs from nodes (`exit_when_nodes_finish`),
        // or when what drives the run ends.
        let others_closed =
            self.timers_closed || (self.df.exit_when_nodes_finish && !from_nodes.is_empty() && nodes_closed);
        alone && nodes_closed && (others_closed || others.iter().all(|input| closed.contains(&input.id)))
    }

    /// Tells node `i` that its input `input` is closed, now or when it connects.
    pub(super) fn tell_input_closed(&mut self, i: usize, input: String) {
        let reader = &mut self.nodes[i];
        reader.inputs_closed.insert(input.clone());
        match reader.state {
            NodeState::Exited(_) => {}
            NodeState::Connected { .. } => self.send(i, &RuntimeMessage::InputClosed { input }),
            NodeState::Unconnected | NodeState::Restarting { .. } => reader.pending_closed.push(input),
        }
    }
}

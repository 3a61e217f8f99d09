//! Changes to the running graph, as dora-rs's `dora node add|remove|connect|disconnect` make
//! them: the nodes already running are untouched, and the edges that stay lose nothing.
//!
//! An input fed while the run runs (by `connect`, or declared by an added node) reads its
//! output's topic (`<node>/<output>`, see `nerve_node`), which every output publishes: its
//! writer, already running, writes into the queues of the readers it started with and no
//! others. Such an input costs one copy per message where a declared edge costs none.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nerve_message::channel_table::InputChannel;
use nerve_message::graph_edit::{GraphEdit, Port};
use nerve_message::runtime_to_node::RuntimeMessage;
use nerve_shm::inbox::Inbox;
use nerve_shm::pool::BlockTable;
use nerve_spec::{Dataflow, InputSource, NodePath, NodeSpec};

use super::Run;
use super::report::Outcome;
use super::state::{Connection, Kill, NodeState, Phase};
use crate::plan::{CONNECTED_QUEUE, SPARE_INPUTS, output_topic};
use crate::spawn::program;

impl Run<'_> {
    /// Makes `edit` (`by_control`: asked through the run's [`RunControl`]); returns what was
    /// done, or why not, for the user.
    ///
    /// [`RunControl`]: crate::RunControl
    pub(super) fn edit(&mut self, edit: GraphEdit, by_control: bool) -> Result<String, String> {
        if self.opts.control.is_some() && !by_control {
            // The coordinator places nodes and knows every machine's: a change it did not make
            // would be one it cannot see.
            return Err("this run is one machine's part of a dataflow of the cluster: change it through the \
                        coordinator, `nerve node … --dataflow NAME`"
                .into());
        }
        self.check_running()?;
        match edit {
            GraphEdit::AddNode { yaml, file } => self.add_node(&yaml, &file),
            GraphEdit::RemoveNode { node, grace_ms } => self.remove_node(&node, grace_ms.map(Duration::from_millis)),
            GraphEdit::Connect { source, target } => self.connect(&source, &target),
            GraphEdit::Disconnect { source, target } => self.disconnect(&source, &target),
        }
    }

    fn check_running(&self) -> Result<(), String> {
        match self.phase {
            Phase::Running => Ok(()),
            Phase::Starting { .. } => Err("the dataflow is still starting: change it once it runs".into()),
            Phase::Stopping { .. } => Err("the dataflow is stopping".into()),
        }
    }

    /// Adds `spec`, a node its controlling process serves (a stand-in or a bridge of a
    /// cluster's machine), whose inputs name outputs of the run.
    pub(super) fn add_helper(&mut self, spec: NodeSpec) -> Result<String, String> {
        self.check_running()?;
        if !matches!(spec.path, NodePath::Dynamic) {
            return Err(format!("node `{}`: a helper is served by the run's own process (`path: dynamic`)", spec.id));
        }
        if self.df.node(&spec.id).is_some() {
            return Err(format!("the dataflow already has a node `{}`", spec.id));
        }
        for input in &spec.inputs {
            if let InputSource::Output { node, output } = &input.source {
                let p = self.node_index(node)?;
                self.output_of(p, output)?;
            }
        }
        let mut grown = self.df.clone();
        grown.nodes.push(spec);
        self.join(grown, true)
    }

    fn add_node(&mut self, yaml: &str, file: &Path) -> Result<String, String> {
        let grown = nerve_spec::with_added_node(&self.df, yaml, file).map_err(|e| e.to_string())?;
        let node = grown.nodes.last().ok_or("no node was added")?;
        let id = node.id.clone();
        let refuse = |why: &str| Err(format!("node `{id}`: {why}"));
        if node.inputs.iter().any(|i| matches!(i.source, InputSource::Logs { .. }))
            || node.outputs.iter().any(|o| node.logs.carries(o))
        {
            return refuse(
                "log inputs and outputs (`dora/logs`, `send_logs_as`, `send_stdout_as`) are set up as the run \
                 starts: declare the node in the dataflow",
            );
        }
        if matches!(node.path, NodePath::Operators(_)) {
            return refuse("operators are started with their dataflow: declare the node in the dataflow");
        }
        // On a cluster, the coordinator chose this machine for it.
        if self.opts.control.is_none() && (node.machine.is_some() || !node.labels.is_empty()) {
            return refuse("`deploy:` names a machine of a cluster, and this dataflow runs on one host");
        }
        self.join(grown, false)
    }

    /// Runs the last node of `grown`, the run's dataflow and one node more.
    fn join(&mut self, grown: Dataflow, helper: bool) -> Result<String, String> {
        let node = grown.nodes.last().ok_or("no node was added")?;
        let id = node.id.clone();
        let prog = program(node, &self.opts.python).map_err(|e| e.to_string())?;
        let n = self.df.nodes.len();
        let mut plan = self.plan.clone();
        plan.add_node(&grown);
        let inbox = Inbox::create(&self.names.inbox(n), &plan.inboxes[n]).map_err(|e| e.to_string())?;
        let tables = (0..plan.outputs[n].len())
            .map(|o| BlockTable::create(&self.names.pool(n, o)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let starter =
            super::starter(node, prog, &self.log_dir, self.opts, self.log_tap.clone()).map_err(|e| e.to_string())?;
        let mut rt = super::state::NodeRt::new(id.clone(), helper);
        for input in &node.inputs {
            if let InputSource::Output { node, output } = &input.source {
                rt.connected.insert(input.id.clone(), Connection { node: node.clone(), output: output.clone() });
            }
        }
        self.df = grown;
        self.plan = plan;
        self.inboxes.push(Arc::new(inbox));
        self.tables.push(tables);
        self.starters.push(starter);
        self.nodes.push(rt);
        // Inputs whose writer has already ended are closed from the start.
        let ended: Vec<String> = self.nodes[n]
            .connected
            .iter()
            .filter(|(_, c)| self.output_closed(&c.node, &c.output))
            .map(|(input, _)| input.clone())
            .collect();
        for input in ended {
            self.tell_input_closed(n, input);
        }
        if let Err(e) = self.spawn_node(n) {
            self.finish_node(n, Outcome::Failed(format!("could not be started: {e}")));
            return Err(format!("node `{id}` was added but could not be started: {e}"));
        }
        tracing::info!(node = %id, "added to the running graph");
        let how = if self.starters[n].is_some() { "started" } else { "waiting for its process (`path: dynamic`)" };
        Ok(format!("node `{id}` added, {how}"))
    }

    fn remove_node(&mut self, node: &str, grace: Option<Duration>) -> Result<String, String> {
        let i = self.node_index(node)?;
        if self.nodes[i].helper {
            return Err(format!("node `{node}` is served by nerve itself for this run and cannot be removed"));
        }
        if self.nodes[i].exited() {
            return Err(format!("node `{node}` has already ended ({})", self.node_state(i)));
        }
        let grace = grace.unwrap_or(self.opts.grace);
        self.nodes[i].removed = Some(Instant::now() + grace);
        match self.nodes[i].state {
            NodeState::Connected { .. } => self.send(i, &RuntimeMessage::Stop),
            // Its process is starting: it is told to stop as it registers.
            NodeState::Unconnected if self.nodes[i].pid.is_some() => {}
            NodeState::Unconnected | NodeState::Restarting { .. } | NodeState::Exited(_) => {
                self.finish_node(i, Outcome::Removed);
            }
        }
        tracing::info!(node, "removed from the running graph");
        Ok(format!("node `{node}` removed"))
    }

    /// Kills the removed nodes still running past their grace period.
    pub(super) fn removals_due(&mut self, now: Instant) {
        for i in 0..self.nodes.len() {
            let rt = &self.nodes[i];
            if rt.exited() || rt.removed.is_none_or(|by| now < by) {
                continue;
            }
            if rt.pid.is_none() {
                // Started by hand, and still connected: nerve cannot kill it, only let it go.
                tracing::warn!(node = %rt.id, "removed, but still connected after its grace period");
                self.finish_node(i, Outcome::Removed);
            } else {
                self.kill_node(i, Kill::Removed);
            }
        }
    }

    fn connect(&mut self, source: &Port, target: &Port) -> Result<String, String> {
        let (p, r) = (self.node_index(&source.node)?, self.node_index(&target.node)?);
        let output = self.output_of(p, &source.port)?;
        let input = target.port.clone();
        nerve_spec::check_id(&input).map_err(|e| format!("input `{target}`: {e}"))?;
        self.check_reader(r)?;
        if let Some(c) = self.nodes[r].connected.get(&input) {
            return Err(format!("input `{target}` already reads `{}/{}`: disconnect it first", c.node, c.output));
        }
        if let Some(declared) = self.df.nodes[r].inputs.iter().find(|i| i.id == input)
            && !self.nodes[r].closed_inputs.contains(&input)
        {
            return Err(format!(
                "input `{target}` is declared by the dataflow, reading {}: disconnect it first, or connect \
                 to an input of another name",
                describe_source(&declared.source)
            ));
        }
        if let (Some(from), Some(to)) =
            (self.df.nodes[p].output_types.get(&output), self.df.nodes[r].input_types.get(&input))
            && from != to
        {
            return Err(format!("`{source}` sends {from} but `{target}` declares {to}"));
        }
        let k = self.nodes[r].areas_used;
        if k == SPARE_INPUTS {
            return Err(format!(
                "node `{}` was given {SPARE_INPUTS} inputs while running already, as many as a node takes in \
                 one run: declare the input in the dataflow",
                target.node
            ));
        }
        self.nodes[r].areas_used += 1;
        let topic = output_topic(&self.df, &source.node, &output);
        let queue = self.plan.spare_area(r, k);
        let queue_size = CONNECTED_QUEUE.capacity;
        self.plan.inputs[r].push(InputChannel::Topic { id: input.clone(), topic: topic.clone(), queue_size, queue });
        self.nodes[r].connected.insert(input.clone(), Connection { node: source.node.clone(), output });
        self.nodes[r].inputs_closed.remove(&input);
        self.nodes[r].pending_closed.retain(|c| *c != input);
        // A node not connected yet finds the input in its channel table as it registers.
        self.send(r, &RuntimeMessage::Connect { input: input.clone(), topic, queue_size, queue });
        if self.output_closed(&source.node, &source.port) {
            self.tell_input_closed(r, input);
        }
        tracing::info!(%source, %target, "connected");
        Ok(format!("{source} -> {target}"))
    }

    fn disconnect(&mut self, source: &Port, target: &Port) -> Result<String, String> {
        let r = self.node_index(&target.node)?;
        let input = &target.port;
        let reads = |node: &str, output: &str| node == source.node && output == source.port;
        if let Some(c) = self.nodes[r].connected.get(input) {
            if !reads(&c.node, &c.output) {
                return Err(format!("input `{target}` reads `{}/{}`, not `{source}`", c.node, c.output));
            }
            self.nodes[r].connected.remove(input);
            self.plan.inputs[r].retain(|c| !matches!(c, InputChannel::Topic { id, .. } if id == input));
            self.send(r, &RuntimeMessage::Disconnect { input: input.clone() });
        } else {
            let Some(declared) = self.df.nodes[r].inputs.iter().find(|i| &i.id == input) else {
                return Err(format!("node `{}` has no input `{input}`", target.node));
            };
            match &declared.source {
                InputSource::Output { node, output } if reads(node, output) => {}
                other => return Err(format!("input `{target}` reads {}, not `{source}`", describe_source(other))),
            }
            if self.nodes[r].closed_inputs.contains(input) {
                return Err(format!("input `{target}` is already disconnected"));
            }
            if !self.plan.inputs[r].iter().any(|c| matches!(c, InputChannel::Shm { id, .. } if id == input)) {
                return Err(format!("input `{target}` is fed inside its node's process and cannot be cut"));
            }
            self.close_inputs(&[(target.node.clone(), input.clone())]);
        }
        tracing::info!(%source, %target, "disconnected");
        Ok(format!("{source} -x- {target}"))
    }

    fn node_index(&self, node: &str) -> Result<usize, String> {
        self.nodes.iter().position(|n| n.id == node).ok_or_else(|| {
            let known: Vec<&str> = self.nodes.iter().map(|n| n.id.as_str()).collect();
            format!("the dataflow has no node `{node}` (its nodes: {})", known.join(", "))
        })
    }

    /// The output `output` of node `p`, which a connection may read.
    fn output_of(&self, p: usize, output: &str) -> Result<String, String> {
        let node = &self.df.nodes[p];
        if !node.outputs.iter().any(|o| o == output) {
            return Err(format!(
                "node `{}` has no output `{output}` (its outputs: {})",
                node.id,
                node.outputs.join(", ")
            ));
        }
        if node.logs.carries(output) {
            return Err(format!(
                "output `{}/{output}` carries the node's log, set up as the run starts: read it with a \
                 `dora/logs` input declared in the dataflow",
                node.id
            ));
        }
        Ok(output.to_owned())
    }

    /// Whether node `r` can be given an input now.
    fn check_reader(&self, r: usize) -> Result<(), String> {
        let rt = &self.nodes[r];
        if rt.exited() || rt.removed.is_some() {
            return Err(format!("node `{}` has ended ({})", rt.id, self.node_state(r)));
        }
        if rt.helper {
            return Err(format!("node `{}` is served by nerve itself for this run", rt.id));
        }
        if matches!(self.df.nodes[r].path, NodePath::Operators(_)) {
            return Err(format!(
                "node `{}` runs operators, whose inputs are set as it starts: declare the input in the dataflow",
                rt.id
            ));
        }
        Ok(())
    }

    /// Whether output `output` of node `node` will send nothing more.
    fn output_closed(&self, node: &str, output: &str) -> bool {
        let Some(p) = self.nodes.iter().position(|n| n.id == node) else { return true };
        self.nodes[p].exited()
            || self.plan.outputs[p]
                .iter()
                .position(|(o, _)| o == output)
                .is_some_and(|o| self.nodes[p].closed_outputs.contains(&o))
    }

    /// Tells the readers connected at run time to output `output` of node `node` that it is
    /// closed.
    pub(super) fn close_connections_from(&mut self, node: &str, output: &str) {
        for j in 0..self.nodes.len() {
            let inputs: Vec<String> = self.nodes[j]
                .connected
                .iter()
                .filter(|(_, c)| c.node == node && c.output == output)
                .map(|(input, _)| input.clone())
                .collect();
            for input in inputs {
                self.tell_input_closed(j, input);
            }
        }
    }
}

fn describe_source(source: &InputSource) -> String {
    match source {
        InputSource::Output { node, output } => format!("`{node}/{output}`"),
        InputSource::Timer { interval } => format!("a timer every {interval:?}"),
        InputSource::Topic { topic } => format!("topic `{topic}`"),
        InputSource::Logs { .. } => "logs".to_owned(),
    }
}

//! How a run and its nodes are doing, in the words of `nerve list`.

use nerve_message::channel_table::InputChannel;
use nerve_message::run_status::{InputStatus, NodeStatus, RunState, RunStatus};

use super::Run;
use super::state::Phase;

impl Run<'_> {
    /// How the run and each of its nodes are doing now.
    pub(super) fn status(&self) -> RunStatus {
        let state = match self.phase {
            Phase::Stopping { .. } => RunState::Stopping,
            Phase::Running => RunState::Running,
            Phase::Starting { .. } => RunState::Starting,
        };
        let nodes = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, rt)| NodeStatus {
                id: rt.id.clone(),
                pid: rt.pid.filter(|_| !rt.exited() && rt.restart_at().is_none()),
                state: self.node_state(i),
                restarts: rt.restarts,
                config: self.df.nodes[i].config.clone(),
                machine: None,
                inputs: self.plan.inputs[i]
                    .iter()
                    .filter_map(|input| match input {
                        InputChannel::Shm { id, queue, producer, output, .. } => {
                            let ring = self.inboxes[i].ring(*queue);
                            let latency = ring.latency();
                            Some(InputStatus {
                                id: id.clone(),
                                source: self.df.nodes.get(*producer).and_then(|writer| {
                                    writer.outputs.get(*output).map(|o| format!("{}/{o}", writer.id))
                                }),
                                queued: ring.len(),
                                capacity: self.plan.inboxes[i][*queue].capacity,
                                dropped: ring.dropped(),
                                received: ring.received(),
                                latency_sum_ns: latency.sum_ns,
                                latency_samples: latency.samples,
                                latency_max_ns: latency.max_ns,
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
    pub(super) fn node_state(&self, i: usize) -> String {
        self.nodes[i].state_word(self.phase.started())
    }
}

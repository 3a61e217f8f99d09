//! How a run and its nodes are doing, in the words of `nerve list`.

use nerve_message::channel_table::InputChannel;
use nerve_message::run_status::{InputStatus, NodeStatus, RunState, RunStatus};

use super::Run;
use super::report::Outcome;

impl Run<'_> {
    /// How the run and each of its nodes are doing now.
    pub(super) fn status(&self) -> RunStatus {
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
    pub(super) fn node_state(&self, i: usize) -> String {
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
}

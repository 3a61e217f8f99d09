//! What a cluster's coordinator answers the tools: the answers to
//! [`CoordinatorRequest`](crate::tool_to_coordinator::CoordinatorRequest)s that are its own (a
//! node's log and parameters come as their daemon gave them).

use serde::{Deserialize, Serialize};

use crate::coordinator_to_daemon::{Placement, label};
use crate::daemon_to_coordinator::{DaemonInfo, PartState, PartStatus, ProcessInfo};
use crate::run_status::{NodeStatus, RunState, RunStatus};

/// What the coordinator answers to `nerve check`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterStatus {
    /// The coordinator itself.
    pub coordinator: ProcessInfo,
    /// Every connected daemon, by machine id.
    pub daemons: Vec<DaemonInfo>,
}

/// Answer to [`CoordinatorRequest::Start`](crate::tool_to_coordinator::CoordinatorRequest::Start).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Started {
    /// The dataflow's id.
    pub uuid: String,
    /// Where each node runs.
    pub placement: Placement,
}

/// A dataflow of the cluster, as `nerve list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataflowStatus {
    /// Its id.
    pub uuid: String,
    /// Its name.
    pub name: Option<String>,
    /// The dataflow file, as named where it was started.
    pub file: std::path::PathBuf,
    /// Where it is (a dataflow of the cluster is listed until it is over, with `--all` after).
    pub state: RunState,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// The node ids, in dataflow order.
    pub nodes: Vec<String>,
    /// Where each node runs.
    pub placement: Placement,
    /// Each machine's part.
    pub parts: Vec<PartStatus>,
    /// Where the nodes' logs are, on each node's machine.
    pub log_dir: std::path::PathBuf,
    /// The coordinator's process id.
    pub coordinator_pid: u32,
}

impl DataflowStatus {
    /// `name (uuid)`, or the uuid.
    #[must_use]
    pub fn label(&self) -> String {
        label(self.name.as_deref(), &self.uuid)
    }

    /// The dataflow in the shape `nerve list` gives every dataflow: each node with its machine
    /// and its state there (`lost` with its machine).
    #[must_use]
    pub fn to_run_status(&self, coordinator: &str) -> RunStatus {
        let nodes = self
            .nodes
            .iter()
            .map(|id| {
                let machine = self.placement.get(id).cloned().unwrap_or_default();
                let part = self.parts.iter().find(|p| p.machine == machine);
                let live = part.and_then(|p| p.run.as_ref()).and_then(|r| r.nodes.iter().find(|n| &n.id == id));
                let mut node = live.cloned().unwrap_or_else(|| NodeStatus {
                    id: id.clone(),
                    pid: None,
                    state: match part {
                        Some(p) if p.state == PartState::Lost => format!("lost (machine `{machine}` is gone)"),
                        Some(p) => p
                            .report
                            .as_ref()
                            .and_then(|r| r.nodes.iter().find(|(n, _)| n == id).map(|(_, how)| how.clone()))
                            .unwrap_or_else(|| p.state.as_str().to_owned()),
                        None => "unknown".to_owned(),
                    },
                    restarts: 0,
                    inputs: Vec::new(),
                    config: serde_json::Value::Null,
                    machine: None,
                });
                node.machine = Some(machine);
                node
            })
            .collect();
        RunStatus {
            run_id: self.uuid.clone(),
            name: self.name.clone(),
            dataflow: self.file.clone(),
            log_dir: self.log_dir.clone(),
            pid: self.coordinator_pid,
            state: self.state,
            nodes,
            coordinator: Some(coordinator.to_owned()),
            error: self.error.clone(),
        }
    }
}

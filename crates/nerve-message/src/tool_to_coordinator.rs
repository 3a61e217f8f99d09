//! What the tools (`nerve start`, `nerve list`, `nerve stop`, `nerve logs`, `nerve param`,
//! `nerve check`, `nerve destroy`) ask a cluster's coordinator: JSON over Zenoh queries on the
//! coordinator's key, each answered with a `Result` (see [`crate`]). A machine's daemon uses the
//! same key for the one thing it tells the coordinator unasked: that its part ended.

use nerve_spec::Dataflow;
use serde::{Deserialize, Serialize};

use crate::coordinator_to_daemon::StartOptions;
use crate::daemon_to_coordinator::PartEnded;
use crate::param::ParamOp;

/// A request to the coordinator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum CoordinatorRequest {
    /// Who is connected: answered with
    /// [`ClusterStatus`](crate::coordinator_to_tool::ClusterStatus).
    Check,
    /// Run a dataflow: answered with [`Started`](crate::coordinator_to_tool::Started) once every
    /// node on every machine started.
    Start {
        /// The validated dataflow.
        dataflow: Box<Dataflow>,
        /// A name, unique among the cluster's running dataflows.
        name: Option<String>,
        /// The host id of the machine `nerve start` runs on: nodes without `deploy: machine`
        /// run on the daemon of that host.
        host: String,
        /// The dataflow's id, chosen by the tool (it follows the logs before the start).
        uuid: String,
        /// How.
        options: StartOptions,
    },
    /// Stop a dataflow (a name, or a uuid or a prefix of one): answered with its
    /// [`DataflowStatus`](crate::coordinator_to_tool::DataflowStatus) as the stop began.
    Stop {
        /// Which.
        dataflow: String,
    },
    /// Every dataflow: answered with a list of
    /// [`DataflowStatus`](crate::coordinator_to_tool::DataflowStatus).
    List,
    /// A node's output from `offset` on: answered with a
    /// [`LogChunk`](crate::daemon_to_coordinator::LogChunk).
    Logs {
        /// Which dataflow.
        dataflow: String,
        /// Which node.
        node: String,
        /// Bytes of the log already read.
        offset: u64,
    },
    /// Read or set a running node's parameters, on its machine: answered with an
    /// `Option<`[`ParamAnswer`](crate::param::ParamAnswer)`>`, `None` when no running
    /// dataflow of the cluster has the node.
    Param {
        /// The dataflow (a name, or a uuid or a prefix of one), when several have the node.
        dataflow: Option<String>,
        /// The node.
        node: String,
        /// What to do.
        op: ParamOp,
    },
    /// Change the graph of running dataflow `dataflow` (its uuid) on the machine concerned
    /// (`nerve node add|remove|connect|disconnect`): answered with what was done.
    Edit {
        /// The dataflow's uuid.
        dataflow: String,
        /// The change.
        edit: crate::graph_edit::GraphEdit,
    },
    /// Stop every dataflow, every daemon and the coordinator: answered with `()`.
    Destroy,
    /// Sent by a machine's daemon, not a tool: its part of a dataflow ended; answered with `()`.
    PartEnded(PartEnded),
}

#[cfg(test)]
mod tests {
    use super::CoordinatorRequest;
    use crate::daemon_to_coordinator::{PartEnded, PartReport};

    #[test]
    fn encoding_is_pinned() -> serde_json::Result<()> {
        // Peers of other builds read these: a change here is a protocol change. A daemon's
        // `PartEnded` reads as the struct variant it was before its fields became a type.
        let ended = CoordinatorRequest::PartEnded(PartEnded {
            uuid: "u".into(),
            machine: "m".into(),
            report: PartReport {
                success: true,
                nodes: vec![("a".into(), "finished".into())],
                aborted: None,
                stopped_by: None,
            },
        });
        for (msg, json) in [
            (CoordinatorRequest::Check, r#""Check""#),
            (
                ended,
                r#"{"PartEnded":{"uuid":"u","machine":"m","report":{"success":true,"nodes":[["a","finished"]],"aborted":null}}}"#,
            ),
        ] {
            assert_eq!(serde_json::to_string(&msg)?, json);
            assert_eq!(serde_json::from_str::<CoordinatorRequest>(json)?, msg);
        }
        Ok(())
    }
}

//! What a run did: [`RunReport`], and how each node ended.

use std::path::PathBuf;

/// How one node ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Exited with status 0.
    Finished,
    /// Exited otherwise; the text says how.
    Failed(String),
    /// Did not exit within the grace period after stop, and was killed.
    KilledAfterGrace,
    /// Still running at a second interrupt (Ctrl-C), and killed then.
    KilledOnInterrupt,
    /// A dynamic node that never connected, or a node not started because the run aborted.
    NotRun,
    /// Taken out of the running graph (`nerve node remove`): stopped, or killed after its
    /// grace period.
    Removed,
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
    /// The node whose failure stopped every node (`on_failure: stop_all`), if one did: on a
    /// cluster, the other machines' parts are stopped too.
    pub stopped_by: Option<String>,
    /// Inputs that dropped messages (drop_oldest with a full queue): node, input, messages.
    pub dropped: Vec<(String, String, u64)>,
    /// Nodes their `restart:` policy started again, and how many times.
    pub restarts: Vec<(String, u32)>,
}

impl RunReport {
    /// Whether every node finished cleanly and nothing aborted the run.
    #[must_use]
    pub fn success(&self) -> bool {
        self.aborted.is_none()
            && self.nodes.iter().all(|(_, o)| matches!(o, Outcome::Finished | Outcome::NotRun | Outcome::Removed))
    }
}

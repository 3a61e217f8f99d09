//! The states of a run and of each of its nodes, each one enum: what the event loop moves
//! between, and the words `nerve list` shows for them.

use std::collections::{BTreeMap, HashSet};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use nerve_spec::{RestartCount, RestartSpec};

use super::report::Outcome;
use crate::event::Generation;

/// Where the run as a whole is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// Nodes are starting; the run starts them together once all are ready and, under a
    /// [`RunControl`](crate::RunControl), its go came (`go`: it has; always, without a control).
    Starting {
        /// The go came.
        go: bool,
    },
    /// Every node was told to start.
    Running,
    /// Stop events went out at `since`.
    Stopping {
        /// When the stop began: the grace period counts from here.
        since: Instant,
        /// Whether the run had started before it stopped (nodes that were ready show as
        /// `running` then, and a node that becomes ready is still told to start).
        started: bool,
        /// Every node was killed: the grace period ended, or a second interrupt came.
        killed: bool,
    },
}

impl Phase {
    /// Whether every node was told to start (the run may be stopping since).
    pub(super) fn started(self) -> bool {
        matches!(self, Self::Running | Self::Stopping { started: true, .. })
    }

    /// When the stop began, if the run is stopping.
    pub(super) fn stopping_since(self) -> Option<Instant> {
        match self {
            Self::Stopping { since, .. } => Some(since),
            Self::Starting { .. } | Self::Running => None,
        }
    }
}

/// Where one node is.
#[derive(Debug)]
pub(super) enum NodeState {
    /// Not connected: its process is starting, or a node started by hand has not come yet.
    Unconnected,
    /// Registered on the run's socket (`control`: the runtime's end); `ready` once it said so.
    Connected {
        /// Where the runtime's messages to the node go.
        control: UnixStream,
        /// The node mapped its channels and waits for the start.
        ready: bool,
    },
    /// Its process ended and its `restart:` policy starts it again at `at`.
    Restarting {
        /// When the back-off ends.
        at: Instant,
        /// How the process it replaces ended: the node's outcome if the run stops first.
        previous: Outcome,
    },
    /// Gone for good.
    Exited(Outcome),
}

/// Why nerve killed the nodes of a stopping run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kill {
    /// The grace period after the stop ended.
    AfterGrace,
    /// A second interrupt (Ctrl-C) asked for it.
    OnInterrupt,
    /// Its `finish_grace_secs` (this long) ended after every other node ended and all its
    /// inputs closed.
    AfterFinishGrace(Duration),
    /// It neither called nerve nor waited for an event for its `health_check_timeout` (this
    /// long): hung. Unlike the others, its `restart:` policy applies, as to a crash.
    Unresponsive(Duration),
    /// `nerve node remove` took it out of the graph, and it outlived its grace period.
    Removed,
}

impl Kill {
    pub(super) fn outcome(self) -> Outcome {
        match self {
            Self::AfterGrace => Outcome::KilledAfterGrace,
            Self::Removed => Outcome::Removed,
            Self::OnInterrupt => Outcome::KilledOnInterrupt,
            Self::AfterFinishGrace(grace) => Outcome::Failed(format!(
                "still running {grace:?} after every other node ended and all its inputs closed \
                 (finish_grace_secs), killed"
            )),
            Self::Unresponsive(timeout) => Outcome::Failed(format!(
                "unresponsive: no call to nerve and no wait for an event in {timeout:?} \
                 (health_check_timeout), killed"
            )),
        }
    }

    /// Whether the node's `restart:` policy still applies after this kill: a hung node is
    /// restarted like a crashed one; a node killed to end the run is not.
    pub(super) fn may_restart(self) -> bool {
        matches!(self, Self::Unresponsive(_))
    }
}

/// What the runtime last saw of a node's calls into nerve (`health_check_timeout`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Seen {
    /// Its count of calls.
    pub(super) calls: u64,
    /// When the count last changed, or the node was last seen waiting for an event.
    pub(super) active_at: Instant,
    /// When the runtime looked.
    pub(super) looked_at: Instant,
}

/// What the runtime keeps of each node while the run lasts.
pub(super) struct NodeRt {
    pub(super) id: String,
    /// The process nerve started for it last; `None` for a node started by hand.
    pub(super) pid: Option<u32>,
    /// That process registered on the run's socket: one that exits without having done so
    /// never created a nerve node, which is said at once rather than at the ready timeout.
    pub(super) registered: bool,
    pub(super) generation: Generation,
    pub(super) state: NodeState,
    pub(super) closed_outputs: HashSet<usize>,
    /// Inputs closed for good from outside ([`RunControl::close_inputs`](crate::RunControl::close_inputs)).
    pub(super) closed_inputs: HashSet<String>,
    pub(super) pending_closed: Vec<String>,
    /// Inputs the runtime told it (or will tell it, as it registers) are closed.
    pub(super) inputs_closed: HashSet<String>,
    /// When its `finish_grace_secs` ends: set once every other node ended and all its inputs
    /// closed.
    pub(super) finish_by: Option<Instant>,
    /// Its liveness as last seen, for `health_check_timeout`; `None` while it is not watched
    /// (`Run::health_watch`).
    pub(super) seen: Option<Seen>,
    /// nerve killed its process group, and why: its exit is not its own, and no reason to
    /// restart unless the kill says so (`Kill::may_restart`). Cleared when a process starts.
    pub(super) killed: Option<Kill>,
    /// When the current process was started.
    pub(super) spawned_at: Option<Instant>,
    /// Restarts counted (the back-off and the limit count these): in a row, in the current
    /// window or in the run, as the node's `RestartCount` says.
    pub(super) restarts_counted: u32,
    /// When the first restart of the current window was counted (`RestartCount::Window`).
    pub(super) window_start: Option<Instant>,
    /// Restarts during the whole run.
    pub(super) restarts: u32,
    /// Served by the process that runs the dataflow ([`RunOptions::helpers`](super::RunOptions::helpers)).
    pub(super) helper: bool,
    /// Its inputs fed by `nerve node connect`, or declared by a node added while the run
    /// ran, by input id.
    pub(super) connected: BTreeMap<String, Connection>,
    /// Areas of its inbox given to such inputs so far (see [`crate::plan::SPARE_INPUTS`]).
    pub(super) areas_used: usize,
    /// `nerve node remove` took it out of the graph: it is not restarted, and is killed at
    /// this moment if it is still running.
    pub(super) removed: Option<Instant>,
}

/// An input fed at run time: through the topic of output `output` of node `node`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Connection {
    pub(super) node: String,
    pub(super) output: String,
}

impl NodeRt {
    /// Node `id`, not started yet.
    pub(super) fn new(id: String, helper: bool) -> Self {
        Self {
            id,
            pid: None,
            registered: false,
            generation: 0,
            state: NodeState::Unconnected,
            closed_outputs: HashSet::new(),
            closed_inputs: HashSet::new(),
            pending_closed: Vec::new(),
            inputs_closed: HashSet::new(),
            finish_by: None,
            seen: None,
            killed: None,
            spawned_at: None,
            restarts_counted: 0,
            window_start: None,
            restarts: 0,
            helper,
            connected: BTreeMap::new(),
            areas_used: 0,
            removed: None,
        }
    }

    /// Whether it is gone for good.
    pub(super) fn exited(&self) -> bool {
        matches!(self.state, NodeState::Exited(_))
    }

    /// Whether it is registered on the run's socket.
    pub(super) fn connected(&self) -> bool {
        matches!(self.state, NodeState::Connected { .. })
    }

    /// Whether it is registered and said it is ready.
    pub(super) fn ready(&self) -> bool {
        matches!(self.state, NodeState::Connected { ready: true, .. })
    }

    /// When its restart is due, if one is scheduled.
    pub(super) fn restart_at(&self) -> Option<Instant> {
        match self.state {
            NodeState::Restarting { at, .. } => Some(at),
            _ => None,
        }
    }

    /// How it ended, once it has: its outcome for the report.
    pub(super) fn outcome(self) -> Outcome {
        match self.state {
            NodeState::Exited(outcome) => outcome,
            _ => Outcome::NotRun,
        }
    }

    /// What it is doing, in the words of `nerve list` (`started`: the run has started).
    pub(super) fn state_word(&self, started: bool) -> String {
        match &self.state {
            NodeState::Exited(Outcome::Finished) => "finished".to_owned(),
            NodeState::Exited(Outcome::Failed(how)) => format!("failed ({how})"),
            NodeState::Exited(Outcome::KilledAfterGrace) => "killed after the grace period".to_owned(),
            NodeState::Exited(Outcome::KilledOnInterrupt) => "killed at the second interrupt".to_owned(),
            NodeState::Exited(Outcome::NotRun) => "not run".to_owned(),
            NodeState::Exited(Outcome::Removed) => "removed".to_owned(),
            NodeState::Restarting { .. } => "restarting".to_owned(),
            NodeState::Unconnected if self.pid.is_none() => "waiting".to_owned(),
            NodeState::Connected { ready: true, .. } if started => "running".to_owned(),
            NodeState::Connected { ready: true, .. } => "ready".to_owned(),
            NodeState::Unconnected | NodeState::Connected { ready: false, .. } => "starting".to_owned(),
        }
    }

    /// After its process ended with `outcome` (at `now`), schedules its restart if `policy`
    /// calls for one and the limit of restarts in a row is not reached; returns the wait. The
    /// run's own reasons not to restart (a stop, a kill) are the caller's.
    pub(super) fn schedule_restart(
        &mut self,
        policy: &RestartSpec,
        outcome: &Outcome,
        now: Instant,
    ) -> Option<Duration> {
        if !policy.wants_restart(!matches!(outcome, Outcome::Finished)) {
            return None;
        }
        let counted = match policy.count {
            RestartCount::InARow => {
                if self.spawned_at.is_some_and(|t| now.saturating_duration_since(t) >= RestartSpec::STABLE_RUN) {
                    self.restarts_counted = 0;
                }
                "in a row".to_owned()
            }
            RestartCount::Window(window) => {
                let start = *self.window_start.get_or_insert(now);
                if now.saturating_duration_since(start) > window {
                    self.restarts_counted = 0;
                    self.window_start = Some(now);
                }
                format!("within {window:?}")
            }
            RestartCount::Run => "in this run".to_owned(),
        };
        let limit = match policy.max_restarts {
            u32::MAX => "no limit".to_owned(),
            n => format!("max_restarts: {n}"),
        };
        if self.restarts_counted >= policy.max_restarts {
            tracing::error!(
                node = %self.id,
                "not restarting: {} restart(s) {counted} already ({limit})",
                self.restarts_counted,
            );
            return None;
        }
        let wait = policy.delay_before(self.restarts_counted);
        self.restarts_counted += 1;
        tracing::warn!(
            node = %self.id,
            "restarting in {wait:?} (restart {} {counted}, {limit}, restart: {})",
            self.restarts_counted,
            policy.policy.as_str()
        );
        self.state = NodeState::Restarting { at: now + wait, previous: outcome.clone() };
        Some(wait)
    }
}

#[cfg(test)]
mod tests {
    use nerve_spec::RestartPolicy;

    use super::*;

    fn connected(ready: bool) -> NodeState {
        let (control, _) = UnixStream::pair().expect("a socket pair");
        NodeState::Connected { control, ready }
    }

    #[test]
    fn states_read_as_nerve_list_shows_them() {
        let mut by_hand = NodeRt::new("cam".into(), false);
        assert_eq!(by_hand.state_word(false), "waiting");
        by_hand.pid = Some(42);
        assert_eq!(by_hand.state_word(false), "starting");
        by_hand.state = connected(false);
        assert_eq!(by_hand.state_word(true), "starting");
        by_hand.state = connected(true);
        assert_eq!(by_hand.state_word(false), "ready");
        assert_eq!(by_hand.state_word(true), "running");
        by_hand.state = NodeState::Restarting { at: Instant::now(), previous: Outcome::Finished };
        assert_eq!(by_hand.state_word(true), "restarting");
        by_hand.state = NodeState::Exited(Outcome::Failed("exit code 3".into()));
        assert_eq!(by_hand.state_word(true), "failed (exit code 3)");
        assert_eq!(by_hand.outcome(), Outcome::Failed("exit code 3".into()));
    }

    #[test]
    fn restarts_back_off_up_to_the_limit_and_count_afresh_after_a_stable_run() {
        let policy = RestartSpec {
            policy: RestartPolicy::OnFailure,
            max_restarts: 2,
            delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(10),
            count: RestartCount::InARow,
        };
        let failed = Outcome::Failed("exit code 1".into());
        let start = Instant::now();
        let mut node = NodeRt::new("worker".into(), false);
        node.spawned_at = Some(start);
        assert_eq!(node.schedule_restart(&policy, &Outcome::Finished, start), None, "on_failure only");
        assert_eq!(node.schedule_restart(&policy, &failed, start), Some(Duration::from_millis(100)));
        assert_eq!(node.restart_at(), Some(start + Duration::from_millis(100)));
        assert_eq!(node.schedule_restart(&policy, &failed, start), Some(Duration::from_millis(200)));
        assert_eq!(node.schedule_restart(&policy, &failed, start), None, "two in a row is the limit");
        // A process that ran for a stable while starts the count afresh.
        let later = start + RestartSpec::STABLE_RUN;
        assert_eq!(node.schedule_restart(&policy, &failed, later), Some(Duration::from_millis(100)));
    }

    #[test]
    fn a_window_counts_the_restarts_within_it_and_a_run_counts_them_all() {
        let window = Duration::from_secs(300);
        let policy = RestartSpec {
            policy: RestartPolicy::Always,
            max_restarts: 2,
            delay: Duration::ZERO,
            max_delay: Duration::ZERO,
            count: RestartCount::Window(window),
        };
        let start = Instant::now();
        let mut node = NodeRt::new("worker".into(), false);
        node.spawned_at = Some(start);
        let at = |secs| start + Duration::from_secs(secs);
        assert_eq!(node.schedule_restart(&policy, &Outcome::Finished, at(0)), Some(Duration::ZERO));
        // A stable run does not start the count again: only the window's end does.
        node.spawned_at = Some(at(100));
        assert_eq!(node.schedule_restart(&policy, &Outcome::Finished, at(200)), Some(Duration::ZERO));
        assert_eq!(node.schedule_restart(&policy, &Outcome::Finished, at(300)), None, "two within 300 s");
        assert_eq!(node.schedule_restart(&policy, &Outcome::Finished, at(301)), Some(Duration::ZERO));

        let run = RestartSpec { count: RestartCount::Run, ..policy };
        let mut node = NodeRt::new("worker".into(), false);
        node.spawned_at = Some(start);
        assert!(node.schedule_restart(&run, &Outcome::Finished, at(0)).is_some());
        node.spawned_at = Some(at(1000));
        assert!(node.schedule_restart(&run, &Outcome::Finished, at(2000)).is_some());
        assert_eq!(node.schedule_restart(&run, &Outcome::Finished, at(1_000_000)), None, "two in the run");
    }

    #[test]
    fn phases_say_whether_the_run_started() {
        let since = Instant::now();
        assert!(!Phase::Starting { go: true }.started());
        assert!(Phase::Running.started());
        assert!(!Phase::Stopping { since, started: false, killed: false }.started());
        assert!(Phase::Stopping { since, started: true, killed: true }.started());
        assert_eq!(Phase::Running.stopping_since(), None);
        assert_eq!(Phase::Stopping { since, started: true, killed: false }.stopping_since(), Some(since));
    }
}

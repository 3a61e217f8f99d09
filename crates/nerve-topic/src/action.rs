//! Actions: a goal that runs for a while, reports progress, ends with a result, and can be
//! canceled on the way, by name, from any process of any host.
//!
//! An [`ActionServer`] decides whether to accept each goal, then runs it on one of its worker
//! threads, where the execute function publishes feedback and watches for a cancel request.
//! An [`ActionClient`] sends goals; each accepted goal gives a [`GoalHandle`] to follow its
//! [status](GoalStatus) and feedback, wait for its result, or cancel it. Goals, feedback and
//! results are messages like a topic's (an Arrow array and metadata), carried by the Zenoh
//! session of the process like [services](crate::service), so an action works the same in
//! one process, between processes and between hosts.
//!
//! ```no_run
//! use std::time::Duration;
//! use nerve_topic::action::{ActionClient, ActionServer, ActionOptions};
//! use nerve_topic::arrow_array::{Array, Int64Array};
//! use nerve_topic::Parameters;
//!
//! let _server = ActionServer::new("count", ActionOptions::default(), |_goal| Ok(()), |goal| {
//!     for i in 0..10_i64 {
//!         if goal.wait_cancel(Duration::from_millis(100)) {
//!             break;
//!         }
//!         goal.publish_feedback(&Int64Array::from(vec![i]).into_data(), &Parameters::new())
//!             .map_err(|e| e.to_string())?;
//!     }
//!     Ok((Int64Array::from(vec![10]).into_data(), Parameters::new()))
//! })?;
//! let client = ActionClient::new("count", ActionOptions::default())?;
//! let goal = client.send_goal(&Int64Array::from(vec![10]).into_data(), &Parameters::new(), Duration::from_secs(1))?;
//! while let Some(feedback) = goal.feedback(Duration::from_secs(5)) {
//!     println!("progress {:?}", feedback.data);
//! }
//! let result = goal.result(Duration::from_secs(5))?;
//! println!("{} with {:?}", result.status, result.data);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Key expressions (`<goal>` is a UUID the client draws, so it can listen before it sends):
//!
//! ```text
//! nerve/d<domain>/act/goal/<goal>/<action>        the goal (a query answered by one server)
//! nerve/d<domain>/act/cancel/<goal>/<action>      cancel request (a query; the goal's server answers)
//! nerve/d<domain>/act/result/<goal>/<action>      the result (a query answered when the goal ends)
//! nerve/d<domain>/act/feedback/<goal>/<action>    feedback (publications)
//! nerve/d<domain>/act/status/<goal>/<action>      status changes (publications)
//! nerve/act/d<domain>/h<host>/e<pid>x<id>/<action>  liveliness token of one server
//! ```
//!
//! A goal never hangs: its result query ends as soon as its server's session goes, which ends
//! the goal [`GoalStatus::Failed`] on the client. Feedback is sent without waiting for slow
//! links or slow clients (those lose feedback, never the result), so it never holds up the
//! server.

mod client;
mod server;

use std::time::Duration;

use arrow_array::ArrayRef;
use nerve_shm::codec::Metadata;

pub use client::{ActionClient, GoalHandle, GoalResult};
pub use server::{ActionServer, ExecuteResult, GoalRequest, ServerGoal};

use crate::error::TopicError;
use crate::network::End;
use crate::query;

/// Options of an action server or client: the domain, and the threads that run goals (goals
/// beyond them wait, accepted, for a free thread).
pub type ActionOptions = crate::service::ServiceOptions;

/// What can go wrong with an action or one of its goals.
#[derive(Debug, thiserror::Error)]
pub enum ActionError {
    /// Setting up failed (a bad name, no network session), or the network failed.
    #[error(transparent)]
    Setup(#[from] TopicError),
    /// No process serves this action now.
    #[error("no server for action `{action}` (is the process that serves it running, with the same domain?)")]
    NoServer {
        /// Action name.
        action: String,
    },
    /// The server did not answer, or the goal did not end, in time.
    #[error("action `{action}`: no answer within {timeout:?}")]
    Timeout {
        /// Action name.
        action: String,
        /// The time allowed.
        timeout: Duration,
    },
    /// The server went away before it answered, or before the goal ended.
    #[error("the server of action `{action}` went away before the goal ended")]
    ServerGone {
        /// Action name.
        action: String,
    },
    /// The server refused the goal.
    #[error("action `{action}` rejected the goal: {reason}")]
    Rejected {
        /// Action name.
        action: String,
        /// What the server's accept function said.
        reason: String,
    },
    /// The server's execute function failed the goal.
    #[error("action `{action}` aborted the goal: {reason}")]
    Aborted {
        /// Action name.
        action: String,
        /// What the execute function said.
        reason: String,
    },
    /// A goal, feedback or result that is not a nerve message, or data nerve cannot carry.
    #[error("action `{action}`: {what}")]
    Malformed {
        /// Action name.
        action: String,
        /// What was wrong.
        what: String,
    },
}

/// Where a goal stands, as its client sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoalStatus {
    /// The server accepted the goal; it waits for a free worker.
    Accepted,
    /// The server's execute function is running it.
    Executing,
    /// The server took a cancel request; the goal has not ended yet.
    Canceling,
    /// Ended: the execute function returned its result.
    Succeeded,
    /// Ended: canceled on request (the execute function's result comes with it).
    Canceled,
    /// Ended: the execute function failed, for this reason.
    Aborted(String),
    /// Ended: the goal was lost (its server went away), for this reason.
    Failed(String),
}

impl GoalStatus {
    /// Whether the goal has ended.
    #[must_use]
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Succeeded | Self::Canceled | Self::Aborted(_) | Self::Failed(_))
    }

    /// The status's name: `accepted`, `executing`, `canceling`, `succeeded`, `canceled`,
    /// `aborted` or `failed`.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Accepted => "accepted",
            Self::Executing => "executing",
            Self::Canceling => "canceling",
            Self::Succeeded => "succeeded",
            Self::Canceled => "canceled",
            Self::Aborted(_) => "aborted",
            Self::Failed(_) => "failed",
        }
    }

    /// The reason of an aborted or failed goal.
    #[must_use]
    pub fn reason(&self) -> Option<&str> {
        match self {
            Self::Aborted(reason) | Self::Failed(reason) => Some(reason),
            _ => None,
        }
    }

    /// Order of the states a goal goes through: it only ever moves forward.
    fn rank(&self) -> u8 {
        match self {
            Self::Accepted => 0,
            Self::Executing => 1,
            Self::Canceling => 2,
            _ => 3,
        }
    }
}

impl std::fmt::Display for GoalStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.reason() {
            Some(reason) => write!(f, "{} ({reason})", self.name()),
            None => f.write_str(self.name()),
        }
    }
}

/// One feedback message of a goal.
#[derive(Debug, Clone)]
pub struct Feedback {
    /// The server's send stamp and parameters.
    pub metadata: Metadata,
    /// The feedback data.
    pub data: ArrayRef,
}

/// What a key expression of one goal is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    Goal,
    Cancel,
    Result,
    Feedback,
    Status,
}

impl Verb {
    fn chunk(self) -> &'static str {
        match self {
            Self::Goal => "goal",
            Self::Cancel => "cancel",
            Self::Result => "result",
            Self::Feedback => "feedback",
            Self::Status => "status",
        }
    }
}

/// `nerve/d<domain>/act/<verb>/<goal>/<action>`; `goal` may be `*` (a server's queryables).
fn key(domain: u32, verb: Verb, goal: &str, action: &str) -> String {
    format!("nerve/d{domain}/act/{}/{goal}/{action}", verb.chunk())
}

/// The verb and goal of a key made by [`key`].
fn verb_and_goal(key: &str) -> Option<(&str, &str)> {
    let mut chunks = key.split('/').skip(3);
    Some((chunks.next()?, chunks.next()?))
}

/// Every action server reachable now in `domain`: (host, action key; a run's action's key
/// names the run, see [`crate::run_scope::split_key`]).
///
/// # Errors
/// When the network cannot be asked.
pub fn list(domain: u32) -> Result<Vec<(String, String)>, TopicError> {
    query::list(End::ActionServer, domain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_put_the_goal_before_the_name_so_any_name_parses() {
        let k = key(3, Verb::Feedback, "0190-ab", "arm/move/goal");
        assert_eq!(k, "nerve/d3/act/feedback/0190-ab/arm/move/goal");
        assert_eq!(verb_and_goal(&k), Some(("feedback", "0190-ab")));
    }

    #[test]
    fn statuses_only_move_forward_and_name_their_reason() {
        assert!(GoalStatus::Accepted.rank() < GoalStatus::Executing.rank());
        assert!(GoalStatus::Canceling.rank() < GoalStatus::Canceled.rank());
        assert!(!GoalStatus::Canceling.is_terminal() && GoalStatus::Canceled.is_terminal());
        assert_eq!(GoalStatus::Aborted("no path".into()).to_string(), "aborted (no path)");
        assert_eq!(GoalStatus::Succeeded.to_string(), "succeeded");
    }
}

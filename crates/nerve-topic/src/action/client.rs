//! The client side of an action: sending goals and following them.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use arrow_array::ArrayRef;
use arrow_data::ArrayData;
use nerve_shm::codec::{Metadata, Parameters, encode};
use zenoh::Wait;
use zenoh::query::QueryTarget;
use zenoh::sample::Sample;

use super::{ActionError, ActionOptions, Feedback, GoalStatus, Verb, key, verb_and_goal};
use crate::error::TopicError;
use crate::network::{self, End, Network};
use crate::query::{self, ServerCount, Unanswered};
use crate::run_scope::{Resolved, resolve};
use nerve_shm::sync::lock;

/// Feedback messages a goal handle keeps for a reader that lags; past it the oldest go.
const FEEDBACK_KEPT: usize = 64;
/// How long one result query stays open; a goal that runs longer is asked again.
const RESULT_POLL: Duration = Duration::from_secs(600);
/// How often the thread waiting for a result looks up to see whether its handle is gone.
const ABANDON_CHECK: Duration = Duration::from_millis(200);
/// How long a cancel request waits for the server's answer.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(10);

/// Sends goals to one action.
pub struct ActionClient {
    action: Arc<str>,
    /// What the action's key expressions end with ([`crate::run_scope::Resolved::key`]).
    key: Arc<str>,
    domain: u32,
    servers: ServerCount,
    net: Arc<Network>,
}

impl std::fmt::Debug for ActionClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActionClient").field("action", &self.action).finish_non_exhaustive()
    }
}

impl ActionClient {
    /// A client of `action` (only `options.domain` matters to a client).
    ///
    /// # Errors
    /// A bad name, or no network session.
    pub fn new(action: &str, options: ActionOptions) -> Result<Self, TopicError> {
        let Resolved { name, key } = resolve(action, &options.run)?;
        let net = network::network()?;
        let servers = ServerCount::watch(&net, End::ActionServer, options.domain, &key)?;
        Ok(Self { action: name.into(), key: key.into(), domain: options.domain, servers, net })
    }

    /// The action's name (canonical).
    #[must_use]
    pub fn action(&self) -> &str {
        &self.action
    }

    /// Servers of this action reachable now.
    #[must_use]
    pub fn server_count(&self) -> usize {
        self.servers.get()
    }

    /// Waits up to `timeout` until a server of this action is reachable; returns whether one
    /// is (as ROS 2's `wait_for_server`). Woken when a server appears, it never polls. A goal
    /// sent once this returned `true` reaches a server, unless that server goes away meanwhile.
    #[must_use]
    pub fn wait_for_server(&self, timeout: Duration) -> bool {
        self.servers.wait_for_one(timeout)
    }

    /// Sends a goal of `data` with `parameters`, and waits up to `timeout` for a server to
    /// accept it; the accepted goal's handle.
    ///
    /// # Errors
    /// [`ActionError::Rejected`] with the server's reason; [`ActionError::NoServer`] at once when
    /// nobody serves the action, [`ActionError::ServerGone`], [`ActionError::Timeout`].
    pub fn send_goal(
        &self,
        data: &ArrayData,
        parameters: &Parameters,
        timeout: Duration,
    ) -> Result<GoalHandle, ActionError> {
        let action = self.action.to_string();
        let request = encode(data, parameters).map_err(|e| ActionError::Malformed {
            action: action.clone(),
            what: format!("cannot send the goal: {e}"),
        })?;
        // The client names the goal, so it listens for the goal's feedback before anyone sends any.
        let id: Arc<str> = uuid::Uuid::now_v7().to_string().into();
        let goal = Arc::new(Goal::new(id.clone(), self.action.clone()));
        let updates = self.listen(&goal)?;
        let had_servers = self.server_count() > 0;
        let goal_key = key(self.domain, Verb::Goal, &id, &self.key);
        query::ask(&self.net, &goal_key, Some(request), QueryTarget::BestMatching, timeout, had_servers)
            .map_err(|e| unanswered(e, action, timeout))?;
        let (waiting, net) = (goal.clone(), self.net.clone());
        let result_key = key(self.domain, Verb::Result, &id, &self.key);
        std::thread::Builder::new()
            .name(format!("nerve-goal-{}", self.action))
            .spawn(move || wait_for_result(&waiting, &net, &result_key))
            .map_err(TopicError::Thread)?;
        Ok(GoalHandle {
            goal,
            cancel_key: key(self.domain, Verb::Cancel, &id, &self.key),
            net: self.net.clone(),
            _updates: updates,
        })
    }

    /// Subscribes to the feedback and status publications of `goal`.
    fn listen(&self, goal: &Arc<Goal>) -> Result<zenoh::pubsub::Subscriber<()>, ActionError> {
        let goal_ref = goal.clone();
        self.net
            .session
            .declare_subscriber(format!("nerve/d{}/act/*/{}/{}", self.domain, goal.id, self.key))
            .callback(move |sample| goal_ref.update(&sample))
            .wait()
            .map_err(|e| {
                TopicError::Network(format!("cannot follow the goals of action `{}`: {e}", goal.action)).into()
            })
    }
}

/// The error a query of `action` that got no answer gives.
fn unanswered(e: Unanswered, action: String, timeout: Duration) -> ActionError {
    match e {
        Unanswered::NoServer => ActionError::NoServer { action },
        Unanswered::Gone => ActionError::ServerGone { action },
        Unanswered::Timeout => ActionError::Timeout { action, timeout },
        Unanswered::Refused(reason) => ActionError::Rejected { action, reason },
        Unanswered::Network(e) => ActionError::Setup(TopicError::Network(e)),
    }
}

/// Asks for the result of a goal until it comes or the goal is lost, and records it.
fn wait_for_result(goal: &Goal, net: &Network, key: &str) {
    loop {
        let started = Instant::now();
        let replies = match query::start(net, key, None, QueryTarget::All, RESULT_POLL) {
            Ok(replies) => replies,
            Err(e) => return goal.end(GoalStatus::Failed(format!("cannot ask for the result: {e:?}")), None),
        };
        let reply = loop {
            if goal.abandoned.load(Ordering::Acquire) {
                return;
            }
            match replies.recv_timeout(ABANDON_CHECK) {
                Ok(Some(reply)) => break Some(reply),
                Ok(None) => {}
                // The query ended: every server it reached has answered or gone.
                Err(_) => break None,
            }
        };
        match query::first_reply(reply, started, RESULT_POLL, true) {
            Ok(sample) => return goal.finish(&sample),
            Err(Unanswered::Refused(reason)) => return goal.end(GoalStatus::Aborted(reason), None),
            // Still running: ask again.
            Err(Unanswered::Timeout) => {}
            Err(Unanswered::Gone | Unanswered::NoServer) => {
                let reason = format!("the server of action `{}` went away before the goal ended", goal.action);
                return goal.end(GoalStatus::Failed(reason), None);
            }
            Err(Unanswered::Network(e)) => return goal.end(GoalStatus::Failed(format!("network: {e}")), None),
        }
    }
}

/// What a goal handle and the threads feeding it share.
struct Goal {
    id: Arc<str>,
    action: Arc<str>,
    state: Mutex<State>,
    changed: Condvar,
    /// Set when the handle is dropped: nobody waits for the result any more.
    abandoned: AtomicBool,
}

struct State {
    status: GoalStatus,
    /// The result, once the goal has succeeded or been canceled.
    result: Option<(Metadata, ArrayRef)>,
    feedback: VecDeque<Feedback>,
    feedback_dropped: u64,
}

impl Goal {
    fn new(id: Arc<str>, action: Arc<str>) -> Self {
        let state =
            State { status: GoalStatus::Accepted, result: None, feedback: VecDeque::new(), feedback_dropped: 0 };
        Self { id, action, state: Mutex::new(state), changed: Condvar::new(), abandoned: AtomicBool::new(false) }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Moves the goal to `status` unless it is already there or further on.
    fn advance(&self, status: GoalStatus, result: Option<(Metadata, ArrayRef)>) {
        let mut state = self.state();
        if status.rank() > state.status.rank() {
            state.status = status;
            state.result = result;
            drop(state);
            self.changed.notify_all();
        }
    }

    fn end(&self, status: GoalStatus, result: Option<(Metadata, ArrayRef)>) {
        tracing::debug!(action = %self.action, goal = %self.id, %status, "goal ended");
        self.advance(status, result);
    }

    /// Records the result a server answered with.
    fn finish(&self, sample: &Sample) {
        let canceled =
            sample.attachment().and_then(|a| a.try_to_string().ok()).as_deref() == Some(GoalStatus::Canceled.name());
        match query::decode(sample.payload()) {
            Ok(result) => {
                self.end(if canceled { GoalStatus::Canceled } else { GoalStatus::Succeeded }, Some(result));
            }
            Err(e) => self.end(GoalStatus::Failed(format!("the result is not a nerve message: {e}")), None),
        }
    }

    /// A feedback or status publication of the goal.
    fn update(&self, sample: &Sample) {
        let Some((verb, _)) = verb_and_goal(sample.key_expr().as_str()) else { return };
        if verb == Verb::Status.chunk() {
            if sample.payload().try_to_string().ok().as_deref() == Some(GoalStatus::Executing.name()) {
                self.advance(GoalStatus::Executing, None);
            }
            return;
        }
        match query::decode(sample.payload()) {
            Ok((metadata, data)) => {
                let mut state = self.state();
                if state.feedback.len() == FEEDBACK_KEPT {
                    state.feedback.pop_front();
                    state.feedback_dropped += 1;
                }
                state.feedback.push_back(Feedback { metadata, data });
                drop(state);
                self.changed.notify_all();
            }
            Err(e) => {
                tracing::warn!(action = %self.action, goal = %self.id, error = %e, "feedback that is not a nerve message")
            }
        }
    }
}

/// The result of a goal that succeeded or was canceled.
#[derive(Debug, Clone)]
pub struct GoalResult {
    /// [`GoalStatus::Succeeded`] or [`GoalStatus::Canceled`].
    pub status: GoalStatus,
    /// The server's send stamp and parameters.
    pub metadata: Metadata,
    /// The result data.
    pub data: ArrayRef,
}

/// An accepted goal, as its client follows it.
///
/// Dropping the handle stops following the goal; the goal itself runs on (cancel it first to
/// stop it).
pub struct GoalHandle {
    goal: Arc<Goal>,
    cancel_key: String,
    net: Arc<Network>,
    _updates: zenoh::pubsub::Subscriber<()>,
}

impl std::fmt::Debug for GoalHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GoalHandle").field("action", &self.goal.action).field("goal", &self.goal.id).finish()
    }
}

impl Drop for GoalHandle {
    fn drop(&mut self) {
        self.goal.abandoned.store(true, Ordering::Release);
    }
}

impl GoalHandle {
    /// The goal's id.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.goal.id
    }

    /// The action's name.
    #[must_use]
    pub fn action(&self) -> &str {
        &self.goal.action
    }

    /// Where the goal stands now.
    #[must_use]
    pub fn status(&self) -> GoalStatus {
        self.goal.state().status.clone()
    }

    /// Feedback messages lost because this handle's reader lagged.
    #[must_use]
    pub fn feedback_dropped(&self) -> u64 {
        self.goal.state().feedback_dropped
    }

    /// The next feedback message, waiting up to `timeout`; `None` on timeout, or once the goal
    /// has ended and every feedback message that came has been read.
    #[must_use]
    pub fn feedback(&self, timeout: Duration) -> Option<Feedback> {
        let state = self.goal.state();
        let (mut state, _) = self
            .goal
            .changed
            .wait_timeout_while(state, timeout, |s| s.feedback.is_empty() && !s.status.is_terminal())
            .unwrap_or_else(|e| e.into_inner());
        state.feedback.pop_front()
    }

    /// The next feedback message if one has come, without waiting.
    #[must_use]
    pub fn try_feedback(&self) -> Option<Feedback> {
        self.goal.state().feedback.pop_front()
    }

    /// Waits up to `timeout` for the goal to end; its result if it succeeded or was canceled.
    ///
    /// # Errors
    /// [`ActionError::Aborted`] with the execute function's reason, [`ActionError::ServerGone`]
    /// when the goal was lost, [`ActionError::Timeout`] when it has not ended in time.
    pub fn result(&self, timeout: Duration) -> Result<GoalResult, ActionError> {
        let state = self.goal.state();
        let (state, _) = self
            .goal
            .changed
            .wait_timeout_while(state, timeout, |s| !s.status.is_terminal())
            .unwrap_or_else(|e| e.into_inner());
        let action = self.goal.action.to_string();
        match (&state.status, &state.result) {
            (GoalStatus::Aborted(reason), _) => Err(ActionError::Aborted { action, reason: reason.clone() }),
            (GoalStatus::Failed(_), _) => Err(ActionError::ServerGone { action }),
            (status, Some((metadata, data))) if status.is_terminal() => {
                Ok(GoalResult { status: status.clone(), metadata: metadata.clone(), data: data.clone() })
            }
            _ => Err(ActionError::Timeout { action, timeout }),
        }
    }

    /// Asks the goal's server to cancel the goal: `true` if the server took the request (the
    /// goal then ends [`GoalStatus::Canceled`] when its execute function returns), `false` if
    /// the goal had already ended.
    ///
    /// # Errors
    /// [`ActionError::ServerGone`] when the goal's server is no longer there,
    /// [`ActionError::Timeout`] when it does not answer in time.
    pub fn cancel(&self) -> Result<bool, ActionError> {
        if self.status().is_terminal() {
            return Ok(false);
        }
        match query::ask(&self.net, &self.cancel_key, None, QueryTarget::All, CANCEL_TIMEOUT, true) {
            Ok(_) => {
                self.goal.advance(GoalStatus::Canceling, None);
                Ok(true)
            }
            Err(Unanswered::Refused(_)) => Ok(false),
            Err(_) if self.status().is_terminal() => Ok(false),
            Err(e) => Err(unanswered(e, self.goal.action.to_string(), CANCEL_TIMEOUT)),
        }
    }
}

//! The server side of an action: accepting goals, running them, keeping their outcomes.

use std::collections::{HashMap, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use arrow_array::ArrayRef;
use arrow_data::ArrayData;
use nerve_shm::codec::{Metadata, Parameters, encode};
use zenoh::Wait;
use zenoh::bytes::ZBytes;
use zenoh::qos::CongestionControl;
use zenoh::query::Query;

use super::{ActionError, ActionOptions, GoalStatus, Verb, key, verb_and_goal};
use crate::error::{Refusal, TopicError};
use crate::network::{self, End, Network};
use crate::query::{self, Queue, Workers};
use crate::run_scope::resolve;
use nerve_shm::sync::lock;

/// Outcomes of ended goals a server keeps for result queries that arrive after the end.
const ENDED_KEPT: usize = 1024;

/// What an execute function returns: the result's data and parameters, or why the goal failed
/// (it then ends [`GoalStatus::Aborted`] with that reason).
pub type ExecuteResult = Result<(ArrayData, Parameters), Refusal>;

/// A goal as the server's accept function sees it.
#[derive(Debug, Clone)]
pub struct GoalRequest {
    /// Action name.
    pub action: Arc<str>,
    /// The goal's id (a UUID the client drew).
    pub goal: Arc<str>,
    /// The client's send stamp and parameters.
    pub metadata: Metadata,
    /// The goal's data.
    pub data: ArrayRef,
}

/// A goal being executed: what the execute function is given.
#[derive(Clone)]
pub struct ServerGoal {
    /// The goal as the client sent it.
    pub request: GoalRequest,
    cancel: Arc<Signal>,
    feedback_key: Arc<str>,
    net: Arc<Network>,
}

impl std::fmt::Debug for ServerGoal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerGoal").field("request", &self.request).finish_non_exhaustive()
    }
}

impl ServerGoal {
    /// The goal's id.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.request.goal
    }

    /// Sends `data` with `parameters` to the client as feedback.
    ///
    /// Never waits for the client: a slow link or client loses feedback rather than holding
    /// up the goal.
    ///
    /// # Errors
    /// Data nerve cannot carry, or a network failure.
    pub fn publish_feedback(&self, data: &ArrayData, parameters: &Parameters) -> Result<(), ActionError> {
        let action = || self.request.action.to_string();
        let message = encode(data, parameters)
            .map_err(|e| ActionError::Malformed { action: action(), what: format!("cannot send feedback: {e}") })?;
        self.net
            .session
            .put(&*self.feedback_key, message)
            .congestion_control(CongestionControl::Drop)
            .wait()
            .map_err(|e| TopicError::Network(format!("cannot send feedback of action `{}`: {e}", action())).into())
    }

    /// Whether a client asked to cancel the goal.
    #[must_use]
    pub fn is_cancel_requested(&self) -> bool {
        self.cancel.is_set()
    }

    /// Waits up to `timeout` for a cancel request; whether one came. A goal's loop can use it
    /// as its sleep, so that it reacts to a cancel at once.
    #[must_use]
    pub fn wait_cancel(&self, timeout: Duration) -> bool {
        self.cancel.wait(timeout)
    }
}

/// A flag one thread sets and others wait for.
#[derive(Debug, Default)]
struct Signal {
    set: Mutex<bool>,
    changed: Condvar,
}

impl Signal {
    fn raise(&self) {
        *lock(&self.set) = true;
        self.changed.notify_all();
    }

    fn is_set(&self) -> bool {
        *lock(&self.set)
    }

    fn wait(&self, timeout: Duration) -> bool {
        let set = lock(&self.set);
        let (set, _) = self.changed.wait_timeout_while(set, timeout, |set| !*set).unwrap_or_else(|e| e.into_inner());
        *set
    }
}

/// How a goal ended, as its result query is answered.
#[derive(Clone)]
enum Ended {
    /// The execute function returned this (encoded) result.
    Done { canceled: bool, message: ZBytes },
    /// The execute function failed.
    Aborted(String),
}

impl Ended {
    fn status(&self) -> GoalStatus {
        match self {
            Self::Done { canceled: true, .. } => GoalStatus::Canceled,
            Self::Done { canceled: false, .. } => GoalStatus::Succeeded,
            Self::Aborted(reason) => GoalStatus::Aborted(reason.clone()),
        }
    }

    fn answer(&self, query: &Query, action: &str) {
        match self {
            Self::Done { canceled, message } => {
                let status = if *canceled { GoalStatus::Canceled } else { GoalStatus::Succeeded };
                let sent = query.reply(query.key_expr().clone(), message.clone()).attachment(status.name()).wait();
                if let Err(e) = sent {
                    tracing::debug!(%action, error = %e, "cannot send a goal's result (the client may be gone)");
                }
            }
            Self::Aborted(reason) => query::answer(query, Err(reason.clone()), action),
        }
    }
}

/// A goal between acceptance and its end.
struct Running {
    cancel: Arc<Signal>,
    /// Result queries to answer when the goal ends.
    waiting: Vec<Query>,
}

/// The goals of one server.
#[derive(Default)]
struct Table {
    running: HashMap<Arc<str>, Running>,
    ended: HashMap<Arc<str>, Ended>,
    /// `ended` in the order the goals ended, to forget the oldest first.
    order: VecDeque<Arc<str>>,
}

impl Table {
    fn knows(&self, goal: &str) -> bool {
        self.running.contains_key(goal) || self.ended.contains_key(goal)
    }

    /// Moves `goal` to the ended goals; the result queries waiting for it.
    fn end(&mut self, goal: &Arc<str>, ended: Ended) -> Vec<Query> {
        let waiting = self.running.remove(goal).map(|r| r.waiting).unwrap_or_default();
        if self.order.len() == ENDED_KEPT
            && let Some(oldest) = self.order.pop_front()
        {
            self.ended.remove(&oldest);
        }
        self.order.push_back(goal.clone());
        self.ended.insert(goal.clone(), ended);
        waiting
    }
}

/// A query to one of the server's queryables.
enum Incoming {
    Goal(Query),
    Cancel(Query),
    Result(Query),
}

/// An accepted goal on its way to a worker.
struct Accepted {
    request: GoalRequest,
    cancel: Arc<Signal>,
}

/// What the server's threads share.
struct Shared {
    action: Arc<str>,
    /// What the action's key expressions end with ([`crate::run_scope::Resolved::key`]).
    key: Arc<str>,
    domain: u32,
    table: Mutex<Table>,
    net: Arc<Network>,
}

/// Serves one action until dropped.
///
/// Dropping it stops new goals, cancel requests and result queries from reaching it, requests
/// the cancel of every goal it runs, and waits for those goals to end, unless it is dropped by
/// an execute function itself. So do not drop it while holding what a goal waits for.
pub struct ActionServer {
    shared: Arc<Shared>,
    queryables: Option<[zenoh::query::Queryable<()>; 3]>,
    _token: zenoh::liveliness::LivelinessToken,
    intake: Workers<Incoming>,
    goals: Workers<Accepted>,
}

impl std::fmt::Debug for ActionServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActionServer").field("action", &self.shared.action).finish_non_exhaustive()
    }
}

impl ActionServer {
    /// Serves `action`: `accept` decides on each goal (`Err(reason)` rejects it), and `execute`
    /// runs each accepted goal on one of `options.workers` threads.
    ///
    /// A goal whose cancel was requested ends [`GoalStatus::Canceled`] when `execute` returns
    /// `Ok`, with the result it returned; `Err(reason)` (or a panic) ends it
    /// [`GoalStatus::Aborted`]. `accept` runs on one thread for all goals: keep it quick.
    ///
    /// # Errors
    /// A bad name, zero workers, or no network session.
    pub fn new(
        action: &str,
        options: ActionOptions,
        accept: impl Fn(&GoalRequest) -> Result<(), Refusal> + Send + Sync + 'static,
        execute: impl Fn(ServerGoal) -> ExecuteResult + Send + Sync + 'static,
    ) -> Result<Self, TopicError> {
        let resolved = resolve(action, &options.run)?;
        let (action, name_key): (Arc<str>, Arc<str>) = (resolved.name.into(), resolved.key.into());
        let net = network::network()?;
        let shared = Arc::new(Shared {
            action: action.clone(),
            key: name_key.clone(),
            domain: options.domain,
            table: Mutex::default(),
            net: net.clone(),
        });
        let running = shared.clone();
        let goals = Workers::start(options.workers, &format!("nerve-act-{action}"), move |goal: Accepted| {
            running.execute(goal, &execute);
        })?;
        // One thread takes every query, so the table sees goals, cancels and result queries in
        // the order they came; none of it runs on Zenoh's threads.
        let (taking, to_goals) = (shared.clone(), goals.queue());
        let intake = Workers::start(1, &format!("nerve-act-{action}-in"), move |incoming: Incoming| {
            taking.take(incoming, &accept, &to_goals);
        })?;
        let declare = |verb: Verb, wrap: fn(Query) -> Incoming| {
            let (queue, what) = (intake.queue(), action.clone());
            net.session
                .declare_queryable(key(options.domain, verb, "*", &name_key))
                .callback(move |query| queue.hand(wrap(query), &what))
                .wait()
                .map_err(|e| TopicError::Network(format!("cannot serve action `{action}`: {e}")))
        };
        let queryables = [
            declare(Verb::Goal, Incoming::Goal)?,
            declare(Verb::Cancel, Incoming::Cancel)?,
            declare(Verb::Result, Incoming::Result)?,
        ];
        let token = network::announce(&net, End::ActionServer, options.domain, query::server_id(), &name_key)?;
        Ok(Self { shared, queryables: Some(queryables), _token: token, intake, goals })
    }

    /// The action's name (canonical).
    #[must_use]
    pub fn action(&self) -> &str {
        &self.shared.action
    }
}

impl Drop for ActionServer {
    fn drop(&mut self) {
        // In this order, so no goal starts after the cancels went out.
        drop(self.queryables.take());
        self.intake.close();
        for running in lock(&self.shared.table).running.values() {
            running.cancel.raise();
        }
        self.goals.close();
    }
}

impl Shared {
    /// Handles one query to the server's queryables.
    fn take(
        &self,
        incoming: Incoming,
        accept: &dyn Fn(&GoalRequest) -> Result<(), Refusal>,
        workers: &Queue<Accepted>,
    ) {
        let (Incoming::Goal(query) | Incoming::Cancel(query) | Incoming::Result(query)) = &incoming;
        let Some((_, goal)) = verb_and_goal(query.key_expr().as_str()) else {
            tracing::debug!(action = %self.action, key = %query.key_expr(), "a query without a goal id");
            return;
        };
        let goal: Arc<str> = goal.into();
        match incoming {
            Incoming::Goal(query) => self.consider(&query, goal, accept, workers),
            Incoming::Cancel(query) => self.cancel(&query, &goal),
            Incoming::Result(query) => self.result(query, &goal),
        }
    }

    /// Raises the cancel signal of a running goal. A goal this server never had is another
    /// server's to answer for: no reply.
    fn cancel(&self, query: &Query, goal: &Arc<str>) {
        let table = lock(&self.table);
        let answer = if let Some(running) = table.running.get(goal) {
            running.cancel.raise();
            Ok(ZBytes::default())
        } else if let Some(ended) = table.ended.get(goal) {
            Err(format!("goal {goal} already ended {}", ended.status()))
        } else {
            return;
        };
        drop(table);
        query::answer(query, answer, &self.action);
    }

    /// Answers a result query now if the goal has ended, or keeps it until the goal ends.
    fn result(&self, query: Query, goal: &Arc<str>) {
        let mut table = lock(&self.table);
        if let Some(running) = table.running.get_mut(goal) {
            running.waiting.push(query);
        } else if let Some(ended) = table.ended.get(goal).cloned() {
            drop(table);
            ended.answer(&query, &self.action);
        }
    }

    /// Accepts or rejects a goal; an accepted goal goes to the workers.
    fn consider(
        &self,
        query: &Query,
        goal: Arc<str>,
        accept: &dyn Fn(&GoalRequest) -> Result<(), Refusal>,
        workers: &Queue<Accepted>,
    ) {
        let request = match query.payload().map(query::decode) {
            None => Err("the goal carries no message".to_owned()),
            Some(Err(e)) => Err(format!("the goal is not a nerve message: {e}")),
            Some(Ok((metadata, data))) => Ok(GoalRequest { action: self.action.clone(), goal, metadata, data }),
        };
        let verdict = request.and_then(|request| {
            if lock(&self.table).knows(&request.goal) {
                return Err(format!("goal id {} is already in use", request.goal));
            }
            std::panic::catch_unwind(AssertUnwindSafe(|| accept(&request)))
                .unwrap_or_else(|_| Err("the accept function panicked".into()))
                .map(|()| request)
                .map_err(|refusal| refusal.reason)
        });
        match verdict {
            Ok(request) => {
                let cancel = Arc::new(Signal::default());
                let running = Running { cancel: cancel.clone(), waiting: Vec::new() };
                // In the table before the client hears of it: its cancel and result queries follow.
                lock(&self.table).running.insert(request.goal.clone(), running);
                query::answer(query, Ok(ZBytes::default()), &self.action);
                workers.hand(Accepted { request, cancel }, &self.action);
            }
            Err(reason) => query::answer(query, Err(reason), &self.action),
        }
    }

    /// Runs one goal to its end and answers the result queries waiting for it.
    fn execute(&self, goal: Accepted, execute: &dyn Fn(ServerGoal) -> ExecuteResult) {
        let Accepted { request, cancel } = goal;
        let id = request.goal.clone();
        let status_key = key(self.domain, Verb::Status, &id, &self.key);
        let sent = self
            .net
            .session
            .put(&status_key, GoalStatus::Executing.name())
            .congestion_control(CongestionControl::Drop)
            .wait();
        if let Err(e) = sent {
            tracing::debug!(action = %self.action, goal = %id, error = %e, "cannot publish a goal's status");
        }
        let server_goal = ServerGoal {
            feedback_key: key(self.domain, Verb::Feedback, &id, &self.key).into(),
            request,
            cancel: cancel.clone(),
            net: self.net.clone(),
        };
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| execute(server_goal)))
            .unwrap_or_else(|_| Err("the execute function panicked".into()))
            .map_err(|refusal| refusal.reason);
        let ended = match outcome.and_then(|(data, params)| encode(&data, &params).map_err(|e| e.to_string())) {
            Ok(message) => Ended::Done { canceled: cancel.is_set(), message: message.into() },
            Err(reason) => Ended::Aborted(reason),
        };
        tracing::debug!(action = %self.action, goal = %id, status = %ended.status(), "goal ended");
        let waiting = lock(&self.table).end(&id, ended.clone());
        for query in &waiting {
            ended.answer(query, &self.action);
        }
    }
}

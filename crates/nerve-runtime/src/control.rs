//! Driving a run from another thread of the same process.
//!
//! A host daemon of a cluster runs its part of a dataflow with [`crate::run`] on a thread of its
//! own, and through a [`RunControl`] holds the part's start until every host is ready, starts
//! it, stops it, reads its status, and closes inputs whose producer's host was lost.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use nerve_message::graph_edit::GraphEdit;
use nerve_message::run_status::RunStatus;
use nerve_shm::sync::{lock, wait_timeout};
use nerve_spec::NodeSpec;

use crate::event::Ev;

/// Where a controlled run is on its way to the start.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Readiness {
    /// Nodes are still being started and connecting.
    #[default]
    Preparing,
    /// Every node (and helper) is ready; the run waits for [`RunControl::start`].
    Ready,
    /// The run was started.
    Started,
    /// The run was aborted (or could not be set up) before it started; the text says why.
    Failed(String),
    /// The run ended after it started, or before it was ready without a reason to give.
    Ended,
}

/// A handle on a run that [`crate::RunOptions::control`] names.
///
/// With a control, a run does not start its nodes by itself once they are ready: it reports
/// [`Readiness::Ready`] and waits for [`RunControl::start`] (at most its ready timeout).
#[derive(Debug, Default)]
pub struct RunControl {
    state: Mutex<Readiness>,
    changed: Condvar,
    events: Mutex<Option<Sender<Ev>>>,
    over: AtomicBool,
}

impl RunControl {
    /// A control for one run.
    #[must_use]
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    /// Where the run is now.
    #[must_use]
    pub fn readiness(&self) -> Readiness {
        lock(&self.state).clone()
    }

    /// Whether the run has returned: every node gone and everything cleaned up.
    #[must_use]
    pub fn is_over(&self) -> bool {
        self.over.load(Ordering::Acquire)
    }

    /// Waits until the run is ready (or started), or has failed or ended, or `timeout` passed;
    /// returns where it is then.
    #[must_use]
    pub fn wait_ready(&self, timeout: Duration) -> Readiness {
        let deadline = Instant::now() + timeout;
        let mut state = lock(&self.state);
        while *state == Readiness::Preparing {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = wait_timeout(&self.changed, state, left).0;
        }
        state.clone()
    }

    /// Starts every node of a ready run together. Returns whether the run was still there to
    /// be started.
    pub fn start(&self) -> bool {
        self.send(Ev::Go)
    }

    /// Stops the run as Ctrl-C would (stop events, the grace period, then kills).
    pub fn stop(&self) -> bool {
        let (reply, _) = mpsc::channel();
        self.send(Ev::Tool { stop: true, reply })
    }

    /// The run's status now; `None` once it is over.
    #[must_use]
    pub fn status(&self) -> Option<RunStatus> {
        let (reply, status) = mpsc::channel();
        if !self.send(Ev::Tool { stop: false, reply }) {
            return None;
        }
        status.recv_timeout(Duration::from_secs(5)).ok()
    }

    /// Changes the run's graph as `nerve node add|remove|connect|disconnect` would; returns
    /// what was done, or why not, in words for the user.
    pub fn edit(&self, edit: GraphEdit) -> Result<String, String> {
        self.change(|reply| Ev::Edit { edit, by_control: true, reply })
    }

    /// Adds `spec`, a `path: dynamic` node that the controlling process serves itself (as
    /// [`RunOptions::helpers`](crate::RunOptions::helpers)), to the running graph; its inputs
    /// read their outputs from now on. Returns what was done, or why not.
    pub fn add_helper(&self, spec: NodeSpec) -> Result<String, String> {
        self.change(|reply| Ev::AddHelper { spec: Box::new(spec), reply })
    }

    fn change(&self, ev: impl FnOnce(Sender<Result<String, String>>) -> Ev) -> Result<String, String> {
        let (reply, answer) = mpsc::channel();
        if !self.send(ev(reply)) {
            return Err("the run has ended".to_owned());
        }
        answer
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| Err("the run did not answer within 10 s".to_owned()))
    }

    /// Tells these inputs, as (node id, input id), that nothing more will arrive on them, as
    /// if their producer had finished: what a reader gets when its producer's host is lost.
    pub fn close_inputs(&self, inputs: Vec<(String, String)>) -> bool {
        self.send(Ev::CloseInputs(inputs))
    }

    fn send(&self, ev: Ev) -> bool {
        lock(&self.events).as_ref().is_some_and(|tx| tx.send(ev).is_ok())
    }

    /// The run's event loop takes events from `tx` from now on.
    pub(crate) fn attach(&self, tx: Sender<Ev>) {
        *lock(&self.events) = Some(tx);
    }

    pub(crate) fn set(&self, readiness: Readiness) {
        let mut state = lock(&self.state);
        // Failed and Ended are final; Started only gives way to Ended.
        let keep = matches!(*state, Readiness::Failed(_) | Readiness::Ended)
            || (*state == Readiness::Started && readiness != Readiness::Ended);
        if !keep {
            *state = readiness;
            self.changed.notify_all();
        }
    }

    /// The run is over: nothing reaches it any more.
    pub(crate) fn detach(&self) {
        *lock(&self.events) = None;
        self.over.store(true, Ordering::Release);
        self.set(Readiness::Ended);
    }
}

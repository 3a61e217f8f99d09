//! What a node's two halves ([`Node`](crate::Node) and its [`EventStream`](crate::EventStream))
//! and its control thread share: the channel table, the control connection to the runtime, and
//! the runtime's notices waiting to become events.

use std::collections::{HashMap, VecDeque};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use nerve_message::node_to_runtime::NodeRequest;
use nerve_message::{ChannelTable, frame};
use nerve_shm::inbox::Inbox;
use nerve_shm::sync::lock;
use nerve_topic::run_scope::{Membership, RunScope};

use crate::clock::Clock;
use crate::error::NodeError;
use crate::params::Params;

/// A notice from the runtime, waiting to become an event.
#[derive(Debug)]
pub(crate) enum Control {
    Stop,
    InputClosed(String),
    InputReopened(String),
    /// `nerve node connect` fed an input from a topic (see [`RuntimeMessage::Connect`]).
    ///
    /// [`RuntimeMessage::Connect`]: nerve_message::runtime_to_node::RuntimeMessage::Connect
    Connect {
        input: String,
        topic: String,
        queue_size: usize,
        queue: usize,
    },
    /// `nerve node disconnect` cut an input that `Connect` fed.
    Disconnect(String),
    TimersClosed,
    Error(String),
}

/// State the node handle, its event stream and the control thread share.
pub(crate) struct Shared {
    pub table: ChannelTable,
    pub inbox: Arc<Inbox>,
    pub stop: AtomicBool,
    control: Mutex<VecDeque<Control>>,
    control_pending: AtomicUsize,
    writer: Mutex<UnixStream>,
    pub clock: Clock,
    /// The node's parameters: tools' requests are answered from here.
    pub params: Params,
    /// Nodes serving what this node calls that ended for good, with how they ended.
    pub ended_servers: Mutex<HashMap<String, String>>,
    /// The run the node belongs to, which scopes the names of its outputs' topics, topic
    /// inputs and the servers it waits for.
    pub run: Option<Membership>,
}

impl Shared {
    pub(crate) fn new(
        table: ChannelTable,
        inbox: Arc<Inbox>,
        control: UnixStream,
        clock: Clock,
        params: Params,
        run: Option<Membership>,
    ) -> Self {
        Self {
            run,
            params,
            table,
            inbox,
            stop: AtomicBool::new(false),
            control: Mutex::new(VecDeque::new()),
            control_pending: AtomicUsize::new(0),
            writer: Mutex::new(control),
            clock,
            ended_servers: Mutex::default(),
        }
    }

    /// Whose `name` is for the endpoints nerve creates on the node's behalf.
    pub(crate) fn run_scope(&self, name: &str) -> RunScope {
        scope_in(self.run.as_ref(), name)
    }

    pub(crate) fn push_control(&self, c: Control) {
        if matches!(c, Control::Stop) {
            self.stop.store(true, Ordering::Release);
        }
        lock(&self.control).push_back(c);
        self.control_pending.fetch_add(1, Ordering::AcqRel);
        self.inbox.doorbell().ring();
    }

    pub(crate) fn pop_control(&self) -> Option<Control> {
        if self.control_pending.load(Ordering::Acquire) == 0 {
            return None;
        }
        let c = lock(&self.control).pop_front();
        if c.is_some() {
            self.control_pending.fetch_sub(1, Ordering::AcqRel);
        }
        c
    }

    pub(crate) fn has_control(&self) -> bool {
        self.control_pending.load(Ordering::Acquire) != 0
    }

    pub(crate) fn request(&self, req: &NodeRequest) -> Result<(), NodeError> {
        frame::write(&mut *lock(&self.writer), req)?;
        Ok(())
    }

    /// Answers a tool's parameter request `id`, forwarded by the runtime.
    pub(crate) fn answer_param(&self, id: u64, op: nerve_message::param::ParamOp) {
        let answer = self.params.answer(op);
        if let Err(e) = self.request(&NodeRequest::ParamReply { id, answer }) {
            tracing::warn!(node = %self.table.node_id, error = %e, "cannot answer a parameter request");
        }
    }
}

/// Held by both halves of a node; when both are gone the control connection is shut down, so
/// the runtime learns at once that the node left (the control thread holds a duplicate of the
/// socket, which alone would keep it open).
pub(crate) struct Link {
    pub(crate) shared: Arc<Shared>,
    /// The run a node started by hand made this process part of: left with the node.
    pub(crate) _joined: Option<nerve_topic::run_scope::Joined>,
}

impl Drop for Link {
    fn drop(&mut self) {
        let _ = lock(&self.shared.writer).shutdown(std::net::Shutdown::Both);
    }
}

/// The run a node belongs to, as its channel table names it.
///
/// # Errors
/// A run name or shared name the topic API refuses.
pub(crate) fn membership(table: &ChannelTable) -> Result<Option<Membership>, NodeError> {
    if table.run_name.is_empty() {
        return Ok(None);
    }
    Ok(Some(Membership::new(&table.run_name, &table.share)?))
}

/// Whose `name` is in `run`: the run's unless it shares the name; global outside any run.
pub(crate) fn scope_in(run: Option<&Membership>, name: &str) -> RunScope {
    run.map_or(RunScope::Shared, |m| m.scope_of(name))
}

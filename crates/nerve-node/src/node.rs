//! The sending half of a node, and its control thread.

use std::io::BufReader;
use std::os::unix::net::UnixStream;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use arrow_array::Array;
use arrow_schema::DataType;
use nerve_message::node_to_runtime::NodeRequest;
use nerve_message::runtime_to_node::RuntimeMessage;
use nerve_message::{ChannelTable, env, frame};
use nerve_shm::ShmError;
use nerve_shm::channel::{FanOut, ReaderLink};
use nerve_shm::codec::{Loan, Outlet};
use nerve_shm::names::RunNames;
use nerve_shm::pool::OutputPool;
use nerve_shm::sync::lock;
use nerve_topic::run_scope::Joined;
use nerve_topic::{Extension, Sample, SendError, SendFailure};
use rustc_hash::FxHashMap;

use crate::clock::Clock;
use crate::connect::{Registration, map_inboxes, register, register_dynamic};
use crate::error::NodeError;
use crate::event::Parameters;
use crate::params::Params;
use crate::shared::{Control, Link, Shared, membership, scope_in};
use crate::stream::EventStream;
use nerve_topic::run_scope::Membership;

/// The sending half of a node.
///
/// Obtained with [`Node::init_from_env`] together with the node's [`EventStream`].
pub struct Node {
    shared: Arc<Shared>,
    _link: Arc<Link>,
    /// Looked up by name on every send: a fast hash, not the DoS-resistant default (the names
    /// come from the node's own dataflow).
    outputs: FxHashMap<String, Output>,
}

/// The `tracing` target of what nodes log with [`Node::log`].
pub const LOG_TARGET: &str = "nerve::node";

/// One output: its dataflow readers, and the topic it is also published on.
struct Output {
    /// The output's id, which its samples carry.
    id: Arc<str>,
    outlet: Mutex<Outlet>,
    topic: Option<nerve_topic::Publisher>,
    /// The type the dataflow declares for it and that type's Arrow layout, when it has one.
    declared: Option<(String, DataType)>,
}

impl Output {
    /// Refuses a value whose Arrow type is not the declared one's.
    fn check(&self, actual: &DataType) -> Result<(), NodeError> {
        match &self.declared {
            Some((declared, expected)) if !nerve_types::same_layout(expected, actual) => Err(NodeError::WrongType {
                output: self.id.to_string(),
                declared: declared.clone(),
                expected: expected.to_string(),
                actual: actual.to_string(),
            }),
            _ => Ok(()),
        }
    }
}

/// The Arrow type each output's declared type requires (`None`: no type declared, or one
/// that takes any layout).
fn declared_layouts(table: &ChannelTable) -> Result<Vec<Option<(String, DataType)>>, NodeError> {
    if table.outputs.iter().all(|o| o.declared_type.is_none()) {
        return Ok(vec![None; table.outputs.len()]);
    }
    let registry = nerve_types::Registry::new(&table.types);
    table
        .outputs
        .iter()
        .map(|out| {
            let Some(declared) = &out.declared_type else { return Ok(None) };
            let wrong =
                |reason: String| NodeError::DeclaredType { output: out.id.clone(), declared: declared.clone(), reason };
            let port = nerve_types::PortType::parse(declared).map_err(|e| wrong(e.to_string()))?;
            let layout = port.arrow_type(&registry).map_err(|e| wrong(e.to_string()))?;
            Ok(layout.map(|ty| (declared.clone(), ty)))
        })
        .collect()
}

impl Node {
    /// Connects a node spawned by `nerve run` (it finds the runtime through its environment).
    ///
    /// Returns once every node of the dataflow is ready, so all start together.
    ///
    /// # Errors
    /// When the process was not started by nerve, the runtime refuses it, or its channels
    /// cannot be mapped.
    pub fn init_from_env() -> Result<(Self, EventStream), NodeError> {
        let socket = std::env::var_os(env::SOCKET).ok_or(NodeError::NotStartedByNerve { var: env::SOCKET })?;
        let id = std::env::var(env::NODE_ID).map_err(|_| NodeError::NotStartedByNerve { var: env::NODE_ID })?;
        Self::finish(register(std::path::Path::new(&socket), &id)?, None)
    }

    /// Connects as node `id`: the node nerve spawned under that id, or else a `path: dynamic`
    /// node of a running dataflow, started by hand.
    ///
    /// # Errors
    /// As [`Node::init_from_env`], and when no running dataflow declares `id`.
    pub fn init(id: &str) -> Result<(Self, EventStream), NodeError> {
        match (std::env::var_os(env::SOCKET), std::env::var(env::NODE_ID)) {
            (Some(socket), Ok(own)) if own == id => Self::finish(register(std::path::Path::new(&socket), id)?, None),
            _ => {
                let reg = register_dynamic(id)?;
                // Started by hand, the process has no run in its environment: the endpoints its
                // code creates while the node is connected belong to the run it joined, as a
                // spawned node's do.
                let joined = membership(&reg.table)?.map(nerve_topic::run_scope::join);
                Self::finish(reg, joined)
            }
        }
    }

    /// Connects as node `id` to the dataflow whose control socket is `socket`: for a process
    /// that serves `path: dynamic` nodes of a run it knows (a host daemon's bridges).
    ///
    /// Returns once the run starts, like [`Node::init_from_env`].
    ///
    /// # Errors
    /// As [`Node::init_from_env`].
    pub fn init_at(socket: &std::path::Path, id: &str) -> Result<(Self, EventStream), NodeError> {
        Self::finish(register(socket, id)?, None)
    }

    /// `joined`: the run this process joined for the node, left when the node is gone.
    fn finish(reg: Registration, joined: Option<Joined>) -> Result<(Self, EventStream), NodeError> {
        let Registration { stream, table } = reg;
        if table.lock_memory {
            // Before the node maps its shared memory, so that is locked too (MCL_FUTURE).
            rustix::mm::mlockall(rustix::mm::MlockAllFlags::CURRENT | rustix::mm::MlockAllFlags::FUTURE)
                .map_err(|e| NodeError::LockMemory(e.into()))?;
        }
        let names = RunNames::new(&table.run_id);
        let run = membership(&table)?;
        let inboxes = map_inboxes(&names, &table.inboxes)?;
        let own = inboxes
            .get(&table.node_index)
            .cloned()
            .ok_or_else(|| NodeError::Protocol("channel table lacks the node's own inbox".into()))?;
        let inbox_of = |n: usize| {
            inboxes.get(&n).cloned().ok_or_else(|| NodeError::Protocol(format!("channel table lacks inbox {n}")))
        };
        let mut outputs = FxHashMap::default();
        let layouts = declared_layouts(&table)?;
        for (out, declared) in table.outputs.iter().zip(layouts) {
            let topic = output_topic(&table, run.as_ref(), out)?;
            let pool = OutputPool::open(&names, table.node_index, out.index, table.pool_capacity)?;
            let readers = out
                .readers
                .iter()
                .map(|r| Ok(ReaderLink { inbox: inbox_of(r.node)?, queue: r.queue, edge: r.edge }))
                .collect::<Result<Vec<_>, NodeError>>()?;
            let fan_out = FanOut::new(pool, readers, Some(own.clone()));
            let outlet = Mutex::new(Outlet::new(fan_out, table.max_message));
            outputs.insert(out.id.clone(), Output { id: Arc::from(out.id.as_str()), outlet, topic, declared });
        }
        let mut reader = BufReader::new(stream.try_clone().map_err(|e| NodeError::Control(e.into()))?);
        let clock = Clock::of_run(&names, table.sim_time)?;
        let params = Params::new(&table.node_id, table.params.clone());
        let shared = Arc::new(Shared::new(table, own, stream, clock, params, run));
        let link = Arc::new(Link { shared: shared.clone(), _joined: joined });
        let events = EventStream::new(shared.clone(), link.clone(), &names, &inbox_of)?;
        shared.request(&NodeRequest::Ready)?;
        loop {
            match frame::read(&mut reader)? {
                RuntimeMessage::Start => break,
                RuntimeMessage::Stop => {
                    shared.push_control(Control::Stop);
                    break;
                }
                other => {
                    if let Err(unexpected) = take_notice(&shared, other) {
                        return Err(NodeError::Protocol(format!("expected start, got {unexpected:?}")));
                    }
                }
            }
        }
        let control = shared.clone();
        std::thread::Builder::new()
            .name("nerve-control".into())
            .spawn(move || control_loop(&control, reader))
            .map_err(|e| NodeError::Control(e.into()))?;
        // After the start, with the control thread taking the runtime's news: the nodes that
        // serve what this one calls were started too.
        crate::calls::wait_for_servers(&shared)?;
        Ok((Self { shared, _link: link, outputs }, events))
    }

    /// This node's id.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.shared.table.node_id
    }

    /// The id of the run this node belongs to (dora-rs's `dataflow_id()`).
    #[must_use]
    pub fn run_id(&self) -> &str {
        &self.shared.table.run_id
    }

    /// Times the node's `restart:` policy started it again before this process: 0 for its
    /// first process.
    #[must_use]
    pub fn restart_count(&self) -> u32 {
        self.shared.table.restarts
    }

    /// The whole dataflow, as JSON.
    #[must_use]
    pub fn dataflow_descriptor(&self) -> &serde_json::Value {
        &self.shared.table.descriptor
    }

    /// This node's entry of the dataflow, as JSON.
    #[must_use]
    pub fn node_config(&self) -> &serde_json::Value {
        &self.shared.table.config
    }

    /// Logs `message` at `level` as this node. Under `nerve run` the runtime receives the
    /// record: the node's `min_log_level` filters it, and it goes to the node's log file, the
    /// terminal and every reader of the run's logs (`dora/logs`, `send_logs_as`). Elsewhere it
    /// is a `tracing` event of target [`LOG_TARGET`] with the node's id, where the process's
    /// subscriber prints it (nerve's Python package keeps one that shows `info` and above,
    /// `NERVE_LOG` permitting), or, in a process without a subscriber, `info` and above on
    /// standard error.
    pub fn log(&self, level: tracing::Level, message: &str) {
        self.log_with(level, message, None, &std::collections::BTreeMap::new());
    }

    /// [`Node::log`] with where in the code it comes from (`target`: a module path, a logger's
    /// name) and structured context (`fields`).
    pub fn log_with(
        &self,
        level: tracing::Level,
        message: &str,
        target: Option<&str>,
        fields: &std::collections::BTreeMap<String, String>,
    ) {
        crate::log::emit(self.id(), level, message, target, fields);
    }

    /// The node's clock: wall time, or the run's simulated time under `nerve run --sim-time`
    /// (then [`Clock::set_sim_time`] moves it for every node of the run).
    #[must_use]
    pub fn clock(&self) -> &Clock {
        &self.shared.clock
    }

    /// The node's parameters: those the dataflow declares (`params:`), and any the code
    /// declares; `nerve param` reads and sets the same ones.
    #[must_use]
    pub fn params(&self) -> Params {
        self.shared.params.clone()
    }

    /// Declared output ids.
    pub fn outputs(&self) -> impl Iterator<Item = &str> {
        self.shared.table.outputs.iter().map(|o| o.id.as_str())
    }

    /// Whether the runtime asked this node to stop.
    #[must_use]
    pub fn stop_requested(&self) -> bool {
        self.shared.stop.load(Ordering::Acquire)
    }

    fn output(&self, output: &str) -> Result<&Output, NodeError> {
        self.outputs.get(output).ok_or_else(|| {
            let mut declared: Vec<&str> = self.outputs.keys().map(String::as_str).collect();
            declared.sort_unstable();
            NodeError::UnknownOutput {
                node: self.id().to_owned(),
                output: output.to_owned(),
                declared: if declared.is_empty() { "none".into() } else { declared.join(", ") },
            }
        })
    }

    /// Sends any Arrow array: its buffers are copied once, into shared memory.
    ///
    /// # Errors
    /// Unknown output, a message over the limit, or no block to be had.
    pub fn send_output(&self, output: &str, parameters: &Parameters, data: &dyn Array) -> Result<(), NodeError> {
        self.send_extension(output, parameters, data, None)
    }

    /// Sends a typed message ([`crate::msg`]: `sensor_msgs::msg::Image`, or a package of your
    /// own), as the Arrow value of its type, so an output declared with its type in
    /// `output_types` accepts it and readers in any language read the same message.
    ///
    /// # Errors
    /// As [`Node::send_output`], and a message Arrow cannot hold (over 2³¹ elements in a list).
    pub fn send_message<M: crate::msg::Message>(
        &self,
        output: &str,
        parameters: &Parameters,
        message: &M,
    ) -> Result<(), NodeError> {
        let value = message.to_arrow().map_err(|source| NodeError::Message { output: output.to_owned(), source })?;
        self.send_output(output, parameters, &value)
    }

    /// Sends `storage` as a value of the extension type `extension` (readers find it in
    /// [`Message::field`](crate::Message::field)), or as a plain array without one: how a
    /// received extension array is sent on. For an n-D array, [`Node::send_tensor`] is simpler.
    ///
    /// # Errors
    /// As [`Node::send_output`].
    pub fn send_extension(
        &self,
        output: &str,
        parameters: &Parameters,
        storage: &dyn Array,
        extension: Option<&Extension>,
    ) -> Result<(), NodeError> {
        let out = self.output(output)?;
        out.check(storage.data_type())?;
        let mut outlet = lock(&out.outlet);
        let loan = outlet.loan_array(&storage.to_data(), extension, parameters).map_err(|e| sized(output, e))?;
        self.publish(output, out.topic.as_ref(), &mut outlet, loan);
        Ok(())
    }

    /// Sends one row-major tensor of `shape` (a 480×640×3 image is `&[480, 640, 3]`) whose
    /// values, of the primitive type `value_type`, `fill` writes straight into shared memory
    /// (`byte_len` bytes): readers get Arrow's fixed-shape tensor extension type
    /// (`arrow.fixed_shape_tensor`), shape included, over a fixed-size list of one entry.
    ///
    /// # Errors
    /// As [`Node::send_output`], and a tensor of more than 2^31 values.
    pub fn send_tensor(
        &self,
        output: &str,
        parameters: &Parameters,
        value_type: &DataType,
        shape: &[usize],
        byte_len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<(), NodeError> {
        let out = self.output(output)?;
        let (storage, _) = nerve_shm::codec::tensor_storage(value_type, shape).map_err(|e| sized(output, e))?;
        out.check(&storage)?;
        let mut loan =
            lock(&out.outlet).loan_tensor(value_type, shape, byte_len, parameters).map_err(|e| sized(output, e))?;
        fill(loan.data_mut());
        self.publish(output, out.topic.as_ref(), &mut lock(&out.outlet), loan);
        Ok(())
    }

    /// The Arrow type the dataflow declares for `output` (`output_types`), if it declares one
    /// with a fixed layout: what an empty value sent there is made of.
    #[must_use]
    pub fn declared_type(&self, output: &str) -> Option<&DataType> {
        self.outputs.get(output)?.declared.as_ref().map(|(_, t)| t)
    }

    /// Sends raw bytes (an Arrow `UInt8` array).
    ///
    /// # Errors
    /// As [`Node::send_output`].
    pub fn send_output_bytes(&self, output: &str, parameters: &Parameters, data: &[u8]) -> Result<(), NodeError> {
        self.send_output_raw(output, parameters, data.len(), |buf| buf.copy_from_slice(data))
    }

    /// Sends `len` bytes written by `fill` straight into shared memory (no copy at all).
    ///
    /// # Errors
    /// As [`Node::send_output`].
    pub fn send_output_raw(
        &self,
        output: &str,
        parameters: &Parameters,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<(), NodeError> {
        self.send_primitive(output, parameters, &DataType::UInt8, len, len, fill)
    }

    /// Sends one buffer of `byte_len` bytes holding `items` values of the primitive type
    /// `data_type`, written in place by `fill` (the path bindings use for numpy arrays).
    ///
    /// # Errors
    /// As [`Node::send_output`].
    pub fn send_primitive(
        &self,
        output: &str,
        parameters: &Parameters,
        data_type: &DataType,
        items: usize,
        byte_len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<(), NodeError> {
        // One lookup of the output for loan and send (hashing its name is a good part of a
        // small message's cost); the outlet is not locked while `fill` runs.
        let out = self.output(output)?;
        out.check(data_type)?;
        let mut loan =
            lock(&out.outlet).loan_primitive(data_type, items, byte_len, parameters).map_err(|e| sized(output, e))?;
        fill(loan.data_mut());
        self.publish(output, out.topic.as_ref(), &mut lock(&out.outlet), loan);
        Ok(())
    }

    /// Lends `len` bytes of shared memory for output `output`, sent later as a `UInt8` array by
    /// [`Node::send_sample`].
    ///
    /// # Errors
    /// Unknown output, a message over the limit, or no block to be had.
    pub fn loan(&self, output: &str, parameters: &Parameters, len: usize) -> Result<Sample, NodeError> {
        self.loan_primitive(output, parameters, &DataType::UInt8, len, len)
    }

    /// Like [`Node::loan`] for `items` values of a primitive type.
    ///
    /// # Errors
    /// As [`Node::loan`].
    pub fn loan_primitive(
        &self,
        output: &str,
        parameters: &Parameters,
        data_type: &DataType,
        items: usize,
        byte_len: usize,
    ) -> Result<Sample, NodeError> {
        let out = self.output(output)?;
        out.check(data_type)?;
        let loan =
            lock(&out.outlet).loan_primitive(data_type, items, byte_len, parameters).map_err(|e| sized(output, e))?;
        Ok(Sample::new(loan, out.id.clone()))
    }

    /// Sends a filled sample on the output that lent it.
    ///
    /// # Errors
    /// The sample back, unsent, when it was not lent by an output of this node.
    // The unsent sample comes back by value, as tokio's `SendError<T>` does: a large error
    // costs a move on a failed send, never on one that succeeds.
    #[allow(clippy::result_large_err)]
    pub fn send_sample(&self, sample: Sample) -> Result<(), SendError<Sample>> {
        let out = self.outputs.get(sample.endpoint());
        let Some(out) = out.filter(|out| lock(&out.outlet).lent(sample.loan())) else {
            let lent_by = sample.endpoint().to_owned();
            let endpoint = format!("an output of node `{}`", self.id());
            return Err(SendError { sample, endpoint, reason: SendFailure::LentElsewhere { lent_by } });
        };
        self.publish(&out.id, out.topic.as_ref(), &mut lock(&out.outlet), sample.into_loan());
        Ok(())
    }

    /// Sends a message encoded by another node (one [`crate::EncodedNext::Message`] read on
    /// another host, say) as it is, keeping its sender's stamp and parameters: `fill` writes its
    /// `len` bytes straight into shared memory, and the message is checked there before any
    /// reader sees it.
    ///
    /// # Errors
    /// Unknown output, a message over the limit or malformed, or no block to be had.
    pub fn send_encoded(&self, output: &str, len: usize, fill: impl FnOnce(&mut [u8])) -> Result<(), NodeError> {
        let out = self.output(output)?;
        let mut outlet = lock(&out.outlet);
        let copy = outlet.copy_encoded_with(len, fill).map_err(|e| sized(output, e))?;
        let topic = out.topic.as_ref().filter(|t| t.has_subscribers());
        let done = outlet.send_copy_with(copy, &self.shared.stop, |message| on_topic(output, topic, message));
        published(output, &done);
        Ok(())
    }

    fn publish(&self, output: &str, topic: Option<&nerve_topic::Publisher>, outlet: &mut Outlet, loan: Loan) {
        self.shared.inbox.note_call();
        let topic = topic.filter(|t| t.has_subscribers());
        let done = outlet.send_with(loan, &self.shared.stop, |message| on_topic(output, topic, message));
        published(output, &done);
    }

    /// Tells the runtime these outputs are finished: their readers get `InputClosed` now,
    /// without waiting for this process to exit.
    ///
    /// # Errors
    /// When the control connection fails.
    pub fn close_outputs(&self, outputs: &[&str]) -> Result<(), NodeError> {
        for o in outputs {
            self.output(o)?;
        }
        self.shared.request(&NodeRequest::CloseOutputs { outputs: outputs.iter().map(|s| (*s).to_owned()).collect() })
    }
}

/// The topic an output is also published on: the one the dataflow names (any scope), or else
/// `<node>/<output>` on this host, so `nerve topic echo|hz|bw` can look at any output of a
/// running dataflow. Either costs nothing while no one subscribes. Both are the run's own
/// unless the run shares the name.
fn output_topic(
    table: &ChannelTable,
    run: Option<&Membership>,
    out: &nerve_message::channel_table::OutputChannel,
) -> Result<Option<nerve_topic::Publisher>, NodeError> {
    let options = |topic: &str| nerve_topic::PublisherOptions {
        max_message: table.max_message,
        run: scope_in(run, topic),
        ..Default::default()
    };
    if let Some(topic) = &out.topic {
        return Ok(Some(nerve_topic::Publisher::new(topic, options(topic))?));
    }
    let topic = format!("{}/{}", table.node_id, out.id);
    match nerve_topic::Publisher::new(
        &topic,
        nerve_topic::PublisherOptions { scope: nerve_topic::Scope::Host, ..options(&topic) },
    ) {
        Ok(p) => Ok(Some(p)),
        Err(e) => {
            // Only inspection is lost: the dataflow itself does not need this topic.
            tracing::warn!(topic, error = %e, "output not visible to `nerve topic`");
            Ok(None)
        }
    }
}

/// Publishes a message sent on `output` on the output's topic too, as encoded for the
/// dataflow's readers.
fn on_topic(output: &str, topic: Option<&nerve_topic::Publisher>, message: &[u8]) {
    if let Some(t) = topic
        && let Err(e) = t.send_encoded(message)
    {
        tracing::warn!(output, topic = t.topic(), error = %e, "cannot publish the output on its topic");
    }
}

fn published(output: &str, done: &nerve_shm::channel::Published) {
    if done.skipped > 0 {
        tracing::debug!(output, skipped = done.skipped, "stopping: full readers skipped");
    }
    tracing::trace!(output, delivered = done.delivered, evicted = done.evicted, "published");
}

/// Names the output in a size error.
fn sized(output: &str, e: ShmError) -> NodeError {
    match e {
        ShmError::TooLarge { len, limit } => NodeError::TooLarge { output: output.to_owned(), len, limit },
        other => NodeError::Shm(other),
    }
}

/// Takes a notice the runtime may send at any time; gives back any other message.
fn take_notice(shared: &Shared, msg: RuntimeMessage) -> Result<(), RuntimeMessage> {
    match msg {
        RuntimeMessage::Stop => shared.push_control(Control::Stop),
        RuntimeMessage::InputClosed { input } => shared.push_control(Control::InputClosed(input)),
        RuntimeMessage::InputReopened { input } => shared.push_control(Control::InputReopened(input)),
        RuntimeMessage::TimersClosed => shared.push_control(Control::TimersClosed),
        RuntimeMessage::Connect { input, topic, queue_size, queue } => {
            shared.push_control(Control::Connect { input, topic, queue_size, queue });
        }
        RuntimeMessage::Disconnect { input } => shared.push_control(Control::Disconnect(input)),
        // On the control thread once started: a callback that takes long delays only the tool
        // that asked.
        RuntimeMessage::ParamRequest { id, op } => shared.answer_param(id, op),
        RuntimeMessage::ServerNodeEnded { node, outcome } => {
            lock(&shared.ended_servers).insert(node, outcome);
        }
        other => return Err(other),
    }
    Ok(())
}

fn control_loop(shared: &Shared, mut reader: BufReader<UnixStream>) {
    loop {
        match frame::read::<RuntimeMessage>(&mut reader) {
            Ok(msg) => {
                if let Err(other) = take_notice(shared, msg) {
                    shared.push_control(Control::Error(format!("unexpected message from the runtime: {other:?}")));
                }
            }
            Err(e) => {
                if !shared.stop.load(Ordering::Acquire) {
                    if !matches!(e, frame::FrameError::Closed) {
                        shared.push_control(Control::Error(format!("lost the runtime: {e}")));
                    }
                    shared.push_control(Control::Stop);
                }
                return;
            }
        }
    }
}

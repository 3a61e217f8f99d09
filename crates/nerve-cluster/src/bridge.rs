//! The message bridge: a machine's outputs go on the network once, whatever reads them
//! elsewhere, and each machine writes what it receives into shared memory once for all its
//! readers (RIMAOS2C's bridge).
//!
//! Both ends are nodes of the machine's part (see [`crate::placement`]), served on threads of
//! the daemon: the [`BRIDGE`](crate::placement::BRIDGE) node reads each outbound output like
//! any reader, and sends each message, as its producer encoded it and without copying it, on
//! the output's key; a stand-in for a node of another machine writes each message it receives
//! into its output's pool, keeping the producer's stamp and parameters. A producer's end of an
//! output becomes a Zenoh `delete` on the key, ordered after its last message, and closes the
//! output at the stand-in: readers get INPUT_CLOSED after everything that was sent.
//!
//! An edge between machines that the graph gains while running (`nerve node connect`) gets the
//! same two ends, joined to the running parts: a bridge node of its own for the output, and a
//! stand-in for its node unless the reader's machine has one already.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nerve_node::{EncodedNext, Event, EventStream, Node, NodeError};
use nerve_shm::sync::{lock, wait_timeout};
use zenoh::Wait;
use zenoh::qos::CongestionControl;
use zenoh::sample::{Sample, SampleKind};

use crate::error::ClusterError;
use crate::keys;
use crate::placement::{Inbound, Outbound};

/// Connects as helper node `id` of the run at `socket`, waiting for the run to listen; returns
/// once the run starts (or stops).
fn connect(socket: &Path, id: &str, deadline: Instant) -> Result<(Node, EventStream), NodeError> {
    loop {
        match Node::init_at(socket, id) {
            Err(NodeError::Connect { .. }) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// Starts the thread of bridge node `id` (the part's [`BRIDGE`](crate::placement::BRIDGE), or
/// one the graph gained while running), which sends `outbound` to the other machines.
///
/// # Errors
/// When a publisher cannot be declared or the thread cannot start.
pub(crate) fn spawn_out(
    session: &zenoh::Session,
    socket: PathBuf,
    id: String,
    uuid: &str,
    outbound: &[Outbound],
    deadline: Instant,
) -> Result<JoinHandle<()>, ClusterError> {
    let mut publishers = HashMap::new();
    let mut keys = HashMap::new();
    for o in outbound {
        // A link too slow for the output holds the bridge (and so the producer) back, unless
        // every remote reader drops its oldest: then the network drops too, and what gets
        // through is the freshest it can carry.
        let congestion = if o.drop_oldest { CongestionControl::Drop } else { CongestionControl::Block };
        let key = keys::data(uuid, &o.node, &o.output);
        let publisher = session.declare_publisher(key.clone()).congestion_control(congestion).express(true).wait()?;
        publishers.insert(o.input.clone(), publisher);
        keys.insert(o.input.clone(), key);
    }
    let mut outbox = Outbox { open: publishers.keys().cloned().collect(), publishers, keys, session: session.clone() };
    std::thread::Builder::new()
        .name("nerve-bridge-out".into())
        .spawn(move || {
            let (_node, mut events) = match connect(&socket, &id, deadline) {
                Ok(connected) => connected,
                Err(e) => {
                    tracing::error!(error = %e, "the bridge to the other machines could not join the run");
                    return;
                }
            };
            while outbox.take(events.next_encoded(None)) {}
            // What the outputs sent before the stop still goes; then, with the bridge gone, no
            // output of this machine sends anything more.
            while let Some(next) = events.next_queued_encoded() {
                outbox.take(next);
            }
            outbox.close_all();
        })
        .map_err(ClusterError::Thread)
}

/// The bridge's publishers and their keys, by input id (`node/output`), and those not closed
/// yet.
struct Outbox {
    publishers: HashMap<String, zenoh::pubsub::Publisher<'static>>,
    keys: HashMap<String, String>,
    open: HashSet<String>,
    session: zenoh::Session,
}

impl Outbox {
    /// Sends a message on, or closes an output; `false` once the bridge is to stop.
    fn take(&mut self, next: EncodedNext) -> bool {
        match next {
            EncodedNext::Message { id, message } => {
                self.put(&id, zenoh::bytes::ZBytes::from(bytes::Bytes::from_owner(message)));
                true
            }
            // An input fed from its output's topic (a bridge the graph gained while running)
            // gives messages decoded: encoded again, as their producer stamped them.
            EncodedNext::Event(Event::Input(message)) => {
                match nerve_shm::codec::encode_received(&message.data, &message.metadata) {
                    Ok(bytes) => self.put(&message.id, zenoh::bytes::ZBytes::from(bytes)),
                    Err(e) => tracing::warn!(output = %message.id, error = %e, "cannot send to the other machines"),
                }
                true
            }
            EncodedNext::Event(Event::InputClosed { id }) => {
                self.close(&id);
                true
            }
            EncodedNext::Event(Event::Error(e)) => {
                tracing::warn!(error = %e, "bridge to the other machines");
                true
            }
            EncodedNext::Event(Event::Stop) | EncodedNext::End => false,
            // The bridge's inputs have no `input_timeout`: no input of it recovers.
            EncodedNext::Event(Event::InputRecovered { .. }) | EncodedNext::Timeout => true,
        }
    }

    fn put(&self, id: &str, payload: zenoh::bytes::ZBytes) {
        if let Some(p) = self.publishers.get(id)
            && let Err(e) = p.put(payload).wait()
        {
            tracing::warn!(output = %id, error = %e, "cannot send to the other machines");
        }
    }

    /// Tells the machines that read output `id` that it sends nothing more: a `delete` on its
    /// key, after its last message. Never dropped, even on a congested link where the output's
    /// messages may be.
    fn close(&mut self, id: &str) {
        if self.open.remove(id)
            && let Some(key) = self.keys.get(id)
            && let Err(e) = self.session.delete(key).congestion_control(CongestionControl::Block).express(true).wait()
        {
            tracing::warn!(output = %id, error = %e, "cannot tell the other machines an output closed");
        }
    }

    fn close_all(&mut self) {
        for id in self.open.clone() {
            self.close(&id);
        }
    }
}

/// Bytes a stand-in holds between the network and shared memory, beyond its readers' own
/// queues: what it absorbs while readers here are slower than their producer elsewhere.
const HANDOFF_BYTES: usize = 256 << 20;

/// What arrives from the network for a stand-in, in arrival order, bounded in bytes. Zenoh's
/// receiving thread never waits on it (the link also carries the cluster's control traffic and
/// keep-alives): past the bound, an output whose readers all drop their oldest loses its oldest
/// message here, any other the newest, and the loss is counted and logged.
#[derive(Default)]
struct Handoff {
    state: Mutex<Pending>,
    arrived: Condvar,
}

#[derive(Default)]
struct Pending {
    queue: VecDeque<(usize, Sample)>,
    bytes: usize,
    dropped: u64,
}

impl Handoff {
    fn push(&self, index: usize, sample: Sample, drop_oldest: bool) {
        let len = sample.payload().len();
        let mut pending = lock(&self.state);
        if pending.bytes + len > HANDOFF_BYTES && !pending.queue.is_empty() {
            let oldest = drop_oldest.then(|| pending.queue.iter().position(|(i, _)| *i == index)).flatten();
            pending.dropped += 1;
            match oldest.and_then(|at| pending.queue.remove(at)) {
                Some((_, old)) => pending.bytes -= old.payload().len(),
                None => return,
            }
        }
        pending.bytes += len;
        pending.queue.push_back((index, sample));
        drop(pending);
        self.arrived.notify_one();
    }

    fn pop(&self, timeout: Duration) -> Option<(usize, Sample)> {
        let mut pending = lock(&self.state);
        if pending.queue.is_empty() {
            pending = wait_timeout(&self.arrived, pending, timeout).0;
        }
        let (index, sample) = pending.queue.pop_front()?;
        pending.bytes -= sample.payload().len();
        Some((index, sample))
    }

    fn dropped(&self) -> u64 {
        lock(&self.state).dropped
    }
}

/// A stand-in's network end, declared before its machine reports ready so nothing sent after
/// the start is missed: one subscriber per output read here.
pub(crate) struct StandIn {
    inbound: Inbound,
    handoff: Arc<Handoff>,
    _subscribers: Vec<zenoh::pubsub::Subscriber<()>>,
}

impl StandIn {
    /// Subscribes to the outputs of `inbound` for dataflow `uuid`.
    ///
    /// # Errors
    /// When a subscriber cannot be declared.
    pub(crate) fn declare(session: &zenoh::Session, uuid: &str, inbound: Inbound) -> Result<Self, ClusterError> {
        let handoff = Arc::new(Handoff::default());
        let mut subscribers = Vec::new();
        for (index, o) in inbound.outputs.iter().enumerate() {
            let drop_oldest = o.readers.iter().all(|r| r.drop_oldest);
            let handoff = handoff.clone();
            subscribers.push(
                session
                    .declare_subscriber(keys::data(uuid, &inbound.node, &o.output))
                    .callback(move |sample| handoff.push(index, sample, drop_oldest))
                    .wait()?,
            );
        }
        Ok(Self { inbound, handoff, _subscribers: subscribers })
    }

    /// Serves the stand-in on a thread of its own until its outputs close or its run stops.
    ///
    /// # Errors
    /// When the thread cannot start.
    pub(crate) fn spawn(self, socket: PathBuf, deadline: Instant) -> Result<JoinHandle<()>, ClusterError> {
        std::thread::Builder::new()
            .name(format!("nerve-bridge-in-{}", self.inbound.node))
            .spawn(move || self.serve(&socket, deadline))
            .map_err(ClusterError::Thread)
    }

    fn serve(self, socket: &Path, deadline: Instant) {
        let Self { inbound, handoff, _subscribers } = self;
        let (node, _events) = match connect(socket, &inbound.node, deadline) {
            Ok(connected) => connected,
            Err(e) => {
                tracing::error!(node = %inbound.node, error = %e, "the stand-in could not join the run");
                return;
            }
        };
        let mut open: Vec<bool> = vec![true; inbound.outputs.len()];
        let (mut reported, mut last_report) = (0, Instant::now());
        let report = |reported: &mut u64| {
            let dropped = handoff.dropped();
            if dropped > *reported {
                tracing::warn!(
                    node = %inbound.node,
                    machine = %inbound.machine,
                    dropped = dropped - *reported,
                    "messages from another machine dropped: the readers on this machine do not keep up"
                );
                *reported = dropped;
            }
        };
        while open.iter().any(|o| *o) && !node.stop_requested() {
            if last_report.elapsed() >= Duration::from_secs(5) {
                report(&mut reported);
                last_report = Instant::now();
            }
            let Some((index, sample)) = handoff.pop(Duration::from_millis(200)) else { continue };
            let output = &inbound.outputs[index].output;
            if !open[index] {
                continue;
            }
            match sample.kind() {
                SampleKind::Put => {
                    let payload = sample.payload();
                    let sent = node.send_encoded(output, payload.len(), |block| {
                        let mut at = 0;
                        for slice in payload.slices() {
                            block[at..at + slice.len()].copy_from_slice(slice);
                            at += slice.len();
                        }
                    });
                    if let Err(e) = sent {
                        tracing::warn!(
                            node = %inbound.node, output, machine = %inbound.machine, error = %e,
                            "message from another machine refused"
                        );
                    }
                }
                SampleKind::Delete => {
                    open[index] = false;
                    if let Err(e) = node.close_outputs(&[output]) {
                        tracing::warn!(node = %inbound.node, output, error = %e, "cannot close the stand-in's output");
                    }
                }
            }
        }
        report(&mut reported);
    }
}

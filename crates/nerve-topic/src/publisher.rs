//! The sending end of a topic.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use arrow_array::ArrayRef;
use arrow_data::ArrayData;
use arrow_schema::DataType;
use nerve_message::publisher_to_subscriber::PublisherMessage;
use nerve_shm::channel::{FanOut, ReaderLink};
use nerve_shm::clock::monotonic_ns;
use nerve_shm::codec::{Decoder, Loan, Metadata, Outlet, Parameters, aligned_copy};
use nerve_shm::inbox::Inbox;
use nerve_shm::message::Extension;
use nerve_shm::pool::{DEFAULT_CAPACITY, MAX_READERS, NewBlock, OutputPool};
use nerve_shm::sync::lock;

use crate::arrivals::Arrivals;
use crate::error::TopicError;
use crate::message::Message;
use crate::network::{self, End, Network, RemotePeers, network};
use crate::registry::{Entry, Kind, Registration, Scope};
use crate::run_scope::{RunScope, resolve};
use crate::runtime::{Feeder, Runtime, runtime};
use crate::sample::{LocalCopy, Sample, SendError, SendFailure};
use crate::wire;

/// Largest message a publisher sends unless told otherwise.
pub const DEFAULT_MAX_MESSAGE: usize = 1 << 30;

/// How a publisher is set up.
#[derive(Debug, Clone)]
pub struct PublisherOptions {
    /// Group of endpoints that see each other (two domains never do).
    pub domain: u32,
    /// How far messages travel.
    pub scope: Scope,
    /// Largest message, in bytes.
    pub max_message: usize,
    /// Keep the last message sent and hand it to each subscriber that joins later (ROS 2's
    /// transient-local durability with a depth of one); see [`Publisher::new`].
    pub latched: bool,
    /// Whose topic it is: this process's run's by default (see [`crate::run_scope`]).
    pub run: RunScope,
    /// For a bridge from another middleware, where the messages come from (see
    /// [`Entry::origin`]).
    pub origin: Option<String>,
}

impl Default for PublisherOptions {
    fn default() -> Self {
        Self {
            domain: 0,
            scope: Scope::Network,
            max_message: DEFAULT_MAX_MESSAGE,
            latched: false,
            run: RunScope::Inherit,
            origin: None,
        }
    }
}

/// A subscriber process's link, seen from the publisher.
struct PeerLink {
    edge: usize,
    sock: Arc<OwnedFd>,
}

struct PubState {
    outlet: Outlet,
    peers: Vec<PeerLink>,
    /// A latched publisher's last message as sent to other processes (nerve's message layout),
    /// kept under this lock so a subscriber process linking gets either it or what follows.
    last_encoded: Option<Arc<[u8]>>,
}

/// A latched publisher's last message as this process's subscribers got it.
#[derive(Default)]
struct LastLocal {
    message: Option<Message>,
    /// `message` was handed by the send under way, whose encoded form is recorded next (a send
    /// that records no local form leaves a stale one, which must go).
    fresh: bool,
}

/// What only a latched publisher keeps.
#[derive(Default)]
struct Latch {
    last_local: Mutex<LastLocal>,
    /// Held across a network send and the re-send to a host that just joined, so that host gets
    /// the last message before, never after, the next one.
    network_order: Mutex<()>,
}

/// What the publisher handle, the topic thread and the registry share.
pub(crate) struct PubShared {
    id: u64,
    /// The key endpoints meet by ([`crate::run_scope::Resolved::key`]).
    key: Arc<str>,
    /// The topic's name: its messages' id.
    name: Arc<str>,
    domain: u32,
    rt: Arc<Runtime>,
    state: Mutex<PubState>,
    /// `state.peers.len()`, readable without the lock (checked on every send).
    peer_count: AtomicUsize,
    /// Subscribers that joined, wherever they are.
    arrivals: Arc<Arrivals>,
    /// Present when the publisher is latched.
    latch: Option<Latch>,
}

/// A network-scoped publisher's side of the network.
struct Remote {
    net: Arc<Network>,
    subscribers: RemotePeers,
    _token: zenoh::liveliness::LivelinessToken,
}

impl Feeder for PubShared {
    fn attach(&self, sock: Arc<OwnedFd>, queue: Arc<Inbox>) -> Result<usize, String> {
        let mut st = lock(&self.state);
        let used = st.peers.iter().fold(0u64, |m, p| m | (1 << p.edge));
        let edge = (0..MAX_READERS)
            .find(|e| used & (1 << e) == 0)
            .ok_or_else(|| format!("topic `{}` already has {MAX_READERS} subscriber processes", self.name))?;
        let pool = st.outlet.fan_out_mut().pool_mut();
        let table = pool.table().clone();
        let blocks = pool.blocks();
        let sent = wire::send(sock.as_fd(), &PublisherMessage::Welcome { edge }, table.segment().fd())
            .and_then(|()| blocks.iter().try_for_each(|b| announce(&sock, b)));
        if let Err(e) = sent {
            return Err(format!("cannot set up a subscriber of `{}`: {e}", self.name));
        }
        st.outlet.fan_out_mut().add_reader(ReaderLink { inbox: queue, queue: 0, edge });
        st.peers.push(PeerLink { edge, sock });
        self.peer_count.store(st.peers.len(), Ordering::Release);
        if let Some(last) = st.last_encoded.clone() {
            self.resend_to_edge(&mut st, &last, edge);
        }
        self.arrivals.note();
        tracing::debug!(topic = %self.key, edge, "subscriber linked");
        Ok(edge)
    }

    fn detach(&self, edge: usize) {
        let mut st = lock(&self.state);
        if let Some(i) = st.peers.iter().position(|p| p.edge == edge) {
            st.peers.swap_remove(i);
            self.peer_count.store(st.peers.len(), Ordering::Release);
            st.outlet.fan_out_mut().remove_reader(edge);
            tracing::debug!(topic = %self.key, edge, "subscriber unlinked");
        }
    }
}

impl PubShared {
    /// Queues a latched publisher's last message to the subscriber process that just linked
    /// as `edge`, and to no other (they had it). Failing, the subscriber goes without it: the
    /// link stays, the next message reaches it.
    fn resend_to_edge(&self, st: &mut PubState, last: &[u8], edge: usize) {
        match st.outlet.copy_encoded(last) {
            Ok(copy) => {
                self.announce_new(st);
                st.outlet.send_copy_to(copy, 1 << edge, &AtomicBool::new(false));
            }
            Err(e) => {
                tracing::warn!(topic = %self.key, error = %e, "cannot resend the last message to a new subscriber")
            }
        }
    }

    /// A subscriber of this process joined: a latched publisher hands it the last message (this
    /// process's other subscribers had it), then the arrival is noted. Called with the
    /// process's local table locked, so no message of this publisher reaches the newcomer
    /// before the last one.
    pub(crate) fn joined_here(&self, newcomer: &crate::feeds::SubShared) {
        if let Some(latch) = &self.latch {
            let local = lock(&latch.last_local).message.clone();
            let last = local.or_else(|| {
                let encoded = lock(&self.state).last_encoded.clone()?;
                match Decoder::default().decode_buffer(&aligned_copy(&encoded)) {
                    Ok((metadata, data)) => Some(Message::new(self.name.clone().into(), metadata, data)),
                    Err(e) => {
                        tracing::warn!(topic = %self.key, error = %e, "cannot decode the last message for a new subscriber");
                        None
                    }
                }
            });
            if let Some(m) = last {
                newcomer.push_local(m);
            }
        }
        self.arrivals.note();
    }

    /// A subscriber appeared on `host`: a latched publisher sends the last message there (every
    /// subscriber of that host gets it: messages travel to a host, not to one subscriber), then
    /// the arrival is noted.
    fn joined_remote(&self, net: &Network, host: &str) {
        if let Some(latch) = &self.latch {
            let _order = lock(&latch.network_order);
            let last = lock(&self.state).last_encoded.clone();
            if let Some(last) = last {
                network::send(net, self.domain, &self.key, &[host.to_owned()], last.to_vec());
            }
        }
        self.arrivals.note();
    }

    /// Keeps what this process's subscribers are handed by a send, when latched.
    fn record_local(&self, message: impl FnOnce() -> Message) {
        if let Some(latch) = &self.latch {
            *lock(&latch.last_local) = LastLocal { message: Some(message()), fresh: true };
        }
    }

    /// Keeps the encoded form of the message being sent, when latched; `st` is the locked state.
    fn record_encoded(&self, st: &mut PubState, bytes: &[u8]) {
        if let Some(latch) = &self.latch {
            let mut local = lock(&latch.last_local);
            if !local.fresh {
                local.message = None;
            }
            local.fresh = false;
            st.last_encoded = Some(Arc::from(bytes));
        }
    }

    /// Hands blocks created by the last lease to every linked subscriber; one that cannot take
    /// them is unlinked (it could not read the message).
    fn announce_new(&self, st: &mut PubState) {
        let fresh = st.outlet.fan_out_mut().pool_mut().take_new_blocks();
        if fresh.is_empty() {
            return;
        }
        let mut broken = Vec::new();
        for p in &st.peers {
            if let Err(e) = fresh.iter().try_for_each(|b| announce(&p.sock, b)) {
                tracing::warn!(topic = %self.key, error = %e, "subscriber not answering; unlinked");
                broken.push(p.edge);
            }
        }
        for edge in broken {
            st.peers.retain(|p| p.edge != edge);
            st.outlet.fan_out_mut().remove_reader(edge);
        }
        self.peer_count.store(st.peers.len(), Ordering::Release);
    }
}

fn announce(sock: &OwnedFd, b: &NewBlock) -> std::io::Result<()> {
    wire::send(sock.as_fd(), &PublisherMessage::Block { slot: b.slot, seq: b.seq }, b.segment.fd())
}

/// Publishes on a topic: to subscribers in this process (the data itself is passed), in other
/// processes of this host (zero-copy shared memory), found with no broker.
///
/// ```no_run
/// use std::sync::Arc;
/// use nerve_topic::{Publisher, PublisherOptions};
/// use nerve_topic::arrow_array::{ArrayRef, Float64Array};
///
/// let publisher = Publisher::new("robot/pose", PublisherOptions::default())?;
/// let pose: ArrayRef = Arc::new(Float64Array::from(vec![1.0, 2.0, 0.5]));
/// publisher.send(&pose, &Default::default())?;
/// # Ok::<(), nerve_topic::TopicError>(())
/// ```
pub struct Publisher {
    shared: Arc<PubShared>,
    /// Subscribers of this topic in this process (shared with them).
    local_count: Arc<AtomicUsize>,
    remote: Option<Remote>,
    _registration: Option<Registration>,
    never_stop: AtomicBool,
}

impl Publisher {
    /// Starts publishing on `topic`.
    ///
    /// A topic keeps no history: a subscriber gets what is sent once it is reached (see
    /// [`Publisher::wait_for_subscribers`]). A publisher made with
    /// [`PublisherOptions::latched`] keeps its last message and hands it to each subscriber
    /// that joins later, before anything sent after it: to that subscriber only when it is in
    /// this process or another process of this host; to every subscriber of its host when it
    /// is on another host (those already there see the message again).
    ///
    /// # Errors
    /// A bad topic name, or the registry or shared memory cannot be set up.
    pub fn new(topic: &str, options: PublisherOptions) -> Result<Self, TopicError> {
        let resolved = resolve(topic, &options.run)?;
        let topic = resolved.key;
        let rt = runtime()?;
        let id = rt.next_id();
        let pool = OutputPool::anonymous(DEFAULT_CAPACITY)?;
        let outlet = Outlet::new(FanOut::new(pool, Vec::new(), None), options.max_message);
        let shared = Arc::new(PubShared {
            id,
            key: Arc::from(topic.as_str()),
            name: Arc::from(resolved.name.as_str()),
            domain: options.domain,
            rt: rt.clone(),
            state: Mutex::new(PubState { outlet, peers: Vec::new(), last_encoded: None }),
            peer_count: AtomicUsize::new(0),
            arrivals: Arc::new(Arrivals::default()),
            latch: options.latched.then(Latch::default),
        });
        let local_count = {
            let mut local = rt.local();
            let t = local.entry((options.domain, topic.clone())).or_default();
            t.publishers.push(Arc::downgrade(&shared));
            t.subscriber_count.clone()
        };
        let remote = if options.scope >= Scope::Network {
            let net = network()?;
            let (publisher, session) = (Arc::downgrade(&shared), Arc::downgrade(&net));
            let joined: network::Joined = Box::new(move |host| {
                if let (Some(p), Some(net)) = (publisher.upgrade(), session.upgrade()) {
                    p.joined_remote(&net, host);
                }
            });
            let subscribers = RemotePeers::watch(&net, End::Subscriber, options.domain, &topic, Some(joined))?;
            let token = network::announce(&net, End::Publisher, options.domain, id, &topic)?;
            Some(Remote { net, subscribers, _token: token })
        } else {
            None
        };
        let registration = if options.scope >= Scope::Host {
            let feeder: Weak<PubShared> = Arc::downgrade(&shared);
            rt.add_publisher(id, feeder);
            let entry = Entry {
                kind: Kind::Pub,
                pid: rt.pid(),
                id,
                scope: options.scope,
                socket: rt.socket().to_owned(),
                origin: options.origin.clone(),
            };
            Some(Registration::new(options.domain, &topic, &entry)?)
        } else {
            None
        };
        Ok(Self { shared, local_count, remote, _registration: registration, never_stop: AtomicBool::new(false) })
    }

    /// The topic's canonical name.
    #[must_use]
    pub fn topic(&self) -> &str {
        &self.shared.name
    }

    /// Counts the subscribers that joined this publisher — in this process, linked from
    /// another process of the host, announced by another host — and wakes waiters on each.
    /// A publisher whose late subscribers need more than its last message (which a latched
    /// publisher hands them) waits on it and sends that data again.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use nerve_topic::Publisher;
    ///
    /// let publisher = Publisher::new("map", Default::default())?;
    /// let arrivals = publisher.arrivals();
    /// let mut seen = 0;
    /// loop {
    ///     seen = arrivals.wait_past(seen, Duration::from_secs(1));
    ///     // send the map again
    /// }
    /// # Ok::<(), nerve_topic::TopicError>(())
    /// ```
    #[must_use]
    pub fn arrivals(&self) -> Arc<Arrivals> {
        self.shared.arrivals.clone()
    }

    /// Subscribers reached now: in this process, one per linked subscriber process of this
    /// host, and those of other hosts.
    #[must_use]
    pub fn subscriber_count(&self) -> usize {
        let remote = self.remote.as_ref().map_or(0, |r| r.subscribers.count());
        self.local_subscribers().len() + lock(&self.shared.state).peers.len() + remote
    }

    /// Waits up to `timeout` until at least `n` subscribers are reached ([`subscriber_count`]);
    /// returns whether they are. Woken by each subscriber that joins, it never polls. A
    /// subscriber reached gets every message sent from then on (within its queue).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use nerve_topic::Publisher;
    ///
    /// let publisher = Publisher::new("chatter", Default::default())?;
    /// if publisher.wait_for_subscribers(1, Duration::from_secs(5)) {
    ///     publisher.send_bytes(b"hello", &Default::default())?;
    /// }
    /// # Ok::<(), nerve_topic::TopicError>(())
    /// ```
    ///
    /// [`subscriber_count`]: Publisher::subscriber_count
    #[must_use]
    pub fn wait_for_subscribers(&self, n: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            // Read before counting: a subscriber that joins after the count wakes the wait.
            let seen = self.shared.arrivals.count();
            if self.subscriber_count() >= n {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            let _ = self.shared.arrivals.wait_past(seen, left);
        }
    }

    /// Whether a subscriber outside this process exists: only then is a message encoded.
    /// Takes no lock: cheap enough to ask before every send.
    #[must_use]
    pub fn reaches_other_processes(&self) -> bool {
        self.shared.peer_count.load(Ordering::Acquire) > 0
            || self.remote.as_ref().is_some_and(|r| r.subscribers.count() > 0)
    }

    /// Whether a send must encode its message for other processes: when one subscribes, or
    /// always for a latched publisher (it keeps the message for those that join later).
    #[must_use]
    pub fn encodes(&self) -> bool {
        self.shared.latch.is_some() || self.reaches_other_processes()
    }

    /// Whether the publisher keeps its last message for subscribers that join later.
    #[must_use]
    pub fn latched(&self) -> bool {
        self.shared.latch.is_some()
    }

    /// Whether any subscriber exists, here or elsewhere. Takes no lock.
    #[must_use]
    pub fn has_subscribers(&self) -> bool {
        self.local_count.load(Ordering::Acquire) > 0 || self.reaches_other_processes()
    }

    fn local_subscribers(&self) -> Vec<Arc<crate::feeds::SubShared>> {
        let key = (self.shared.domain, self.shared.key.to_string());
        self.shared
            .rt
            .local()
            .get(&key)
            .map(|t| t.subscribers.iter().filter_map(std::sync::Weak::upgrade).collect())
            .unwrap_or_default()
    }

    /// Hands `data` to every subscriber of this process as is; returns how many got it.
    pub fn send_local(&self, data: &ArrayRef, parameters: &Parameters) -> usize {
        self.hand_local(|id, metadata| Message::new(id, metadata, data.clone()), parameters)
    }

    /// Hands a binding's own object to every subscriber of this process as is (see
    /// [`Message::object`]); returns how many got it.
    pub fn send_local_object(&self, object: &Arc<dyn std::any::Any + Send + Sync>, parameters: &Parameters) -> usize {
        self.hand_local(|id, metadata| Message::of_object(id, metadata, object.clone()), parameters)
    }

    fn hand_local(&self, message: impl Fn(crate::InputId, Metadata) -> Message, parameters: &Parameters) -> usize {
        let metadata = || Metadata { timestamp: monotonic_ns(), parameters: parameters.clone(), extension: None };
        // Kept before this process's subscribers are listed: one joining meanwhile gets it
        // from the latch if not from this send.
        self.shared.record_local(|| message(self.shared.name.clone().into(), metadata()));
        if self.local_count.load(Ordering::Acquire) == 0 {
            return 0;
        }
        let subs = self.local_subscribers();
        if subs.is_empty() {
            return 0;
        }
        let metadata = metadata();
        for s in &subs {
            s.push_local(message(self.shared.name.clone().into(), metadata.clone()));
        }
        subs.len()
    }

    /// Sends an Arrow array: subscribers of this process get this very array, others a copy in
    /// shared memory (made once, however many they are).
    ///
    /// # Errors
    /// A message over the limit, an array nerve cannot carry, or no block to be had.
    pub fn send(&self, data: &ArrayRef, parameters: &Parameters) -> Result<(), TopicError> {
        self.send_local(data, parameters);
        if self.encodes() {
            let sample = self.loan_array(&data.to_data(), None, parameters)?;
            self.send_to_other_processes(sample);
        }
        Ok(())
    }

    /// Sends raw bytes (an Arrow `UInt8` array).
    ///
    /// # Errors
    /// As [`Publisher::send`].
    pub fn send_bytes(&self, data: &[u8], parameters: &Parameters) -> Result<(), TopicError> {
        let array: ArrayRef = Arc::new(arrow_array::UInt8Array::from(data.to_vec()));
        self.send(&array, parameters)
    }

    /// Lends `len` bytes of shared memory, sent as a `UInt8` array by
    /// [`Publisher::send_sample`].
    ///
    /// # Errors
    /// A message over the limit, or no block to be had.
    pub fn loan(&self, len: usize, parameters: &Parameters) -> Result<Sample, TopicError> {
        self.loan_primitive(&DataType::UInt8, len, len, parameters)
    }

    /// Like [`Publisher::loan`] for `items` values of a primitive type in `byte_len` bytes.
    ///
    /// # Errors
    /// As [`Publisher::loan`].
    pub fn loan_primitive(
        &self,
        data_type: &DataType,
        items: usize,
        byte_len: usize,
        parameters: &Parameters,
    ) -> Result<Sample, TopicError> {
        let sample = self.lease(|outlet| outlet.loan_primitive(data_type, items, byte_len, parameters))?;
        Ok(sample.with_local_copy(LocalCopy { data_type: data_type.clone(), items, parameters: parameters.clone() }))
    }

    /// A sample already holding a copy of `data`, the storage of `extension` if one is given,
    /// for [`Publisher::send_to_other_processes`] (bindings serve this process's subscribers
    /// with their own objects first).
    ///
    /// # Errors
    /// As [`Publisher::send`].
    pub fn loan_array(
        &self,
        data: &ArrayData,
        extension: Option<&Extension>,
        parameters: &Parameters,
    ) -> Result<Sample, TopicError> {
        self.lease(|outlet| outlet.loan_array(data, extension, parameters))
    }

    /// A sample of `byte_len` bytes for one row-major tensor of `shape` with values of the
    /// primitive type `value_type`, to fill and send with
    /// [`Publisher::send_to_other_processes`]: other processes receive Arrow's fixed-shape
    /// tensor, shape included (see [`Extension::fixed_shape_tensor`]).
    ///
    /// # Errors
    /// As [`Publisher::loan`].
    pub fn loan_tensor(
        &self,
        value_type: &DataType,
        shape: &[usize],
        byte_len: usize,
        parameters: &Parameters,
    ) -> Result<Sample, TopicError> {
        self.lease(|outlet| outlet.loan_tensor(value_type, shape, byte_len, parameters))
    }

    /// Names the topic in a size error.
    fn sized(&self, e: nerve_shm::ShmError) -> TopicError {
        match e {
            nerve_shm::ShmError::TooLarge { len, limit } => {
                TopicError::TooLarge { topic: self.shared.name.to_string(), len, limit }
            }
            other => TopicError::Shm(other),
        }
    }

    fn lease(&self, take: impl FnOnce(&mut Outlet) -> Result<Loan, nerve_shm::ShmError>) -> Result<Sample, TopicError> {
        let mut st = lock(&self.shared.state);
        let loan = take(&mut st.outlet).map_err(|e| self.sized(e))?;
        self.shared.announce_new(&mut st);
        Ok(Sample::new(loan, self.shared.key.clone()))
    }

    /// Sends a filled sample to every subscriber: in shared memory to other processes, and as a
    /// copy to this process's subscribers (the lent memory belongs to the others' readers).
    ///
    /// # Errors
    /// The sample back, unsent: when another endpoint lent it, or its values cannot form an
    /// array of its type (this process's copy).
    // The unsent sample comes back by value, as tokio's `SendError<T>` does: a large error
    // costs a move on a failed send, never on one that succeeds.
    #[allow(clippy::result_large_err)]
    pub fn send_sample(&self, mut sample: Sample) -> Result<(), SendError<Sample>> {
        let refuse = |sample, reason| Err(SendError { sample, endpoint: self.shared.key.to_string(), reason });
        if !lock(&self.shared.state).outlet.lent(sample.loan()) {
            let lent_by = sample.endpoint().to_owned();
            return refuse(sample, SendFailure::LentElsewhere { lent_by });
        }
        if let Some(LocalCopy { data_type, items, parameters }) = sample.take_local_copy()
            && (self.latched() || !self.local_subscribers().is_empty())
        {
            let bytes = arrow_buffer::Buffer::from(sample.data_mut().to_vec());
            match ArrayData::try_new(data_type.clone(), items, None, 0, vec![bytes], vec![]) {
                Ok(copy) => {
                    self.send_local(&arrow_array::make_array(copy), &parameters);
                }
                Err(e) => {
                    let sample = sample.with_local_copy(LocalCopy { data_type, items, parameters });
                    return refuse(sample, SendFailure::BadValues(e.to_string()));
                }
            }
        }
        self.send_to_other_processes(sample);
        Ok(())
    }

    /// Sends a message already encoded by a dataflow output (nerve's message layout), keeping
    /// its stamp and parameters: how a node's output is also published as a topic. This
    /// process's subscribers get a decoded copy.
    ///
    /// # Errors
    /// A malformed or oversized message, or no block to be had.
    pub fn send_encoded(&self, message: &[u8]) -> Result<(), TopicError> {
        let _order = self.shared.latch.as_ref().map(|l| lock(&l.network_order));
        if self.latched() {
            // Kept before this process's subscribers are listed (see `hand_local`).
            self.shared.record_encoded(&mut lock(&self.shared.state), message);
        }
        let subs = if self.local_count.load(Ordering::Acquire) > 0 { self.local_subscribers() } else { Vec::new() };
        if !subs.is_empty() {
            let (metadata, data) = Decoder::default().decode_buffer(&aligned_copy(message))?;
            for s in &subs {
                s.push_local(Message::new(self.shared.name.clone().into(), metadata.clone(), data.clone()));
            }
        }
        let mut st = lock(&self.shared.state);
        if !st.peers.is_empty() {
            let copy = st.outlet.copy_encoded(message).map_err(|e| self.sized(e))?;
            self.shared.announce_new(&mut st);
            st.outlet.send_copy(copy, &self.never_stop);
        }
        drop(st);
        let hosts = self.remote.as_ref().map(|r| r.subscribers.hosts()).unwrap_or_default();
        if let (false, Some(r)) = (hosts.is_empty(), &self.remote) {
            network::send(&r.net, self.shared.domain, &self.shared.key, &hosts, message.to_vec());
        }
        Ok(())
    }

    /// Sends a filled sample of this publisher to the subscribers of other processes only: in
    /// shared memory on this host, over the network once per other host that has subscribers.
    /// A sample lent by another endpoint is dropped unsent, with a warning (see
    /// [`Publisher::send_sample`], which hands it back instead).
    pub fn send_to_other_processes(&self, sample: Sample) {
        let _order = self.shared.latch.as_ref().map(|l| lock(&l.network_order));
        let hosts = self.remote.as_ref().map(|r| r.subscribers.hosts()).unwrap_or_default();
        let mut wire_copy = None;
        let mut latched = None;
        let mut st = lock(&self.shared.state);
        if !st.outlet.lent(sample.loan()) {
            tracing::warn!(topic = %self.shared.key, lent_by = sample.endpoint(), "a sample of another endpoint dropped");
            return;
        }
        let done = st.outlet.send_with(sample.into_loan(), &self.never_stop, |bytes| {
            if !hosts.is_empty() {
                wire_copy = Some(bytes.to_vec());
            }
            if self.latched() {
                latched = Some(bytes.to_vec());
            }
        });
        if let Some(bytes) = latched {
            self.shared.record_encoded(&mut st, &bytes);
        }
        drop(st);
        tracing::trace!(topic = %self.shared.key, delivered = done.delivered, evicted = done.evicted, "published");
        // Sent outside the lock: a slow network must not hold up links on this host.
        if let (Some(bytes), Some(r)) = (wire_copy, &self.remote) {
            network::send(&r.net, self.shared.domain, &self.shared.key, &hosts, bytes);
        }
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        let rt = &self.shared.rt;
        let key = (self.shared.domain, self.shared.key.to_string());
        if let Some(t) = rt.local().get_mut(&key) {
            let mine = Arc::as_ptr(&self.shared);
            t.publishers.retain(|p| !std::ptr::eq(p.as_ptr(), mine) && p.strong_count() > 0);
        }
        rt.remove_publisher(self.shared.id);
    }
}

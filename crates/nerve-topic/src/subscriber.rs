//! The receiving end of a topic.

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use nerve_shm::channel::Input;
use nerve_shm::codec::Decoder;
use nerve_shm::doorbell::Spin;
use nerve_shm::inbox::{Inbox, QueueShape};
use nerve_shm::pool::{BlockCache, BlockTable, HandedBlocks};
use nerve_shm::ring::Policy;
use nerve_shm::segment::{Access, Segment};
use nerve_shm::sync::lock;

use crate::error::TopicError;
use crate::message::Message;
use crate::network::{RemoteFeed, network};
use crate::registry::{Entry, Kind, Registration, Scope};
use crate::runtime::{Runtime, runtime};
use nerve_message::channel_table::TOPIC_FEEDS;

/// How a subscriber is set up.
#[derive(Debug, Clone)]
pub struct SubscriberOptions {
    /// Group of endpoints that see each other (two domains never do).
    pub domain: u32,
    /// How far away publishers may be.
    pub scope: Scope,
    /// Messages kept per publisher while the subscriber is busy; past it the oldest go.
    pub queue_size: usize,
    /// Keep only the newest message (a queue of one): never stale, never slows anyone.
    pub keep_latest: bool,
}

impl Default for SubscriberOptions {
    fn default() -> Self {
        Self { domain: 0, scope: Scope::Network, queue_size: 10, keep_latest: false }
    }
}

/// One publisher process feeding this subscriber, through queue number `ring` of its inbox.
struct Feed {
    publisher: (u32, u64),
    /// The link, until the publisher welcomes us (then the block table holds it).
    sock: Option<Arc<OwnedFd>>,
    handed: Option<Arc<HandedBlocks>>,
    input: Option<(Input, Decoder)>,
    /// The publisher is gone: drain what it queued, then free the queue.
    ended: bool,
    /// Since when the oldest message has waited for its block to be handed over.
    waiting_since: Option<Instant>,
}

struct SubState {
    local: VecDeque<Message>,
    /// Drops counted by the local queue and by the queues of publishers that are gone.
    dropped: u64,
    feeds: Vec<Option<Feed>>,
    full_warned: bool,
}

/// What the subscriber handle, the topic thread and local publishers share.
pub(crate) struct SubShared {
    pub(crate) id: u64,
    pub(crate) topic: Arc<str>,
    pub(crate) domain: u32,
    pub(crate) shape: QueueShape,
    /// The inbox the queues are in: the subscriber's own, or its node's.
    pub(crate) inbox: Arc<Inbox>,
    /// Index of the first of the subscriber's [`TOPIC_FEEDS`] queues in `inbox`.
    pub(crate) first: usize,
    state: Mutex<SubState>,
    /// Bit per queue that has a linked input.
    attached: AtomicU64,
    local_pending: AtomicUsize,
    ended_pending: AtomicBool,
    /// A [`RecvWaker`] asked the current or next `recv` to return.
    woken: AtomicBool,
    /// The last look found a message whose block is still being handed over.
    handing_over: AtomicBool,
}

impl SubShared {
    /// Reserves a queue for `publisher`; `None` when already linked to it or out of queues.
    pub(crate) fn reserve_feed(&self, publisher: (u32, u64)) -> Option<usize> {
        let mut st = lock(&self.state);
        if st.feeds.iter().flatten().any(|f| f.publisher == publisher) {
            return None;
        }
        let Some(ring) = st.feeds.iter().position(Option::is_none) else {
            if !st.full_warned {
                st.full_warned = true;
                tracing::warn!(topic = %self.topic, "a subscriber follows at most {TOPIC_FEEDS} publisher processes");
            }
            return None;
        };
        st.feeds[ring] =
            Some(Feed { publisher, sock: None, handed: None, input: None, ended: false, waiting_since: None });
        Some(ring)
    }

    pub(crate) fn release_feed(&self, ring: usize) {
        lock(&self.state).feeds[ring] = None;
    }

    pub(crate) fn dialed(&self, ring: usize, sock: Arc<OwnedFd>, handed: Arc<HandedBlocks>) {
        if let Some(f) = lock(&self.state).feeds[ring].as_mut() {
            f.sock = Some(sock);
            f.handed = Some(handed);
        }
    }

    /// The publisher accepted us as reader bit `edge` and sent its block table.
    pub(crate) fn welcomed(
        &self,
        ring: usize,
        edge: usize,
        table: &OwnedFd,
        handed: Arc<HandedBlocks>,
    ) -> Result<(), nerve_shm::ShmError> {
        let mut st = lock(&self.state);
        let Some(f) = st.feeds[ring].as_mut() else {
            return Ok(());
        };
        let mut table = BlockTable::from_segment(Segment::from_fd("nerve-pool", table, Access::ReadWrite)?)?;
        if let Some(sock) = f.sock.take() {
            table = table.keep_alive(sock);
        }
        let cache = BlockCache::handed(table, handed, edge);
        f.input = Some((Input::new(self.inbox.clone(), self.first + ring, cache, None), Decoder::default()));
        self.attached.fetch_or(1 << ring, Ordering::AcqRel);
        drop(st);
        self.inbox.doorbell().ring();
        Ok(())
    }

    /// The publisher's link ended (it closed, or its process died).
    pub(crate) fn feed_ended(&self, ring: usize) {
        let mut st = lock(&self.state);
        if let Some(f) = st.feeds[ring].as_mut() {
            f.ended = true;
            f.sock = None;
            if f.input.is_none() {
                st.feeds[ring] = None;
            }
        }
        drop(st);
        self.ended_pending.store(true, Ordering::Release);
        self.inbox.doorbell().ring();
    }

    /// Queues a message from a publisher of this process, or from another host.
    pub(crate) fn push_local(&self, m: Message) {
        let mut st = lock(&self.state);
        st.local.push_back(m);
        if st.local.len() > self.shape.capacity {
            st.local.pop_front();
            st.dropped += 1;
        }
        self.local_pending.store(st.local.len(), Ordering::Release);
        drop(st);
        self.inbox.doorbell().ring();
    }

    /// Whether a message (or a queue to reap) waits; takes no lock.
    fn has_pending(&self) -> bool {
        if self.local_pending.load(Ordering::Acquire) > 0 || self.ended_pending.load(Ordering::Acquire) {
            return true;
        }
        let mut bits = self.attached.load(Ordering::Acquire);
        while bits != 0 {
            let ring = bits.trailing_zeros() as usize;
            if !self.inbox.ring(self.first + ring).is_empty() {
                return true;
            }
            bits &= bits - 1;
        }
        false
    }

    /// Frees the queues of publishers that are gone and whose messages were all taken.
    fn reap(&self, st: &mut SubState) {
        if !self.ended_pending.swap(false, Ordering::AcqRel) {
            return;
        }
        for (ring, slot) in st.feeds.iter_mut().enumerate() {
            let Some(f) = slot else { continue };
            if !f.ended {
                continue;
            }
            if f.input.as_ref().is_some_and(|(input, _)| !input.is_empty()) {
                self.ended_pending.store(true, Ordering::Release);
                continue;
            }
            st.dropped += f.input.as_ref().map_or(0, |(input, _)| input.dropped());
            self.attached.fetch_and(!(1 << ring), Ordering::AcqRel);
            *slot = None;
            self.inbox.ring(self.first + ring).init(self.shape.policy);
        }
    }

    /// Where the oldest waiting message is: its stamp, and its feed (`None`: the local queue).
    ///
    /// A message whose block descriptor is still on its way is passed over (and
    /// `handing_over` set): waiting for it here, under the state lock, could stall the topic
    /// thread that files it.
    fn oldest(&self, st: &mut SubState) -> Option<(u64, Option<usize>)> {
        self.reap(st);
        let mut oldest: Option<(u64, Option<usize>)> = st.local.front().map(|m| (m.metadata.timestamp, None));
        let mut waiting = false;
        let now = Instant::now();
        for (ring, f) in st.feeds.iter_mut().enumerate() {
            if let Some(Feed { input: Some((input, _)), waiting_since, .. }) = f
                && let Some(stamp) = input.peek_stamp()
                && oldest.is_none_or(|(best, _)| stamp < best)
            {
                // A block is handed over before any message in it, so the wait is short; past
                // HAND_OVER_WAIT the message is taken anyway and reported as unreadable.
                let since = *waiting_since.get_or_insert(now);
                if input.front_ready() || now.duration_since(since) > HAND_OVER_WAIT {
                    *waiting_since = None;
                    oldest = Some((stamp, Some(ring)));
                } else {
                    waiting = true;
                }
            }
        }
        self.handing_over.store(waiting && oldest.is_none(), Ordering::Release);
        oldest
    }

    /// Stamp of the oldest message that can be taken now.
    fn peek_stamp(&self) -> Option<u64> {
        let mut st = lock(&self.state);
        self.oldest(&mut st).map(|(stamp, _)| stamp)
    }

    /// The oldest waiting message, from this process or another.
    fn take(&self) -> Result<Taken, TopicError> {
        let mut st = lock(&self.state);
        match self.oldest(&mut st) {
            None if self.handing_over.load(Ordering::Acquire) => Ok(Taken::Waiting),
            None => Ok(Taken::Nothing),
            Some((_, None)) => {
                let m = st.local.pop_front();
                self.local_pending.store(st.local.len(), Ordering::Release);
                Ok(m.map_or(Taken::Nothing, Taken::Message))
            }
            Some((_, Some(ring))) => {
                let Some(Feed { input: Some((input, decoder)), .. }) = st.feeds[ring].as_mut() else {
                    return Ok(Taken::Nothing);
                };
                let Some(got) = input.recv() else {
                    return Ok(Taken::Nothing);
                };
                let (metadata, data) = got.and_then(|(block, len)| decoder.decode(block, len))?;
                Ok(Taken::Message(Message::new(self.topic.clone().into(), metadata, data)))
            }
        }
    }
}

/// What [`SubShared::take`] found.
enum Taken {
    Message(Message),
    Nothing,
    /// A message waits for its block's descriptor, which the topic thread is about to file.
    Waiting,
}

/// How long to pause before looking again at a message whose block is still being handed over.
pub const HAND_OVER_PAUSE: Duration = Duration::from_micros(50);

fn queue_shape(options: &SubscriberOptions) -> Result<QueueShape, TopicError> {
    Subscriber::queue_shape(options)
}
/// How long a message may wait for its block before it is given up as unreadable.
const HAND_OVER_WAIT: Duration = Duration::from_secs(5);

/// Receives a topic's messages from publishers in this process and in other processes of this
/// host, oldest first, found with no broker; it keeps receiving when publishers come, go or
/// restart.
///
/// ```no_run
/// use std::time::Duration;
/// use nerve_topic::{Subscriber, SubscriberOptions};
///
/// let poses = Subscriber::new("robot/pose", SubscriberOptions { keep_latest: true, ..Default::default() })?;
/// while let Some(m) = poses.recv(Some(Duration::from_secs(1)))? {
///     println!("pose at {}: {:?}", m.timestamp(), m.data);
/// }
/// # Ok::<(), nerve_topic::TopicError>(())
/// ```
pub struct Subscriber {
    shared: Arc<SubShared>,
    rt: Arc<Runtime>,
    remote: Option<RemoteFeed>,
    _registration: Option<Registration>,
    spin: Spin,
}

impl Subscriber {
    /// Subscribes to `topic`, with queues in an inbox of its own.
    ///
    /// # Errors
    /// A bad topic name or queue size, or the registry or shared memory cannot be set up.
    pub fn new(topic: &str, options: SubscriberOptions) -> Result<Self, TopicError> {
        let shape = queue_shape(&options)?;
        let feeds = if options.scope >= Scope::Host { TOPIC_FEEDS } else { 0 };
        let inbox = Arc::new(Inbox::anonymous("nerve-inbox", &vec![shape; feeds])?);
        Self::start(topic, options, inbox, 0)
    }

    /// Subscribes to `topic` with its queues in an inbox its owner already has: queues
    /// `first..first + TOPIC_FEEDS` of `inbox`, each of [`Subscriber::queue_shape`]. Messages then
    /// ring the owner's doorbell, so the owner waits for this topic and for everything else its
    /// inbox serves in one sleep: how a dataflow node's topic input (`inputs: {x: topic/...}`)
    /// is woken exactly like its other inputs. The owner waits on the inbox's doorbell until
    /// [`Subscriber::has_pending`], then takes messages with [`Subscriber::try_recv`].
    ///
    /// # Errors
    /// As [`Subscriber::new`], and [`TopicError::InboxQueues`] when the inbox lacks the queues.
    pub fn in_inbox(
        topic: &str,
        options: SubscriberOptions,
        inbox: Arc<Inbox>,
        first: usize,
    ) -> Result<Self, TopicError> {
        let shape = queue_shape(&options)?;
        let end = first.checked_add(TOPIC_FEEDS).filter(|&end| end <= inbox.len());
        if end.is_none() || (first..first + TOPIC_FEEDS).any(|i| inbox.queue_shape(i) != shape) {
            return Err(TopicError::InboxQueues {
                topic: topic.to_owned(),
                why: format!(
                    "queues {first}..{} of {shape:?} expected, the inbox has {} queues",
                    first + TOPIC_FEEDS,
                    inbox.len()
                ),
            });
        }
        Self::start(topic, options, inbox, first)
    }

    /// The shape of each of a subscriber's queues (one per publisher process) under `options`.
    ///
    /// # Errors
    /// [`TopicError::BadQueueSize`] for a queue of zero entries.
    pub fn queue_shape(options: &SubscriberOptions) -> Result<QueueShape, TopicError> {
        if options.queue_size == 0 {
            return Err(TopicError::BadQueueSize(0));
        }
        let capacity = if options.keep_latest { 1 } else { options.queue_size };
        Ok(QueueShape { capacity, policy: Policy::DropOldest })
    }

    fn start(topic: &str, options: SubscriberOptions, inbox: Arc<Inbox>, first: usize) -> Result<Self, TopicError> {
        let topic = crate::name::canonical(topic)?;
        let shape = queue_shape(&options)?;
        let rt = runtime()?;
        let id = rt.next_id();
        let shared = Arc::new(SubShared {
            id,
            topic: Arc::from(topic.as_str()),
            domain: options.domain,
            shape,
            inbox,
            first,
            state: Mutex::new(SubState {
                local: VecDeque::new(),
                dropped: 0,
                feeds: (0..TOPIC_FEEDS).map(|_| None).collect(),
                full_warned: false,
            }),
            attached: AtomicU64::new(0),
            local_pending: AtomicUsize::new(0),
            ended_pending: AtomicBool::new(false),
            woken: AtomicBool::new(false),
            handing_over: AtomicBool::new(false),
        });
        {
            let mut local = rt.local();
            let t = local.entry((options.domain, topic.clone())).or_default();
            t.subscribers.push(Arc::downgrade(&shared));
            t.subscriber_count.fetch_add(1, Ordering::AcqRel);
            t.arrivals.iter().filter_map(Weak::upgrade).for_each(|a| a.note());
        }
        let registration = if options.scope >= Scope::Host {
            let entry =
                Entry { kind: Kind::Sub, pid: rt.pid(), id, scope: options.scope, socket: rt.socket().to_owned() };
            let registration = Registration::new(options.domain, &topic, &entry)?;
            rt.add_subscriber(&shared)?;
            Some(registration)
        } else {
            None
        };
        let remote = if options.scope >= Scope::Network {
            Some(RemoteFeed::declare(network()?, options.domain, &topic, id, deliver_to(&shared))?)
        } else {
            None
        };
        Ok(Self { shared, rt, remote, _registration: registration, spin: Spin::from_env() })
    }

    /// The topic's canonical name.
    #[must_use]
    pub fn topic(&self) -> &str {
        &self.shared.topic
    }

    /// Publishers reaching this subscriber now: in this process, plus linked ones elsewhere.
    #[must_use]
    pub fn publisher_count(&self) -> usize {
        let key = (self.shared.domain, self.shared.topic.to_string());
        let local = self.rt.local().get(&key).map_or(0, |t| t.publishers);
        let linked = lock(&self.shared.state).feeds.iter().flatten().filter(|f| f.input.is_some() && !f.ended).count();
        let remote = self.remote.as_ref().map_or(0, |r| r.publishers.count());
        local + linked + remote
    }

    /// Messages lost so far because this subscriber's queues were full (oldest dropped first).
    #[must_use]
    pub fn dropped(&self) -> u64 {
        let st = lock(&self.shared.state);
        let rings: u64 = st.feeds.iter().flatten().filter_map(|f| f.input.as_ref()).map(|(i, _)| i.dropped()).sum();
        st.dropped + rings
    }

    /// Whether a message waits to be taken (or the subscriber has housekeeping to do, which the
    /// next [`Subscriber::try_recv`] does); takes no lock. What an owner of the inbox (see
    /// [`Subscriber::in_inbox`]) checks before sleeping on its doorbell.
    #[must_use]
    pub fn has_pending(&self) -> bool {
        self.shared.has_pending()
    }

    /// Send stamp of the oldest message that can be taken now: how an owner waiting for several
    /// sources at once takes them oldest first.
    #[must_use]
    pub fn peek_stamp(&self) -> Option<u64> {
        if self.shared.has_pending() { self.shared.peek_stamp() } else { None }
    }

    /// Whether the last look found only a message whose shared memory is still being handed
    /// over by its publisher (it takes microseconds): an owner waiting on the inbox should look
    /// again after [`HAND_OVER_PAUSE`] rather than sleep on the doorbell, which has rung already.
    #[must_use]
    pub fn handing_over(&self) -> bool {
        self.shared.handing_over.load(Ordering::Acquire)
    }

    /// Waits up to `timeout` (forever with `None`; not at all with zero) for the next message;
    /// `Ok(None)` when the timeout passes or a [`RecvWaker`] cuts the wait short.
    ///
    /// # Errors
    /// A message that cannot be decoded (it is skipped; the next call goes on).
    pub fn recv(&self, timeout: Option<Duration>) -> Result<Option<Message>, TopicError> {
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            let waiting = match self.shared.take()? {
                Taken::Message(m) => return Ok(Some(m)),
                Taken::Waiting => true,
                Taken::Nothing if self.shared.woken.swap(false, Ordering::AcqRel) => return Ok(None),
                Taken::Nothing => false,
            };
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(None);
            }
            if waiting {
                std::thread::sleep(HAND_OVER_PAUSE);
                continue;
            }
            let shared = &self.shared;
            self.spin.wait(shared.inbox.doorbell(), deadline, || {
                (shared.has_pending() || shared.woken.load(Ordering::Acquire)).then_some(())
            });
        }
    }

    /// Whether the message last returned came after a sleep (rather than being there at once,
    /// coming within the poll, or after a timeout); asked once per message: the reader may be
    /// one of several that message woke.
    #[must_use]
    pub fn take_slept(&self) -> bool {
        self.spin.take_slept()
    }

    /// A handle that another thread can use to end this subscriber's wait: how a thread blocked
    /// in [`Subscriber::recv`] is told to look up (to stop, say) without polling.
    #[must_use]
    pub fn waker(&self) -> RecvWaker {
        RecvWaker(Arc::downgrade(&self.shared))
    }

    /// The next message if one is waiting.
    ///
    /// # Errors
    /// As [`Subscriber::recv`].
    pub fn try_recv(&self) -> Result<Option<Message>, TopicError> {
        match self.shared.take()? {
            Taken::Message(m) => Ok(Some(m)),
            Taken::Nothing | Taken::Waiting => Ok(None),
        }
    }
}

/// Ends a [`Subscriber::recv`] under way, or else the next one, with `Ok(None)` (as a timeout
/// would); messages already queued are still returned first. Does nothing once the subscriber is
/// dropped.
#[derive(Debug, Clone)]
pub struct RecvWaker(Weak<SubShared>);

impl RecvWaker {
    /// Wakes the subscriber's waiting `recv`.
    pub fn wake(&self) {
        if let Some(shared) = self.0.upgrade() {
            shared.woken.store(true, Ordering::Release);
            shared.inbox.doorbell().ring();
        }
    }
}

/// Hands messages arriving from the network to the subscriber, as long as it lives.
fn deliver_to(shared: &Arc<SubShared>) -> impl Fn(arrow_buffer::Buffer) + Send + Sync + 'static {
    let sub = Arc::downgrade(shared);
    let topic = shared.topic.clone();
    let decoder = Mutex::new(Decoder::default());
    move |bytes| {
        let Some(sub) = sub.upgrade() else { return };
        match lock(&decoder).decode_buffer(&bytes) {
            Ok((metadata, data)) => {
                sub.push_local(Message::new(topic.clone().into(), metadata, data));
            }
            Err(e) => tracing::warn!(%topic, error = %e, "malformed message from the network dropped"),
        }
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        let key = (self.shared.domain, self.shared.topic.to_string());
        if let Some(t) = self.rt.local().get_mut(&key) {
            let me = Arc::downgrade(&self.shared);
            t.subscribers.retain(|w| !Weak::ptr_eq(w, &me) && w.strong_count() > 0);
            t.subscriber_count.fetch_sub(1, Ordering::AcqRel);
        }
        self.rt.remove_subscriber(self.shared.id);
    }
}

//! The receiving end of a topic.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use nerve_shm::codec::Decoder;
use nerve_shm::doorbell::Spin;
use nerve_shm::inbox::{Inbox, QueueShape};
use nerve_shm::ring::Policy;
use nerve_shm::sync::lock;

use crate::error::TopicError;
use crate::feeds::{SubShared, Taken};
use crate::message::Message;
use crate::network::{RemoteFeed, network};
use crate::registry::{Entry, Kind, Registration, Scope};
use crate::run_scope::{RunScope, resolve};
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
    /// Whose topic it is: this process's run's by default (see [`crate::run_scope`]).
    pub run: RunScope,
}

impl Default for SubscriberOptions {
    fn default() -> Self {
        Self { domain: 0, scope: Scope::Network, queue_size: 10, keep_latest: false, run: RunScope::Inherit }
    }
}

/// How long to pause before looking again at a message whose block is still being handed over.
pub const HAND_OVER_PAUSE: Duration = Duration::from_micros(50);

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
        let shape = Self::queue_shape(&options)?;
        let feeds = if options.scope >= Scope::Host { TOPIC_FEEDS } else { 0 };
        let inbox = Arc::new(Inbox::anonymous("nerve-inbox", &vec![shape; feeds])?);
        Self::start(topic, options, shape, inbox, 0)
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
        let shape = Self::queue_shape(&options)?;
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
        Self::start(topic, options, shape, inbox, first)
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

    fn start(
        topic: &str,
        options: SubscriberOptions,
        shape: QueueShape,
        inbox: Arc<Inbox>,
        first: usize,
    ) -> Result<Self, TopicError> {
        let resolved = resolve(topic, &options.run)?;
        let topic = resolved.key;
        let rt = runtime()?;
        let id = rt.next_id();
        let names = (Arc::from(topic.as_str()), Arc::from(resolved.name.as_str()));
        let shared = Arc::new(SubShared::new(id, names, options.domain, shape, inbox, first));
        {
            let mut local = rt.local();
            let t = local.entry((options.domain, topic.clone())).or_default();
            t.subscribers.push(Arc::downgrade(&shared));
            t.subscriber_count.fetch_add(1, Ordering::AcqRel);
            t.publishers.iter().filter_map(Weak::upgrade).for_each(|p| p.joined_here(&shared));
        }
        let registration = if options.scope >= Scope::Host {
            let entry = Entry {
                kind: Kind::Sub,
                pid: rt.pid(),
                id,
                scope: options.scope,
                socket: rt.socket().to_owned(),
                origin: None,
            };
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
        &self.shared.name
    }

    /// Publishers reaching this subscriber now: in this process, plus linked ones elsewhere.
    #[must_use]
    pub fn publisher_count(&self) -> usize {
        let key = (self.shared.domain, self.shared.key.to_string());
        let local = self.rt.local().get(&key).map_or(0, |t| t.publishers.len());
        let linked = self.shared.linked_publishers();
        let remote = self.remote.as_ref().map_or(0, |r| r.publishers.count());
        local + linked + remote
    }

    /// Messages lost so far because this subscriber's queues were full (oldest dropped first).
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.shared.dropped()
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
    let topic = shared.name.clone();
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
        let key = (self.shared.domain, self.shared.key.to_string());
        if let Some(t) = self.rt.local().get_mut(&key) {
            let me = Arc::downgrade(&self.shared);
            t.subscribers.retain(|w| !Weak::ptr_eq(w, &me) && w.strong_count() > 0);
            t.subscriber_count.fetch_sub(1, Ordering::AcqRel);
        }
        self.rt.remove_subscriber(self.shared.id);
    }
}

//! What a subscriber's handle, the process's topic thread and the publishers of the process
//! share: one queue per publisher process feeding the subscriber (its feeds), and the local
//! queue of messages from publishers in this process.

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nerve_message::channel_table::TOPIC_FEEDS;
use nerve_shm::channel::Input;
use nerve_shm::codec::Decoder;
use nerve_shm::inbox::{Inbox, QueueShape};
use nerve_shm::pool::{BlockCache, BlockTable, HandedBlocks};
use nerve_shm::segment::{Access, Segment};
use nerve_shm::sync::lock;

use crate::error::TopicError;
use crate::message::Message;

/// How long a message may wait for its block before it is given up as unreadable.
const HAND_OVER_WAIT: Duration = Duration::from_secs(5);

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
    /// The key endpoints meet by ([`crate::run_scope::Resolved::key`]).
    pub(crate) key: Arc<str>,
    /// The topic's name: its messages' id.
    pub(crate) name: Arc<str>,
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
    /// A [`RecvWaker`](crate::RecvWaker) asked the current or next `recv` to return.
    pub(crate) woken: AtomicBool,
    /// The last look found a message whose block is still being handed over.
    pub(crate) handing_over: AtomicBool,
}

impl SubShared {
    /// The shared state of subscriber `id` of `topic`, whose queues are `first..first +
    /// TOPIC_FEEDS` of `inbox`, each of `shape`.
    pub(crate) fn new(
        id: u64,
        (key, name): (Arc<str>, Arc<str>),
        domain: u32,
        shape: QueueShape,
        inbox: Arc<Inbox>,
        first: usize,
    ) -> Self {
        Self {
            id,
            key,
            name,
            domain,
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
        }
    }

    /// Publisher processes linked now, their queues still open.
    pub(crate) fn linked_publishers(&self) -> usize {
        lock(&self.state).feeds.iter().flatten().filter(|f| f.input.is_some() && !f.ended).count()
    }

    /// Messages lost so far because the queues were full (oldest dropped first).
    pub(crate) fn dropped(&self) -> u64 {
        let st = lock(&self.state);
        let rings: u64 = st.feeds.iter().flatten().filter_map(|f| f.input.as_ref()).map(|(i, _)| i.dropped()).sum();
        st.dropped + rings
    }

    /// Reserves a queue for `publisher`; `None` when already linked to it or out of queues.
    pub(crate) fn reserve_feed(&self, publisher: (u32, u64)) -> Option<usize> {
        let mut st = lock(&self.state);
        if st.feeds.iter().flatten().any(|f| f.publisher == publisher) {
            return None;
        }
        let Some(ring) = st.feeds.iter().position(Option::is_none) else {
            if !st.full_warned {
                st.full_warned = true;
                tracing::warn!(topic = %self.key, "a subscriber follows at most {TOPIC_FEEDS} publisher processes");
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
    pub(crate) fn has_pending(&self) -> bool {
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
        // Only linked feeds: a node reads its topic through up to TOPIC_FEEDS queues, and looks
        // here twice per message.
        let mut bits = self.attached.load(Ordering::Acquire);
        while bits != 0 {
            let ring = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if let Some(Feed { input: Some((input, _)), waiting_since, .. }) = &mut st.feeds[ring]
                && let Some(stamp) = input.peek_stamp()
                && oldest.is_none_or(|(best, _)| stamp < best)
            {
                // A block is handed over before any message in it, so the wait is short; past
                // HAND_OVER_WAIT the message is taken anyway and reported as unreadable.
                let ready =
                    input.front_ready() || waiting_since.get_or_insert_with(Instant::now).elapsed() > HAND_OVER_WAIT;
                if ready {
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
    pub(crate) fn peek_stamp(&self) -> Option<u64> {
        let mut st = lock(&self.state);
        self.oldest(&mut st).map(|(stamp, _)| stamp)
    }

    /// The oldest waiting message, from this process or another.
    pub(crate) fn take(&self) -> Result<Taken, TopicError> {
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
                Ok(Taken::Message(Message::new(self.name.clone().into(), metadata, data)))
            }
        }
    }
}

/// What [`SubShared::take`] found.
pub(crate) enum Taken {
    Message(Message),
    Nothing,
    /// A message waits for its block's descriptor, which the topic thread is about to file.
    Waiting,
}

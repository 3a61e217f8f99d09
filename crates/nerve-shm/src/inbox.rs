//! A node's inbox: one queue per input and the doorbell the node sleeps on.
//!
//! The runtime creates every inbox before any node starts; producers map the inboxes of their
//! readers to queue descriptors and ring the doorbell, the node maps its own to consume.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::doorbell::Doorbell;
use crate::error::ShmError;
use crate::ring::{Policy, Ring, ring_bytes};
use crate::segment::{Access, Segment};

const MAGIC: u64 = 0x4e45_5256_494e_4258; // "NERVINBX"
/// Layout version of inboxes; bumped on any change to the shared-memory layout.
pub const INBOX_VERSION: u32 = 2;

#[repr(C, align(64))]
struct InboxHeader {
    magic: AtomicU64,
    version: AtomicU32,
    n_rings: AtomicU32,
    doorbell: Doorbell,
    liveness: Liveness,
}

/// What the owning node shows of its liveness (`health_check_timeout`), on a cache line of its
/// own: written by the node on each call, read by the runtime now and then, while producers
/// ring the doorbell.
#[repr(C, align(64))]
struct Liveness {
    /// Calls into nerve's node API (an event asked for, a message sent), counted.
    calls: AtomicU64,
    /// Threads of the node waiting for its next event right now.
    waiting: AtomicU32,
}

/// Shape of one input queue, as the channel table gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct QueueShape {
    /// Entries the queue holds.
    pub capacity: usize,
    /// What a full queue does.
    pub policy: Policy,
}

/// A mapped inbox.
#[derive(Debug)]
pub struct Inbox {
    segment: Segment,
    queues: Vec<(usize, QueueShape)>,
}

impl Inbox {
    fn layout(queues: &[QueueShape]) -> (Vec<(usize, QueueShape)>, usize) {
        let mut offset = std::mem::size_of::<InboxHeader>();
        let mut placed = Vec::with_capacity(queues.len());
        for q in queues {
            placed.push((offset, *q));
            offset += ring_bytes(q.capacity);
        }
        (placed, offset)
    }

    /// Creates the inbox named `name` with one queue per entry of `queues`.
    ///
    /// # Errors
    /// When the segment cannot be created.
    pub fn create(name: &str, queues: &[QueueShape]) -> Result<Self, ShmError> {
        let (placed, len) = Self::layout(queues);
        Ok(Self::init(Segment::create(name, len, true)?, placed))
    }

    /// Creates an anonymous inbox, handed to producers with [`Inbox::segment`].
    ///
    /// # Errors
    /// When the segment cannot be created.
    pub fn anonymous(label: &str, queues: &[QueueShape]) -> Result<Self, ShmError> {
        let (placed, len) = Self::layout(queues);
        Ok(Self::init(Segment::anonymous(label, len, false)?, placed))
    }

    fn init(segment: Segment, queues: Vec<(usize, QueueShape)>) -> Self {
        let inbox = Self { segment, queues };
        for i in 0..inbox.queues.len() {
            inbox.ring(i).init(inbox.queues[i].1.policy);
        }
        let h = inbox.header();
        h.n_rings.store(u32::try_from(inbox.queues.len()).unwrap_or(u32::MAX), Ordering::Relaxed);
        h.version.store(INBOX_VERSION, Ordering::Relaxed);
        h.magic.store(MAGIC, Ordering::Release);
        inbox
    }

    /// Maps an existing inbox and checks it has exactly the expected queues.
    ///
    /// # Errors
    /// When the segment is missing or does not match.
    pub fn open(name: &str, queues: &[QueueShape]) -> Result<Self, ShmError> {
        // Shareable: topic publishers of other processes are handed the inbox of a node that
        // reads a topic, to queue into it directly.
        Self::from_segment(Segment::open_shareable(name, Access::ReadWrite)?, queues)
    }

    /// Takes one queue of another process's inbox, handed over as `segment`: the queue of
    /// `shape` at byte `offset` (see [`Inbox::queue_offset`]), which becomes queue 0 of the
    /// result. Only the inbox's header and that queue are checked; the rest is not this
    /// process's business.
    ///
    /// # Errors
    /// When the segment is not an inbox, or holds no such queue at `offset`.
    pub fn one_queue(segment: Segment, offset: usize, shape: QueueShape) -> Result<Self, ShmError> {
        let bad = || ShmError::BadHeader { name: segment.name().to_owned(), what: "inbox queue" };
        // A queue has fewer entries than its inbox has bytes: this bounds `ring_bytes` too.
        if shape.capacity == 0 || shape.capacity > segment.len() {
            return Err(bad());
        }
        let end = offset.checked_add(ring_bytes(shape.capacity)).ok_or_else(bad)?;
        if offset < std::mem::size_of::<InboxHeader>() || !offset.is_multiple_of(64) || end > segment.len() {
            return Err(bad());
        }
        let inbox = Self { segment, queues: vec![(offset, shape)] };
        let h = inbox.header();
        if h.magic.load(Ordering::Acquire) != MAGIC
            || h.version.load(Ordering::Relaxed) != INBOX_VERSION
            || !inbox.ring(0).is_consistent(shape.policy)
        {
            return Err(ShmError::BadHeader { name: inbox.segment.name().to_owned(), what: "inbox queue" });
        }
        Ok(inbox)
    }

    /// Takes a mapped segment as an inbox, after checking it has exactly the expected queues.
    ///
    /// # Errors
    /// When the segment does not match.
    pub fn from_segment(segment: Segment, queues: &[QueueShape]) -> Result<Self, ShmError> {
        let (queues, len) = Self::layout(queues);
        let name = segment.name().to_owned();
        let bad = || ShmError::BadHeader { name: name.clone(), what: "inbox" };
        if segment.len() < len {
            return Err(bad());
        }
        let inbox = Self { segment, queues };
        let h = inbox.header();
        if h.magic.load(Ordering::Acquire) != MAGIC
            || h.version.load(Ordering::Relaxed) != INBOX_VERSION
            || h.n_rings.load(Ordering::Relaxed) as usize != inbox.queues.len()
            || (0..inbox.queues.len()).any(|i| !inbox.ring(i).is_consistent(inbox.queues[i].1.policy))
        {
            return Err(bad());
        }
        Ok(inbox)
    }

    fn header(&self) -> &InboxHeader {
        // SAFETY: the segment is at least a header long, page aligned, and holds only atomics.
        unsafe { &*self.segment.as_ptr().cast::<InboxHeader>() }
    }

    /// The doorbell of the node owning this inbox.
    #[must_use]
    pub fn doorbell(&self) -> &Doorbell {
        &self.header().doorbell
    }

    /// Notes that the owning node called into nerve (asked for an event, sent a message): what
    /// the runtime watches for `health_check_timeout`.
    pub fn note_call(&self) {
        self.header().liveness.calls.fetch_add(1, Ordering::Relaxed);
    }

    /// Runs `wait` as the owning node waiting for its next event: a node waiting for input is
    /// not hung, however long the wait.
    pub fn waiting<T>(&self, wait: impl FnOnce() -> T) -> T {
        let waiting = &self.header().liveness.waiting;
        waiting.fetch_add(1, Ordering::Relaxed);
        let result = wait();
        waiting.fetch_sub(1, Ordering::Relaxed);
        result
    }

    /// The owning node's calls so far, and whether it is waiting for an event now.
    #[must_use]
    pub fn liveness(&self) -> (u64, bool) {
        let l = &self.header().liveness;
        (l.calls.load(Ordering::Relaxed), l.waiting.load(Ordering::Relaxed) > 0)
    }

    /// Queue of input number `i`.
    ///
    /// # Panics
    /// If `i` is not an input of this inbox.
    #[must_use]
    pub fn ring(&self, i: usize) -> Ring<'_> {
        let (offset, shape) = self.queues[i];
        // SAFETY: `layout` placed the queue inside the segment at a 64-byte aligned offset,
        // and the segment lives as long as `self`.
        unsafe { Ring::at(self.segment.as_ptr().add(offset), shape.capacity) }
    }

    /// Where queue `i` starts in the segment, in bytes (what [`Inbox::one_queue`] takes).
    ///
    /// # Panics
    /// If `i` is not a queue of this inbox.
    #[must_use]
    pub fn queue_offset(&self, i: usize) -> usize {
        self.queues[i].0
    }

    /// The shape of queue `i`.
    ///
    /// # Panics
    /// If `i` is not a queue of this inbox.
    #[must_use]
    pub fn queue_shape(&self, i: usize) -> QueueShape {
        self.queues[i].1
    }

    /// Number of queues.
    #[must_use]
    pub fn len(&self) -> usize {
        self.queues.len()
    }

    /// Whether the inbox has no queue (a node without inputs still has a doorbell).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.queues.is_empty()
    }

    /// The underlying segment's name.
    #[must_use]
    pub fn name(&self) -> &str {
        self.segment.name()
    }

    /// The underlying segment (to hand an anonymous inbox to a producer).
    #[must_use]
    pub fn segment(&self) -> &Segment {
        &self.segment
    }
}

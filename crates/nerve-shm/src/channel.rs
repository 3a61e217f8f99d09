//! The two ends of an output → input edge: a fan-out writer that queues blocks to every reader, and
//! an input that takes them, with no process in between.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::doorbell::DEFAULT_SPIN;
use crate::error::ShmError;
use crate::inbox::Inbox;
use crate::pool::{BlockCache, BlockRef, Lease, OutputPool};
use crate::ring::{Descriptor, Policy, Push, Ring, Seen};

/// One reader of an output: a queue in that reader's inbox, and its holder bit.
#[derive(Debug, Clone)]
pub struct ReaderLink {
    /// The reader node's inbox.
    pub inbox: Arc<Inbox>,
    /// Index of the reader's queue in that inbox.
    pub queue: usize,
    /// The reader's edge number on this output (its holder bit).
    pub edge: usize,
}

impl ReaderLink {
    fn ring(&self) -> Ring<'_> {
        self.inbox.ring(self.queue)
    }
    fn bit(&self) -> u64 {
        1u64 << self.edge
    }
}

/// What one publish did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Published {
    /// Readers the message was queued to.
    pub delivered: usize,
    /// Older messages evicted from drop-oldest queues to make room.
    pub evicted: usize,
    /// Full back-pressured readers skipped because a stop was requested while waiting.
    pub skipped: usize,
}

/// The fan-out writer of one output: queues each block it lends to every reader of the output, in
/// their own inboxes, with no process in between.
#[derive(Debug)]
pub struct FanOut {
    pool: OutputPool,
    readers: Vec<ReaderLink>,
    /// What this producer last saw of each reader's queue head, by reader.
    heads: Vec<Seen>,
    own: Option<Arc<Inbox>>,
    /// Readers a publish queued to, by index, rung once all are queued (kept between
    /// publishes so sending allocates nothing).
    to_wake: Vec<usize>,
}

impl FanOut {
    /// An output with its pool and readers; `own` is the producer's inbox, whose doorbell it
    /// sleeps on while a back-pressured reader is full (without one, a full back-pressured
    /// reader is skipped).
    #[must_use]
    pub fn new(pool: OutputPool, readers: Vec<ReaderLink>, own: Option<Arc<Inbox>>) -> Self {
        let heads = readers.iter().map(|_| Seen::default()).collect();
        Self { pool, readers, heads, own, to_wake: Vec::new() }
    }

    /// The output's pool.
    pub fn pool_mut(&mut self) -> &mut OutputPool {
        &mut self.pool
    }

    /// Adds a reader; messages published from now on reach it.
    pub fn add_reader(&mut self, reader: ReaderLink) {
        self.readers.push(reader);
        self.heads.push(Seen::default());
    }

    /// Removes the reader holding bit `edge` and drops every reference it still held, so its
    /// blocks come back (the reader is gone, or will never look at them again).
    pub fn remove_reader(&mut self, edge: usize) {
        self.readers.retain(|r| r.edge != edge);
        self.pool.table().release_all(1u64 << edge);
    }

    /// Readers currently linked.
    #[must_use]
    pub fn readers(&self) -> &[ReaderLink] {
        &self.readers
    }

    /// Whether any reader is still connected.
    #[must_use]
    pub fn has_readers(&self) -> bool {
        self.readers.iter().any(|r| !r.ring().is_closed())
    }

    /// Whether `lease` is a block of this output's pool.
    #[must_use]
    pub fn lent(&self, lease: &Lease) -> bool {
        self.pool.lent(lease)
    }

    /// Lends a block of at least `len` bytes to fill.
    ///
    /// # Errors
    /// When no block can be had.
    pub fn lease(&mut self, len: usize) -> Result<Lease, ShmError> {
        self.pool.lease(len)
    }

    /// Queues the first `len` bytes of a filled block to every reader.
    ///
    /// A full back-pressured queue makes this wait until its reader takes an entry or leaves.
    /// Once `stop` is set the dataflow is shutting down: full readers are skipped instead of
    /// waited for (counted in [`Published::skipped`]), so a stop never hangs on a send.
    pub fn publish(&mut self, lease: Lease, len: usize, stamp: u64, stop: &AtomicBool) -> Published {
        self.publish_to(lease, len, stamp, u64::MAX, stop)
    }

    /// Like [`FanOut::publish`], to the readers whose bit is in `edges` only (a message meant
    /// for a reader that just joined, say).
    pub fn publish_to(&mut self, lease: Lease, len: usize, stamp: u64, edges: u64, stop: &AtomicBool) -> Published {
        self.publish_then(lease, len, stamp, edges, stop, |_| ())
    }

    /// Like [`FanOut::publish_to`], then hands the message's bytes to `after` once every
    /// reader has been woken: a copy made for someone else (a topic's subscribers, another
    /// host) costs the readers of this host no time.
    pub fn publish_then(
        &mut self,
        lease: Lease,
        len: usize,
        stamp: u64,
        edges: u64,
        stop: &AtomicBool,
        after: impl FnOnce(&[u8]),
    ) -> Published {
        let d = Descriptor { slot: lease.slot(), seq: lease.seq(), len: len as u64, stamp };
        let mut out = Published::default();
        let mut to_wake = std::mem::take(&mut self.to_wake);
        to_wake.clear();
        for (i, (r, head)) in self.readers.iter().zip(&self.heads).enumerate() {
            if edges & r.bit() == 0 {
                continue;
            }
            let ring = r.ring();
            loop {
                // A reader's bit goes on just before its entry does, and comes off while waiting
                // for room: a producer killed mid-send leaves no reference nobody will drop.
                lease.add_holders(r.bit());
                match ring.push(d, head) {
                    Push::Queued => {
                        out.delivered += 1;
                        to_wake.push(i);
                    }
                    Push::Evicted(old) => {
                        lease.table().release(old.slot as usize, r.bit());
                        out.delivered += 1;
                        out.evicted += 1;
                        to_wake.push(i);
                    }
                    Push::Closed => lease.table().release(d.slot as usize, r.bit()),
                    Push::Full => {
                        lease.table().release(d.slot as usize, r.bit());
                        if self.wait_for_room(ring, stop) {
                            continue;
                        }
                        out.skipped += 1;
                    }
                }
                break;
            }
        }
        // Every queue is filled before anyone is woken, so all readers of one message start
        // together (fan-out spread) instead of one after the other.
        let mut woke = false;
        for &i in &to_wake {
            woke |= self.readers[i].inbox.doorbell().ring();
        }
        self.to_wake = to_wake;
        if woke {
            // The scheduler often puts a woken reader on this very core; yielding lets it run
            // now rather than after whatever the sender does next (measured: up to milliseconds).
            std::thread::yield_now();
        }
        // SAFETY: the loan bit, still set, keeps the block from being handed out again, and
        // readers only read it: nobody writes these bytes while `after` reads them.
        after(unsafe { std::slice::from_raw_parts(lease.as_mut_ptr(), len) });
        lease.finish();
        out
    }

    /// Sleeps until `ring` has drained enough to go on (see [`Ring::can_resume`]) or is
    /// closed (true), or `stop` is set (false).
    fn wait_for_room(&self, ring: Ring<'_>, stop: &AtomicBool) -> bool {
        let Some(own) = &self.own else {
            return false;
        };
        ring.set_producer_waiting(true);
        let ok = own
            .doorbell()
            .wait_until(None, DEFAULT_SPIN, || {
                if stop.load(Ordering::Acquire) {
                    Some(false)
                } else {
                    (ring.can_resume() || ring.is_closed()).then_some(true)
                }
            })
            .unwrap_or(false);
        ring.set_producer_waiting(false);
        ok
    }
}

/// Consumer end of one edge.
#[derive(Debug)]
pub struct Input {
    inbox: Arc<Inbox>,
    queue: usize,
    cache: BlockCache,
    producer: Option<Arc<Inbox>>,
    /// A message at the head of the queue is [`Held`].
    held: Arc<AtomicBool>,
    /// What this reader last saw of its queue's tail.
    tail: Seen,
}

/// A message [`Input::hold`] took.
#[derive(Debug)]
pub struct Taken {
    /// The block holding it.
    pub block: BlockRef,
    /// Its length in the block.
    pub len: usize,
    /// Its place at the head of its queue, from a back-pressured queue.
    pub held: Option<Held>,
}

/// A message left at the head of its back-pressured queue while its reader uses it (see
/// [`Input::hold`]). The queue counts it until this is dropped, so the producer, which waits on
/// a full queue, gets no further ahead than what the reader has finished with.
#[derive(Debug)]
pub struct Held {
    inbox: Arc<Inbox>,
    queue: usize,
    producer: Option<Arc<Inbox>>,
    flag: Arc<AtomicBool>,
}

impl Drop for Held {
    fn drop(&mut self) {
        let ring = self.inbox.ring(self.queue);
        // Only the reader takes entries from a back-pressured queue: the head is the held one.
        let tail = Seen::default();
        let _ = ring.pop(&tail);
        if ring.producer_may_resume(&tail)
            && let Some(p) = &self.producer
        {
            p.doorbell().ring();
        }
        self.flag.store(false, Ordering::Release);
        // The reader may be asleep with nothing else to do: this input has work again.
        self.inbox.doorbell().ring();
    }
}

impl Input {
    /// The reader's queue `queue` in its own `inbox`, fed by the output whose blocks `cache`
    /// maps; `producer` is the producer's inbox, rung when a back-pressured producer waits
    /// (queues that never push back need none).
    #[must_use]
    pub fn new(inbox: Arc<Inbox>, queue: usize, cache: BlockCache, producer: Option<Arc<Inbox>>) -> Self {
        Self { inbox, queue, cache, producer, held: Arc::new(AtomicBool::new(false)), tail: Seen::default() }
    }

    fn is_held(&self) -> bool {
        self.held.load(Ordering::Acquire)
    }

    fn ring(&self) -> Ring<'_> {
        self.inbox.ring(self.queue)
    }

    /// Send stamp of the oldest waiting message (none while one is [`Held`]).
    #[must_use]
    pub fn peek_stamp(&self) -> Option<u64> {
        if self.is_held() { None } else { self.ring().peek_stamp(&self.tail) }
    }

    /// Whether the oldest waiting message can be taken without waiting for its block to be
    /// handed over (always true for named blocks; false when nothing waits).
    #[must_use]
    pub fn front_ready(&self) -> bool {
        self.ring().peek(&self.tail).is_some_and(|d| self.cache.is_available(d.slot, d.seq))
    }

    /// Whether no message waits to be taken (one that is [`Held`] was taken).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.is_held() || !self.ring().has_entries_now(&self.tail)
    }

    /// Messages the producer evicted from this queue so far.
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.ring().dropped()
    }

    /// Takes the oldest waiting message: the block holding it and its length.
    ///
    /// # Errors
    /// When the entry names a block that cannot be mapped.
    pub fn recv(&mut self) -> Option<Result<(BlockRef, usize), ShmError>> {
        let ring = self.inbox.ring(self.queue);
        let d = ring.pop(&self.tail)?;
        if ring.producer_may_resume(&self.tail)
            && let Some(p) = &self.producer
        {
            p.doorbell().ring();
        }
        if let Some(next) = ring.peek_seen(&self.tail) {
            self.cache.prefetch(next.slot, next.seq);
        }
        let len = usize::try_from(d.len).unwrap_or(usize::MAX);
        Some(self.cache.take(d.slot, d.seq).map(|b| (b, len)))
    }

    /// Like [`Input::recv`], but from a back-pressured queue the message stays at the head of the
    /// queue until the [`Held`] is dropped: for a reader that forwards messages (to the network)
    /// and must hold its producer back while it does. From a drop-oldest queue, whose producer
    /// may evict the head at any time, the message is taken as [`Input::recv`] takes it.
    ///
    /// # Errors
    /// When the entry names a block that cannot be mapped.
    pub fn hold(&mut self) -> Option<Result<Taken, ShmError>> {
        let ring = self.inbox.ring(self.queue);
        if ring.policy() != Policy::Backpressure {
            return self.recv().map(|r| r.map(|(block, len)| Taken { block, len, held: None }));
        }
        if self.is_held() {
            return None;
        }
        let d = ring.peek(&self.tail)?;
        self.held.store(true, Ordering::Release);
        // Made before the block is taken: a block that cannot be taken still leaves the queue.
        let held = Held {
            inbox: self.inbox.clone(),
            queue: self.queue,
            producer: self.producer.clone(),
            flag: self.held.clone(),
        };
        let len = usize::try_from(d.len).unwrap_or(usize::MAX);
        Some(self.cache.take(d.slot, d.seq).map(|block| Taken { block, len, held: Some(held) }))
    }
}

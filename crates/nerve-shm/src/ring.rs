//! A bounded single-producer single-consumer queue of message descriptors in shared memory.
//!
//! The consumer claims an entry by advancing `head` with a compare-and-swap. When the queue is
//! full and the input keeps only the newest messages, the producer claims the oldest entry the
//! same way, so the consumer never receives a stale entry and the producer never waits.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// What happens when a queue is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// The producer evicts the oldest entry.
    DropOldest,
    /// The producer waits for room.
    Backpressure,
}

impl Policy {
    fn to_raw(self) -> u64 {
        match self {
            Self::DropOldest => 1,
            Self::Backpressure => 2,
        }
    }
    fn from_raw(raw: u64) -> Option<Self> {
        match raw {
            1 => Some(Self::DropOldest),
            2 => Some(Self::Backpressure),
            _ => None,
        }
    }
}

/// Where a message lives: a block of the producer's pool and the bytes used in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Descriptor {
    /// Index of the block in the producer's block table.
    pub slot: u32,
    /// Generation of the block, so a reused slot is never mistaken for the old block.
    pub seq: u64,
    /// Bytes of the message.
    pub len: u64,
    /// Producer's monotonic clock at send, in nanoseconds (orders messages across inputs).
    pub stamp: u64,
}

#[repr(C)]
struct Slot {
    slot: AtomicU64,
    seq: AtomicU64,
    len: AtomicU64,
    stamp: AtomicU64,
}

/// The shared-memory header of one queue; slots follow it.
#[repr(C, align(64))]
pub struct RingHeader {
    head: AtomicU64,
    // The delivery latency samples sit on the consumer's own line: it writes `head` at every
    // take, so writing them moves no other line between the cores.
    latency_sum: AtomicU64,
    latency_samples: AtomicU64,
    latency_max: AtomicU64,
    _pad_head: [u64; 4],
    tail: AtomicU64,
    _pad_tail: [u64; 7],
    capacity: AtomicU64,
    policy: AtomicU64,
    dropped: AtomicU64,
    closed: AtomicU32,
    producer_waiting: AtomicU32,
}

/// The consumer samples the delivery latency of one entry in this many (the first one
/// included), so a reader pays a clock read for few of its messages.
pub const LATENCY_SAMPLE_EVERY: u64 = 8;

/// Latencies above this are not counted: the entry was stamped by another clock (a message
/// from another host kept its sender's stamp) or waited longer than anyone measures latency.
const LATENCY_LIMIT_NS: u64 = 10_000_000_000;

/// What a queue's consumer measured of the time between an entry's send stamp and its take:
/// sums since the queue was made, so two looks give the mean between them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Latency {
    /// Sum of the sampled latencies, in nanoseconds.
    pub sum_ns: u64,
    /// Entries sampled.
    pub samples: u64,
    /// The largest sampled latency, in nanoseconds.
    pub max_ns: u64,
}

/// What one end of a queue last read of the other end's index, kept in its own process.
///
/// The other end's index sits on a cache line that end keeps writing, so each read of it is a
/// transfer between cores (in lock-step streaming, most of the cost of a small message). Indices
/// only grow, so a value read earlier is a safe bound: the producer re-reads `head` only when
/// the queue looks full by the value it has, the consumer re-reads `tail` only when it has taken
/// every entry it saw.
#[derive(Debug, Default)]
pub struct Seen(Cell<u64>);

/// Outcome of [`Ring::push`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Push {
    /// Queued.
    Queued,
    /// Queued after evicting this oldest entry; its reference must be released.
    Evicted(Descriptor),
    /// Full under back-pressure: nothing was queued.
    Full,
    /// The reader is gone: nothing was queued.
    Closed,
}

/// A view of one queue inside a mapped inbox.
#[derive(Clone, Copy)]
pub struct Ring<'a> {
    header: &'a RingHeader,
    slots: &'a [Slot],
}

/// Bytes a queue of `capacity` entries occupies.
#[must_use]
pub fn ring_bytes(capacity: usize) -> usize {
    (std::mem::size_of::<RingHeader>() + capacity * std::mem::size_of::<Slot>()).next_multiple_of(64)
}

impl<'a> Ring<'a> {
    /// Views the queue at `ptr`.
    ///
    /// # Safety
    /// `ptr` must be 64-byte aligned and point to at least `ring_bytes(capacity)` bytes of
    /// shared memory that stay mapped for `'a`, laid out by [`Ring::init`] or zeroed.
    pub unsafe fn at(ptr: *mut u8, capacity: usize) -> Self {
        // SAFETY: guaranteed by the caller; every field is an atomic, valid for any bytes.
        unsafe {
            let header = &*ptr.cast::<RingHeader>();
            let slots = std::slice::from_raw_parts(ptr.add(std::mem::size_of::<RingHeader>()).cast::<Slot>(), capacity);
            Self { header, slots }
        }
    }

    /// Writes a fresh, empty queue (done once, by whoever creates the segment).
    pub fn init(&self, policy: Policy) {
        self.header.head.store(0, Ordering::Relaxed);
        self.header.tail.store(0, Ordering::Relaxed);
        self.header.capacity.store(self.slots.len() as u64, Ordering::Relaxed);
        self.header.policy.store(policy.to_raw(), Ordering::Relaxed);
        self.header.dropped.store(0, Ordering::Relaxed);
        self.header.latency_sum.store(0, Ordering::Relaxed);
        self.header.latency_samples.store(0, Ordering::Relaxed);
        self.header.latency_max.store(0, Ordering::Relaxed);
        self.header.closed.store(0, Ordering::Relaxed);
        self.header.producer_waiting.store(0, Ordering::Release);
    }

    /// Checks that a mapped queue matches what the channel table promises.
    #[must_use]
    pub fn is_consistent(&self, policy: Policy) -> bool {
        self.header.capacity.load(Ordering::Acquire) == self.slots.len() as u64
            && Policy::from_raw(self.header.policy.load(Ordering::Acquire)) == Some(policy)
    }

    /// The queue's policy.
    #[must_use]
    pub fn policy(&self) -> Policy {
        Policy::from_raw(self.header.policy.load(Ordering::Relaxed)).unwrap_or(Policy::Backpressure)
    }

    fn write(&self, pos: u64, d: Descriptor) {
        let s = &self.slots[self.index(pos)];
        s.slot.store(u64::from(d.slot), Ordering::Relaxed);
        s.seq.store(d.seq, Ordering::Relaxed);
        s.len.store(d.len, Ordering::Relaxed);
        s.stamp.store(d.stamp, Ordering::Relaxed);
    }

    fn read(&self, pos: u64) -> Descriptor {
        let s = &self.slots[self.index(pos)];
        Descriptor {
            slot: u32::try_from(s.slot.load(Ordering::Relaxed)).unwrap_or(u32::MAX),
            seq: s.seq.load(Ordering::Relaxed),
            len: s.len.load(Ordering::Relaxed),
            stamp: s.stamp.load(Ordering::Relaxed),
        }
    }

    fn index(&self, pos: u64) -> usize {
        // Capacity fits in usize, so the remainder does too.
        usize::try_from(pos % self.slots.len() as u64).unwrap_or(0)
    }

    /// Queues `d` (producer side); `head` is what this producer last saw of the head.
    pub fn push(&self, d: Descriptor, head: &Seen) -> Push {
        if self.is_closed() {
            return Push::Closed;
        }
        let cap = self.slots.len() as u64;
        let tail = self.header.tail.load(Ordering::Relaxed);
        let mut evicted = None;
        let mut seen = head.0.get();
        loop {
            if seen <= tail && tail - seen < cap {
                break;
            }
            let now = self.header.head.load(Ordering::Acquire);
            if now != seen {
                seen = now;
                continue;
            }
            // Full even by the head as it is now.
            if self.policy() == Policy::Backpressure {
                head.0.set(seen);
                return Push::Full;
            }
            let old = self.read(seen);
            if self.header.head.compare_exchange(seen, seen + 1, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                self.header.dropped.fetch_add(1, Ordering::Relaxed);
                evicted = Some(old);
                seen += 1;
                break;
            }
            // The consumer took the oldest entry meanwhile: there is room now.
        }
        head.0.set(seen);
        self.write(tail, d);
        self.header.tail.store(tail + 1, Ordering::Release);
        evicted.map_or(Push::Queued, Push::Evicted)
    }

    /// Takes the oldest entry (consumer side); `tail` is what this consumer last saw of the
    /// tail.
    #[must_use]
    pub fn pop(&self, tail: &Seen) -> Option<Descriptor> {
        loop {
            let head = self.header.head.load(Ordering::Acquire);
            if !self.has_entries(head, tail) {
                return None;
            }
            let d = self.read(head);
            // Success proves the producer did not reclaim this entry while we read it.
            if self.header.head.compare_exchange(head, head + 1, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                if head.is_multiple_of(LATENCY_SAMPLE_EVERY) {
                    self.sample_latency(d.stamp);
                }
                return Some(d);
            }
        }
    }

    /// Counts the time since `stamp`, the send stamp of an entry just taken (consumer side: only
    /// the consumer writes these counters).
    fn sample_latency(&self, stamp: u64) {
        let latency = crate::clock::monotonic_ns().wrapping_sub(stamp);
        if latency >= LATENCY_LIMIT_NS {
            return;
        }
        let h = self.header;
        h.latency_sum.store(h.latency_sum.load(Ordering::Relaxed).wrapping_add(latency), Ordering::Relaxed);
        h.latency_samples.store(h.latency_samples.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        if latency > h.latency_max.load(Ordering::Relaxed) {
            h.latency_max.store(latency, Ordering::Relaxed);
        }
    }

    /// The delivery latency the consumer sampled so far (see [`LATENCY_SAMPLE_EVERY`]).
    #[must_use]
    pub fn latency(&self) -> Latency {
        let h = self.header;
        Latency {
            sum_ns: h.latency_sum.load(Ordering::Relaxed),
            samples: h.latency_samples.load(Ordering::Relaxed),
            max_ns: h.latency_max.load(Ordering::Relaxed),
        }
    }

    /// Send stamp of the oldest entry, if any (consumer side, for oldest-first delivery).
    #[must_use]
    pub fn peek_stamp(&self, tail: &Seen) -> Option<u64> {
        self.peek(tail).map(|d| d.stamp)
    }

    /// The oldest entry, left in the queue (the producer may evict it meanwhile).
    #[must_use]
    pub fn peek(&self, tail: &Seen) -> Option<Descriptor> {
        let head = self.header.head.load(Ordering::Acquire);
        self.has_entries(head, tail).then(|| self.read(head))
    }

    /// The oldest entry, if what this consumer already saw of the tail shows one: unlike
    /// [`Ring::peek`], never reads the tail the producer keeps writing.
    #[must_use]
    pub fn peek_seen(&self, tail: &Seen) -> Option<Descriptor> {
        let head = self.header.head.load(Ordering::Acquire);
        (tail.0.get() > head).then(|| self.read(head))
    }

    /// Whether entries wait at `head` (consumer side).
    #[must_use]
    pub fn has_entries_now(&self, tail: &Seen) -> bool {
        self.has_entries(self.header.head.load(Ordering::Acquire), tail)
    }

    /// Whether the tail is past `head`: by what was seen of it, else by reading it again.
    fn has_entries(&self, head: u64, tail: &Seen) -> bool {
        if tail.0.get() > head {
            // That tail was read with Acquire: the entries before it are visible.
            return true;
        }
        let now = self.header.tail.load(Ordering::Acquire);
        tail.0.set(now);
        now > head
    }

    /// Entries waiting.
    #[must_use]
    pub fn len(&self) -> usize {
        let tail = self.header.tail.load(Ordering::Acquire);
        let head = self.header.head.load(Ordering::Acquire);
        usize::try_from(tail.saturating_sub(head)).unwrap_or(usize::MAX)
    }

    /// Whether no entry waits.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether a back-pressured producer that found the queue full may go on: half of the
    /// queue has drained.
    ///
    /// Resuming at the first free entry instead keeps both ends in lock-step on a full queue:
    /// for every message the producer raises and lowers its flag and the reader rings it, each
    /// moving a cache line between the cores; from half, the producer queues a batch while the
    /// reader drains one.
    #[must_use]
    pub fn can_resume(&self) -> bool {
        self.len() <= self.resume_level()
    }

    fn resume_level(&self) -> usize {
        self.slots.len() / 2
    }

    /// Entries queued here so far, since the queue was made: those still waiting, taken and
    /// evicted alike (a restart's reopening keeps counting), so two looks at it give a rate.
    #[must_use]
    pub fn received(&self) -> u64 {
        self.header.tail.load(Ordering::Relaxed)
    }

    /// Messages evicted so far under drop-oldest.
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.header.dropped.load(Ordering::Relaxed)
    }

    /// Marks the reader gone: producers stop queueing here.
    pub fn close(&self) {
        self.header.closed.store(1, Ordering::SeqCst);
    }

    /// Makes a closed queue usable by a new reader (a restarted node): what the old one left
    /// queued is dropped — the runtime already released those references — and producers
    /// queue here again.
    ///
    /// Call only while the queue is closed and no reader uses it.
    pub fn reopen(&self) {
        let tail = self.header.tail.load(Ordering::Acquire);
        self.header.head.store(tail, Ordering::Release);
        self.header.producer_waiting.store(0, Ordering::Release);
        self.header.closed.store(0, Ordering::SeqCst);
    }

    /// Whether the reader is gone.
    #[must_use]
    pub fn is_closed(&self) -> bool {
        self.header.closed.load(Ordering::SeqCst) != 0
    }

    /// Producer announces it waits for room (true) or has stopped waiting (false).
    pub fn set_producer_waiting(&self, waiting: bool) {
        self.header.producer_waiting.store(u32::from(waiting), Ordering::SeqCst);
        // Pairs with the fence in `producer_may_resume`: either the producer sees the room the
        // consumer made, or the consumer sees the flag and wakes it.
        std::sync::atomic::fence(Ordering::SeqCst);
    }

    /// Whether a producer waits for room and, by what this consumer saw of the tail, may go on
    /// (see [`Ring::can_resume`]): it needs a wake-up. The tail seen is at most the real one,
    /// so this errs towards early, never late.
    #[must_use]
    pub fn producer_may_resume(&self, tail: &Seen) -> bool {
        std::sync::atomic::fence(Ordering::SeqCst);
        if self.header.producer_waiting.load(Ordering::SeqCst) == 0 {
            return false;
        }
        let head = self.header.head.load(Ordering::Acquire);
        usize::try_from(tail.0.get().saturating_sub(head)).unwrap_or(usize::MAX) <= self.resume_level()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_ring(cap: usize, policy: Policy, f: impl FnOnce(Ring<'_>)) {
        let words = ring_bytes(cap) / 8;
        let mut mem = vec![0u64; words + 8];
        let base = mem.as_mut_ptr().cast::<u8>();
        let aligned = base.wrapping_add(base.align_offset(64));
        // SAFETY: `aligned` leaves at least `ring_bytes(cap)` bytes of `mem`, alive for `f`.
        let ring = unsafe { Ring::at(aligned, cap) };
        ring.init(policy);
        f(ring);
    }

    fn d(n: u64) -> Descriptor {
        Descriptor { slot: 0, seq: n, len: n, stamp: n }
    }

    #[test]
    fn fifo_order_and_backpressure_when_full() {
        with_ring(3, Policy::Backpressure, |r| {
            let (head, tail) = (Seen::default(), Seen::default());
            for n in 1..=3 {
                assert_eq!(r.push(d(n), &head), Push::Queued);
            }
            assert_eq!(r.push(d(4), &head), Push::Full);
            assert_eq!(r.pop(&tail).map(|x| x.seq), Some(1));
            assert_eq!(r.push(d(4), &head), Push::Queued);
            let got: Vec<u64> = std::iter::from_fn(|| r.pop(&tail)).map(|x| x.seq).collect();
            assert_eq!(got, vec![2, 3, 4]);
        });
    }

    #[test]
    fn a_producer_on_a_full_queue_goes_on_when_half_has_drained() {
        with_ring(4, Policy::Backpressure, |r| {
            let (head, tail) = (Seen::default(), Seen::default());
            for n in 1..=4 {
                assert_eq!(r.push(d(n), &head), Push::Queued);
            }
            r.set_producer_waiting(true);
            assert_eq!(r.pop(&tail).map(|x| x.seq), Some(1));
            assert!(!r.can_resume() && !r.producer_may_resume(&tail), "one entry of four free");
            assert_eq!(r.pop(&tail).map(|x| x.seq), Some(2));
            assert!(r.can_resume() && r.producer_may_resume(&tail), "half drained");
            r.set_producer_waiting(false);
            assert!(!r.producer_may_resume(&tail), "nobody waits");
        });
        with_ring(1, Policy::Backpressure, |r| {
            let (head, tail) = (Seen::default(), Seen::default());
            assert_eq!(r.push(d(1), &head), Push::Queued);
            assert!(!r.can_resume());
            let _ = r.pop(&tail);
            assert!(r.can_resume(), "a queue of one goes on when empty");
        });
    }

    #[test]
    fn the_consumer_samples_the_latency_of_one_entry_in_eight() {
        with_ring(32, Policy::Backpressure, |r| {
            let (head, tail) = (Seen::default(), Seen::default());
            let sent = crate::clock::monotonic_ns();
            for n in 0..17 {
                let stamp = if n == 8 { sent + LATENCY_LIMIT_NS * 4 } else { sent };
                assert_eq!(r.push(Descriptor { stamp, ..d(n) }, &head), Push::Queued);
            }
            let before = crate::clock::monotonic_ns();
            while r.pop(&tail).is_some() {}
            let waited = crate::clock::monotonic_ns() - sent;
            let latency = r.latency();
            // Entries 0, 8 and 16 were sampled; 8 bears a stamp of another clock and is not counted.
            assert_eq!(latency.samples, 2);
            assert!(latency.max_ns >= before - sent && latency.max_ns <= waited, "{latency:?}");
            assert!(latency.sum_ns >= 2 * (before - sent) && latency.sum_ns <= 2 * waited, "{latency:?}");
        });
    }

    #[test]
    fn queue_of_one_always_holds_the_newest() {
        with_ring(1, Policy::DropOldest, |r| {
            let (head, tail) = (Seen::default(), Seen::default());
            assert_eq!(r.push(d(1), &head), Push::Queued);
            assert_eq!(r.push(d(2), &head), Push::Evicted(d(1)));
            assert_eq!(r.push(d(3), &head), Push::Evicted(d(2)));
            assert_eq!(r.pop(&tail).map(|x| x.seq), Some(3));
            assert_eq!(r.pop(&tail), None);
            assert_eq!(r.dropped(), 2);
        });
    }

    #[test]
    fn closed_ring_refuses() {
        with_ring(2, Policy::DropOldest, |r| {
            r.close();
            assert_eq!(r.push(d(1), &Seen::default()), Push::Closed);
        });
    }

    #[test]
    fn reopened_ring_is_empty_and_takes_entries_again() {
        with_ring(4, Policy::Backpressure, |r| {
            let head = Seen::default();
            assert_eq!(r.push(d(1), &head), Push::Queued);
            assert_eq!(r.push(d(2), &head), Push::Queued);
            r.close();
            assert_eq!(r.push(d(3), &head), Push::Closed);
            r.reopen();
            assert!(r.is_empty() && !r.is_closed());
            // A new reader starts with nothing seen; the producer keeps what it saw.
            let tail = Seen::default();
            assert_eq!(r.push(d(4), &head), Push::Queued);
            assert_eq!(r.pop(&tail).map(|x| x.seq), Some(4));
            assert_eq!(r.pop(&tail), None);
        });
    }

    #[test]
    fn concurrent_overwrite_never_yields_a_torn_or_stale_entry() {
        // A producer floods a queue of 4 while a consumer pops: every popped entry is whole
        // (its fields agree) and entries come out in increasing order.
        with_ring(4, Policy::DropOldest, |r| {
            let n = 200_000u64;
            std::thread::scope(|s| {
                s.spawn(|| {
                    let head = Seen::default();
                    for i in 1..=n {
                        let _ = r.push(d(i), &head);
                    }
                });
                let (tail, mut last) = (Seen::default(), 0);
                while last < n {
                    if let Some(x) = r.pop(&tail) {
                        assert!(x.seq == x.len && x.seq == x.stamp, "torn entry {x:?}");
                        assert!(x.seq > last, "stale entry {} after {last}", x.seq);
                        last = x.seq;
                    }
                }
            });
        });
    }

    #[test]
    fn back_pressure_under_concurrency_loses_and_repeats_nothing() {
        // A producer pushes into a queue of 3, retrying while full; every entry comes out once,
        // in order (the producer's view of the head is refreshed only when the queue looks full).
        with_ring(3, Policy::Backpressure, |r| {
            let n = 200_000u64;
            std::thread::scope(|s| {
                s.spawn(|| {
                    let head = Seen::default();
                    for i in 1..=n {
                        while r.push(d(i), &head) == Push::Full {
                            std::hint::spin_loop();
                        }
                    }
                });
                let tail = Seen::default();
                for want in 1..=n {
                    let got = loop {
                        if let Some(x) = r.pop(&tail) {
                            break x;
                        }
                    };
                    assert_eq!(got, d(want));
                }
                assert_eq!(r.pop(&tail), None);
            });
        });
    }
}

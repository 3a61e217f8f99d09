//! Per-output pools of shared-memory blocks, allocated on demand (DORA's algorithm).
//!
//! A producer sends into the block it lent last once that is free again and of the size, else
//! into the smallest free block that fits; with none free, it waits a little for a reader to
//! hand one back (see [`OutputPool::lease`]), else creates a block of exactly the page-rounded
//! size; past the pool's capacity it frees its oldest unused blocks first. The block table
//! lives in a small shared segment: each block's `holders` word has one bit per reader edge
//! (bit 63 marks the producer's own loan), so a block is free again exactly when every reader
//! dropped it, and the runtime can clear a dead reader's bits.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::doorbell::{DEFAULT_SPIN, Doorbell};
use crate::error::ShmError;
use crate::names::RunNames;
use crate::segment::{Access, Segment, page_round};

const MAGIC: u64 = 0x4e45_5256_504f_4f4c; // "NERVPOOL"
const VERSION: u64 = 1;
/// Blocks one output can have at once.
pub const MAX_BLOCKS: usize = 1024;
/// Holder bit of the producer while it fills a block.
pub const LOAN_BIT: u64 = 1 << 63;
/// Reader edges one output can have (one holder bit each).
pub const MAX_READERS: usize = 63;
/// Default bound on the bytes of one output's pool before unused blocks are freed.
pub const DEFAULT_CAPACITY: usize = 1 << 30;
/// Longest one lease waits for a reader to hand a block back before it makes a new one.
const RETURN_WAIT: Duration = Duration::from_millis(2);

#[repr(C)]
struct PoolHeader {
    magic: AtomicU64,
    version: AtomicU64,
    n_blocks: AtomicU64,
    /// Rung by the reader that frees a block while the producer waits for one.
    returns: Doorbell,
    _pad: [u64; 4],
}

#[repr(C)]
struct BlockEntry {
    seq: AtomicU64,
    size: AtomicU64,
    holders: AtomicU64,
    _pad: AtomicU64,
}

/// The shared block table of one output.
pub struct BlockTable {
    segment: Segment,
    /// Held only to be dropped with the table (see [`BlockTable::keep_alive`]).
    _keep: Option<Arc<dyn std::any::Any + Send + Sync + std::panic::RefUnwindSafe>>,
}

impl std::fmt::Debug for BlockTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockTable").field("segment", &self.segment).finish_non_exhaustive()
    }
}

impl BlockTable {
    fn bytes() -> usize {
        std::mem::size_of::<PoolHeader>() + MAX_BLOCKS * std::mem::size_of::<BlockEntry>()
    }

    /// Creates an empty table (done by the runtime before nodes start).
    ///
    /// # Errors
    /// When the segment cannot be created.
    pub fn create(name: &str) -> Result<Self, ShmError> {
        Ok(Self::init(Segment::create(name, Self::bytes(), true)?))
    }

    /// Creates an empty anonymous table, handed to readers with [`BlockTable::segment`].
    ///
    /// # Errors
    /// When the segment cannot be created.
    pub fn anonymous(label: &str) -> Result<Self, ShmError> {
        Ok(Self::init(Segment::anonymous(label, Self::bytes(), true)?))
    }

    fn init(segment: Segment) -> Self {
        let t = Self { segment, _keep: None };
        let h = t.header();
        h.n_blocks.store(MAX_BLOCKS as u64, Ordering::Relaxed);
        h.version.store(VERSION, Ordering::Relaxed);
        h.magic.store(MAGIC, Ordering::Release);
        t
    }

    /// Maps an existing table.
    ///
    /// # Errors
    /// When the segment is missing or is not a block table of this version.
    pub fn open(name: &str) -> Result<Self, ShmError> {
        Self::from_segment(Segment::open(name, Access::ReadWrite)?)
    }

    /// Takes a mapped segment as a table, after checking it is one.
    ///
    /// # Errors
    /// When the segment is not a block table of this version.
    pub fn from_segment(segment: Segment) -> Result<Self, ShmError> {
        let t = Self { segment, _keep: None };
        let h = t.header();
        if t.segment.len() < Self::bytes()
            || h.magic.load(Ordering::Acquire) != MAGIC
            || h.version.load(Ordering::Relaxed) != VERSION
            || h.n_blocks.load(Ordering::Relaxed) != MAX_BLOCKS as u64
        {
            return Err(ShmError::BadHeader { name: t.segment.name().to_owned(), what: "block table" });
        }
        Ok(t)
    }

    /// Ties `keep` to the table: it is dropped only when the table and every block reference
    /// into it are gone. A topic reader keeps its connection to the producer here, so the
    /// connection ends — and the producer reclaims the reader's blocks — exactly when the
    /// reader can no longer look at any of them.
    #[must_use]
    pub fn keep_alive(mut self, keep: Arc<dyn std::any::Any + Send + Sync + std::panic::RefUnwindSafe>) -> Self {
        self._keep = Some(keep);
        self
    }

    /// The table's segment (to hand an anonymous table to a reader).
    #[must_use]
    pub fn segment(&self) -> &Segment {
        &self.segment
    }

    fn header(&self) -> &PoolHeader {
        // SAFETY: the segment is at least `bytes()` long and holds only atomics.
        unsafe { &*self.segment.as_ptr().cast::<PoolHeader>() }
    }

    fn entry(&self, slot: usize) -> &BlockEntry {
        assert!(slot < MAX_BLOCKS, "block slot {slot} out of range");
        // SAFETY: in bounds by the assertion; entries are atomics, valid for any bytes.
        unsafe { &*self.segment.as_ptr().add(std::mem::size_of::<PoolHeader>()).cast::<BlockEntry>().add(slot) }
    }

    /// Current generation of a slot (0: empty).
    #[must_use]
    pub fn seq(&self, slot: usize) -> u64 {
        self.entry(slot).seq.load(Ordering::Acquire)
    }

    /// Drops reader `bit`'s reference to the block in `slot`.
    pub fn release(&self, slot: usize, bit: u64) {
        // Sequentially consistent, like the waiting producer's announcement on `returns`: either
        // it sees this block free, or this sees it asleep and wakes it. The old value is not
        // asked for, which keeps this one locked instruction (x86 returns it only through a
        // compare-exchange loop); a producer asleep is rare, so any release wakes it.
        self.entry(slot).holders.fetch_and(!bit, Ordering::SeqCst);
        let returns = &self.header().returns;
        if returns.sleepers() != 0 {
            returns.ring();
        }
    }

    /// Clears reader `bit` from every block: used when that reader is gone.
    pub fn release_all(&self, bit: u64) {
        for slot in 0..MAX_BLOCKS {
            self.release(slot, bit);
        }
    }

    /// Empties `slot` if nobody holds its block; whether it is empty now.
    fn clear_if_free(&self, slot: usize) -> bool {
        let entry = self.entry(slot);
        // Claimed first, so no reader can take a reference while the entry is being cleared.
        if entry.holders.compare_exchange(0, LOAN_BIT, Ordering::AcqRel, Ordering::Acquire).is_err() {
            return false;
        }
        entry.seq.store(0, Ordering::Release);
        entry.size.store(0, Ordering::Relaxed);
        entry.holders.store(0, Ordering::Release);
        true
    }

    /// Blocks and bytes currently allocated, and bytes held by readers or the producer.
    #[must_use]
    pub fn usage(&self) -> PoolUsage {
        let mut u = PoolUsage::default();
        for slot in 0..MAX_BLOCKS {
            let e = self.entry(slot);
            if e.seq.load(Ordering::Acquire) != 0 {
                let size = usize::try_from(e.size.load(Ordering::Relaxed)).unwrap_or(usize::MAX);
                u.blocks += 1;
                u.bytes += size;
                if e.holders.load(Ordering::Acquire) != 0 {
                    u.held_bytes += size;
                }
            }
        }
        u
    }
}

/// What a pool holds right now.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PoolUsage {
    /// Allocated blocks.
    pub blocks: usize,
    /// Their total size.
    pub bytes: usize,
    /// Bytes in blocks somebody still references.
    pub held_bytes: usize,
}

/// One output's block table and how its blocks are found: what both ends of an output share.
#[derive(Debug)]
struct OutputBlocks {
    table: Arc<BlockTable>,
    /// Names of the blocks, for named pools; `None` when blocks are handed over as descriptors.
    names: Option<(RunNames, usize, usize)>,
}

impl OutputBlocks {
    fn open(names: &RunNames, node: usize, output: usize) -> Result<Self, ShmError> {
        let table = Arc::new(BlockTable::open(&names.pool(node, output))?);
        Ok(Self { table, names: Some((names.clone(), node, output)) })
    }

    fn block_name(&self, seq: u64) -> Option<String> {
        self.names.as_ref().map(|(names, node, output)| names.block(*node, *output, seq))
    }
}

/// A block created since the producer last asked: readers of a pool with handed-over blocks
/// must receive its descriptor before any message in it.
#[derive(Debug, Clone)]
pub struct NewBlock {
    /// Table slot.
    pub slot: u32,
    /// Generation.
    pub seq: u64,
    /// The block (its [`Segment::fd`] is what to hand over).
    pub segment: Arc<Segment>,
}

/// Producer-side view of an output's pool.
#[derive(Debug)]
pub struct OutputPool {
    output: OutputBlocks,
    blocks: Vec<Option<LocalBlock>>,
    /// Slots that hold a block, so a send scans a handful of blocks, not the whole table.
    allocated: Vec<usize>,
    /// Where in `allocated` the next lease starts looking.
    scan_from: usize,
    /// The slot of the block lent last.
    last_lent: Option<usize>,
    next_seq: u64,
    uses: u64,
    capacity: usize,
    /// Blocks created and not yet reported by [`OutputPool::take_new_blocks`] (anonymous pools).
    fresh: Vec<NewBlock>,
    /// Size of the block made last and how long making it took: what the next one will cost.
    last_made: Option<(usize, Duration)>,
    /// Time leases have waited for blocks to come back since the pool last grew.
    waited: Duration,
}

#[derive(Debug)]
struct LocalBlock {
    segment: Arc<Segment>,
    last_use: u64,
}

/// A block lent to the producer to fill; queue it with the publisher or drop it to give it back.
#[derive(Debug)]
pub struct Lease {
    table: Arc<BlockTable>,
    segment: Arc<Segment>,
    slot: u32,
    seq: u64,
    armed: bool,
}

impl Lease {
    /// Writable bytes of the block.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.segment.len()
    }

    /// Start of the block; valid for `capacity()` bytes while the lease lives.
    #[must_use]
    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.segment.as_ptr()
    }

    /// The block as a byte slice to fill.
    #[must_use]
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: the producer's loan bit keeps every reader off this block until it is queued,
        // and `&mut self` makes this the only slice.
        unsafe { std::slice::from_raw_parts_mut(self.segment.as_ptr(), self.segment.len()) }
    }

    /// The block's mapping, for callers that must keep it mapped past the lease (a Python
    /// buffer view, for instance).
    #[must_use]
    pub fn mapping(&self) -> Arc<Segment> {
        self.segment.clone()
    }

    /// Table slot of the block.
    #[must_use]
    pub fn slot(&self) -> u32 {
        self.slot
    }

    /// Generation of the block.
    #[must_use]
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Marks readers as holders before the block is queued to them.
    pub(crate) fn add_holders(&self, mask: u64) {
        self.table.entry(self.slot as usize).holders.fetch_or(mask, Ordering::AcqRel);
    }

    /// The table the block belongs to.
    pub(crate) fn table(&self) -> &BlockTable {
        &self.table
    }

    /// Ends the loan: from here on, only readers' bits keep the block busy.
    pub(crate) fn finish(mut self) {
        self.release_loan();
    }

    fn release_loan(&mut self) {
        if self.armed {
            self.armed = false;
            self.table.release(self.slot as usize, LOAN_BIT);
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.release_loan();
    }
}

impl OutputPool {
    /// Producer side of output `output` of node `node`, with its table already created.
    ///
    /// # Errors
    /// When the table cannot be mapped.
    ///
    /// Blocks an earlier producer of this output left in the table (a node restarted after a
    /// crash) are taken over: readers may still hold them, so their slots and generations are
    /// never reused while they do, and the free ones are filled again like any other block.
    pub fn open(names: &RunNames, node: usize, output: usize, capacity: usize) -> Result<Self, ShmError> {
        let mut pool = Self::with(OutputBlocks::open(names, node, output)?, capacity);
        pool.adopt();
        Ok(pool)
    }

    /// Takes over the blocks an earlier producer left in a named table.
    fn adopt(&mut self) {
        let table = self.output.table.clone();
        for slot in 0..MAX_BLOCKS {
            let entry = table.entry(slot);
            let seq = entry.seq.load(Ordering::Acquire);
            if seq == 0 {
                continue;
            }
            self.next_seq = self.next_seq.max(seq + 1);
            // The earlier producer is gone: whatever it had on loan is nobody's any more.
            entry.holders.fetch_and(!LOAN_BIT, Ordering::AcqRel);
            let opened = self.output.block_name(seq).map(|name| Segment::open(&name, Access::ReadWrite));
            match opened {
                Some(Ok(segment)) => {
                    self.blocks[slot] = Some(LocalBlock { segment: Arc::new(segment), last_use: 0 });
                    self.allocated.push(slot);
                }
                // Its name is gone (it was being retired). A reader may still hold it: then the
                // slot stays out of use until `empty_slot` finds it free.
                _ => {
                    table.clear_if_free(slot);
                }
            }
        }
    }

    /// A pool of anonymous blocks: its table and every block are handed to readers as file
    /// descriptors ([`OutputPool::blocks`], [`OutputPool::take_new_blocks`]).
    ///
    /// # Errors
    /// When the table cannot be created.
    pub fn anonymous(capacity: usize) -> Result<Self, ShmError> {
        let table = Arc::new(BlockTable::anonymous("nerve-pool")?);
        Ok(Self::with(OutputBlocks { table, names: None }, capacity))
    }

    fn with(output: OutputBlocks, capacity: usize) -> Self {
        Self {
            output,
            blocks: (0..MAX_BLOCKS).map(|_| None).collect(),
            allocated: Vec::new(),
            scan_from: 0,
            last_lent: None,
            next_seq: 1,
            uses: 0,
            capacity,
            fresh: Vec::new(),
            last_made: None,
            waited: Duration::ZERO,
        }
    }

    /// Every block the pool holds now (what a newly connected reader must be handed).
    #[must_use]
    pub fn blocks(&self) -> Vec<NewBlock> {
        self.allocated
            .iter()
            .filter_map(|&slot| {
                let b = self.blocks[slot].as_ref()?;
                Some(NewBlock {
                    slot: u32::try_from(slot).ok()?,
                    seq: self.output.table.seq(slot),
                    segment: b.segment.clone(),
                })
            })
            .collect()
    }

    /// Blocks created since the last call, oldest first.
    pub fn take_new_blocks(&mut self) -> Vec<NewBlock> {
        std::mem::take(&mut self.fresh)
    }

    /// The shared block table.
    #[must_use]
    pub fn table(&self) -> &Arc<BlockTable> {
        &self.output.table
    }

    /// Whether `lease` is a block of this pool (a block of another pool must never be queued to
    /// this pool's readers: they would look it up in the wrong table).
    #[must_use]
    pub fn lent(&self, lease: &Lease) -> bool {
        Arc::ptr_eq(&lease.table, &self.output.table)
    }

    /// Lends a block of at least `len` bytes: the one lent last if it is free and of `len`'s
    /// page-rounded size, else the smallest free one, else one a reader hands back soon, or a
    /// new one.
    ///
    /// A block is made once and used for good, but a wait for one to come back is paid by every
    /// lease that finds none free; so since the pool last grew, its leases wait, in all, at most
    /// as long as making the next block would take (timed on the last one made), and each at
    /// most 2 ms. A burst whose reader keeps up, such as the messages that pile up
    /// behind a large block that took several periods to make, is then sent from the blocks
    /// there are instead of growing the pool by a slow block per message; a stream that needs
    /// more blocks (unpaced, or readers that keep messages) still gets each one, after at most
    /// twice its making time.
    ///
    /// # Errors
    /// When a new block cannot be created, or every slot is held by readers.
    pub fn lease(&mut self, len: usize) -> Result<Lease, ShmError> {
        self.uses += 1;
        let size = page_round(len);
        if let Some(lease) = self.lend_free(len, size) {
            return Ok(lease);
        }
        if let Some(lease) = self.wait_for_return(len, size) {
            return Ok(lease);
        }
        self.make_room(size);
        let Some(slot) = self.empty_slot() else {
            self.retire_one_free();
            return match self.empty_slot() {
                Some(slot) => self.create_block(slot, size),
                None => Err(ShmError::PoolExhausted(MAX_BLOCKS)),
            };
        };
        self.create_block(slot, size)
    }

    /// A free block for `len` bytes (`size` page-rounded), if there is one.
    fn lend_free(&mut self, len: usize, size: usize) -> Option<Lease> {
        // The block lent last, once its readers are done with it, is lent again: a paced stream
        // keeps writing into one warm block whatever the pool grew to (a burst, such as the
        // first messages of large blocks that take longer to create than a period, leaves
        // several), and the readers' arrays imported ahead for its place stay valid.
        if let Some(slot) = self.last_lent
            && self.blocks[slot].as_ref().is_some_and(|b| b.segment.len() == size)
            // Read first: a compare-exchange that fails still takes the line from the readers,
            // and in a busy stream the block lent last is still queued.
            && self.is_free(slot)
            && let Some(lease) = self.try_lend(slot)
        {
            return Some(lease);
        }
        let n = self.allocated.len();
        let mut best: Option<(usize, usize)> = None;
        // From the block after the one lent last: blocks are lent and queued in turn, so the
        // oldest, the likeliest to be free again, comes first; a free block of the least size
        // that fits ends the scan. Each entry looked at is a cache line the readers write.
        for k in 0..n {
            let at = (self.scan_from + k) % n;
            let slot = self.allocated[at];
            if let Some(b) = &self.blocks[slot] {
                let have = b.segment.len();
                if have >= len && best.is_none_or(|(_, s)| have < s) && self.is_free(slot) {
                    best = Some((at, have));
                    if have == size {
                        break;
                    }
                }
            }
        }
        let (at, _) = best?;
        let lease = self.try_lend(self.allocated[at])?;
        self.scan_from = at + 1;
        Some(lease)
    }

    /// Waits, within the pool's allowance (see [`OutputPool::lease`]), for a reader to free a
    /// block that fits; `None` when no reader holds one, the allowance is spent, or none came.
    fn wait_for_return(&mut self, len: usize, size: usize) -> Option<Lease> {
        let (made, took) = self.last_made?;
        #[allow(clippy::cast_precision_loss)] // a ratio of sizes: precision past 2^52 is moot
        let cost = took.mul_f64(size as f64 / made as f64);
        let allowance = cost.saturating_sub(self.waited).min(RETURN_WAIT);
        if allowance.is_zero() || !self.any_returning(len) {
            return None;
        }
        let table = self.output.table.clone();
        let started = Instant::now();
        let lease =
            table.header().returns.wait_until(Some(started + allowance), DEFAULT_SPIN, || self.lend_free(len, size));
        self.waited += started.elapsed();
        lease
    }

    /// Whether readers hold a block of at least `len` bytes that the producer does not: one
    /// that comes back once they are done with it.
    fn any_returning(&self, len: usize) -> bool {
        self.allocated.iter().any(|&slot| {
            let holders = self.output.table.entry(slot).holders.load(Ordering::Acquire);
            holders != 0
                && holders & LOAN_BIT == 0
                && self.blocks[slot].as_ref().is_some_and(|b| b.segment.len() >= len)
        })
    }

    /// A slot with no block: never used, or left by an earlier producer and now free.
    fn empty_slot(&self) -> Option<usize> {
        let table = &self.output.table;
        (0..MAX_BLOCKS).find(|&slot| self.blocks[slot].is_none() && (table.seq(slot) == 0 || table.clear_if_free(slot)))
    }

    fn is_free(&self, slot: usize) -> bool {
        self.output.table.entry(slot).holders.load(Ordering::Acquire) == 0
    }

    fn try_lend(&mut self, slot: usize) -> Option<Lease> {
        let entry = self.output.table.entry(slot);
        entry.holders.compare_exchange(0, LOAN_BIT, Ordering::AcqRel, Ordering::Acquire).ok()?;
        let b = self.blocks[slot].as_mut()?;
        b.last_use = self.uses;
        self.last_lent = Some(slot);
        Some(Lease {
            table: self.output.table.clone(),
            segment: b.segment.clone(),
            slot: u32::try_from(slot).ok()?,
            seq: entry.seq.load(Ordering::Relaxed),
            armed: true,
        })
    }

    fn create_block(&mut self, slot: usize, size: usize) -> Result<Lease, ShmError> {
        let seq = self.next_seq;
        self.next_seq += 1;
        let started = Instant::now();
        let segment = Arc::new(match self.output.block_name(seq) {
            Some(name) => Segment::create(&name, size, true)?,
            None => Segment::anonymous("nerve-block", size, true)?,
        });
        self.last_made = Some((size, started.elapsed()));
        self.waited = Duration::ZERO;
        let entry = self.output.table.entry(slot);
        entry.size.store(size as u64, Ordering::Relaxed);
        entry.holders.store(LOAN_BIT, Ordering::Relaxed);
        entry.seq.store(seq, Ordering::Release);
        self.blocks[slot] = Some(LocalBlock { segment: segment.clone(), last_use: self.uses });
        self.allocated.push(slot);
        self.last_lent = Some(slot);
        tracing::trace!(block = %segment.name(), size, "new block");
        let slot = u32::try_from(slot).map_err(|_| ShmError::PoolExhausted(MAX_BLOCKS))?;
        if self.output.names.is_none() {
            self.fresh.push(NewBlock { slot, seq, segment: segment.clone() });
        }
        Ok(Lease { table: self.output.table.clone(), segment, slot, seq, armed: true })
    }

    fn allocated_bytes(&self) -> usize {
        self.allocated.iter().filter_map(|&s| self.blocks[s].as_ref()).map(|b| b.segment.len()).sum()
    }

    /// Frees the oldest unused blocks until `extra` more bytes fit under the capacity.
    fn make_room(&mut self, extra: usize) {
        while self.allocated_bytes() + extra > self.capacity {
            if !self.retire_one_free() {
                break;
            }
        }
    }

    fn retire_one_free(&mut self) -> bool {
        let oldest = self
            .allocated
            .iter()
            .filter_map(|&slot| self.blocks[slot].as_ref().map(|b| (slot, b.last_use)))
            .filter(|&(slot, _)| self.is_free(slot))
            .min_by_key(|&(_, last)| last);
        let Some((slot, _)) = oldest else {
            return false;
        };
        if !self.output.table.clear_if_free(slot) {
            return false;
        }
        if let Some(b) = self.blocks[slot].take() {
            b.segment.unlink();
        }
        self.allocated.retain(|&s| s != slot);
        true
    }
}

/// A reader's reference to a received block; dropping it returns the block to its pool.
#[derive(Debug)]
pub struct BlockRef {
    table: Arc<BlockTable>,
    segment: Arc<Segment>,
    slot: usize,
    bit: u64,
}

impl BlockRef {
    /// The block's bytes.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the reader's holder bit keeps the producer from reusing this block, and
        // the mapping lives as long as `segment`.
        unsafe { std::slice::from_raw_parts(self.segment.as_ptr(), self.segment.len()) }
    }
}

impl Drop for BlockRef {
    fn drop(&mut self) {
        self.table.release(self.slot, self.bit);
    }
}

/// Blocks handed to a reader as file descriptors, filed by the thread that receives them and
/// taken by the reader when a message names them (the producer sends a block before any
/// message in it; a reader checks [`BlockCache::is_available`] before taking a message).
#[derive(Debug, Default)]
pub struct HandedBlocks {
    by_slot: Mutex<HashMap<u32, (u64, Arc<Segment>)>>,
}

impl HandedBlocks {
    /// Files block `seq` of `slot` (replacing the slot's older block).
    pub fn add(&self, slot: u32, seq: u64, segment: Segment) {
        self.lock().insert(slot, (seq, Arc::new(segment)));
    }

    fn get(&self, slot: u32, seq: u64) -> Option<Arc<Segment>> {
        self.lock().get(&slot).filter(|(s, _)| *s == seq).map(|(_, seg)| seg.clone())
    }

    fn has(&self, slot: u32, seq: u64) -> bool {
        self.get(slot, seq).is_some()
    }

    /// Drops blocks their producer has retired from `table`.
    fn forget_retired(&self, table: &BlockTable) {
        self.lock().retain(|&slot, (seq, _)| table.seq(slot as usize) == *seq);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u32, (u64, Arc<Segment>)>> {
        crate::sync::lock(&self.by_slot)
    }
}

/// How much of a block's head [`BlockCache::prefetch`] loads: a small message's header,
/// type, layout and first data bytes.
const PREFETCH_BYTES: usize = 256;

#[cfg(target_arch = "x86_64")]
fn prefetch_lines(ptr: *const u8, len: usize) {
    use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
    for offset in (0..len).step_by(64) {
        // SAFETY: a prefetch is a hint: it never faults, and the range lies in the mapping.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(ptr.add(offset).cast()) };
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn prefetch_lines(_ptr: *const u8, _len: usize) {}

/// Reader-side mappings of one output's blocks, each mapped once and reused.
#[derive(Debug)]
pub struct BlockCache {
    output: OutputBlocks,
    handed: Option<Arc<HandedBlocks>>,
    bit: u64,
    mapped: Vec<Option<(u64, Arc<Segment>)>>,
    since_sweep: u32,
}

impl BlockCache {
    /// Reader edge `edge` (0..63) of output `output` of node `node`.
    ///
    /// # Errors
    /// When the output's block table cannot be mapped.
    pub fn open(names: &RunNames, node: usize, output: usize, edge: usize) -> Result<Self, ShmError> {
        Ok(Self::with(OutputBlocks::open(names, node, output)?, None, edge))
    }

    /// Reader edge `edge` of a pool whose table and blocks are handed over as descriptors.
    #[must_use]
    pub fn handed(table: BlockTable, blocks: Arc<HandedBlocks>, edge: usize) -> Self {
        Self::with(OutputBlocks { table: Arc::new(table), names: None }, Some(blocks), edge)
    }

    fn with(output: OutputBlocks, handed: Option<Arc<HandedBlocks>>, edge: usize) -> Self {
        Self { output, handed, bit: 1u64 << edge, mapped: (0..MAX_BLOCKS).map(|_| None).collect(), since_sweep: 0 }
    }

    /// Takes over the reference a queue entry carries.
    ///
    /// # Errors
    /// When the entry names a block that does not exist; the reference is released then.
    pub fn take(&mut self, slot: u32, seq: u64) -> Result<BlockRef, ShmError> {
        let index = slot as usize;
        if index >= MAX_BLOCKS {
            return Err(ShmError::Malformed(format!("block slot {slot} out of range")));
        }
        self.since_sweep += 1;
        if self.since_sweep >= 256 {
            self.sweep();
        }
        let segment = match &self.mapped[index] {
            Some((s, seg)) if *s == seq => seg.clone(),
            _ => match self.find(slot, seq) {
                Ok(seg) => {
                    self.mapped[index] = Some((seq, seg.clone()));
                    seg
                }
                Err(e) => {
                    self.output.table.release(index, self.bit);
                    return Err(e);
                }
            },
        };
        Ok(BlockRef { table: self.output.table.clone(), segment, slot: index, bit: self.bit })
    }

    /// Starts loading the head of block `seq` of `slot` into this core's cache, if it is
    /// mapped already: the next message's header and first bytes, written by the producer on
    /// another core, arrive while this one is being handled.
    pub fn prefetch(&self, slot: u32, seq: u64) {
        if let Some(Some((s, segment))) = self.mapped.get(slot as usize)
            && *s == seq
        {
            prefetch_lines(segment.as_ptr(), segment.len().min(PREFETCH_BYTES));
        }
    }

    /// Whether block `seq` of `slot` can be taken without waiting: named blocks always can,
    /// handed-over ones once their descriptor has arrived.
    #[must_use]
    pub fn is_available(&self, slot: u32, seq: u64) -> bool {
        let mapped = self.mapped.get(slot as usize).and_then(Option::as_ref).is_some_and(|(s, _)| *s == seq);
        mapped || self.handed.as_ref().is_none_or(|h| h.has(slot, seq))
    }

    fn find(&self, slot: u32, seq: u64) -> Result<Arc<Segment>, ShmError> {
        if let Some(name) = self.output.block_name(seq) {
            return Segment::open(&name, Access::ReadOnly).map(Arc::new);
        }
        self.handed.as_ref().and_then(|h| h.get(slot, seq)).ok_or_else(|| {
            ShmError::Malformed(format!("block {seq} (slot {slot}) was never handed over by its producer"))
        })
    }

    /// Unmaps blocks the producer has retired, so freed memory really goes back to the system.
    fn sweep(&mut self) {
        self.since_sweep = 0;
        if let Some(h) = &self.handed {
            h.forget_retired(&self.output.table);
        }
        for (slot, m) in self.mapped.iter_mut().enumerate() {
            if let Some((seq, _)) = m
                && self.output.table.seq(slot) != *seq
            {
                *m = None;
            }
        }
    }
}

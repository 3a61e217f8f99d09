//! Per-output pools of shared-memory blocks, allocated on demand (DORA's algorithm).
//!
//! A producer sends into the smallest free block that fits, or creates a block of exactly the
//! page-rounded size; past the pool's capacity it frees its oldest unused blocks first. The
//! block table lives in a small shared segment: each block's `holders` word has one bit per
//! reader edge (bit 63 marks the producer's own loan), so a block is free again exactly when
//! every reader dropped it, and the runtime can clear a dead reader's bits.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

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

#[repr(C)]
struct PoolHeader {
    magic: AtomicU64,
    version: AtomicU64,
    n_blocks: AtomicU64,
    _pad: [u64; 5],
}

#[repr(C)]
struct BlockEntry {
    seq: AtomicU64,
    size: AtomicU64,
    holders: AtomicU64,
    _pad: AtomicU64,
}

/// The shared block table of one output.
#[derive(Debug)]
pub struct BlockTable {
    segment: Segment,
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
        let segment = Segment::create(name, Self::bytes(), true)?;
        let t = Self { segment };
        let h = t.header();
        h.n_blocks.store(MAX_BLOCKS as u64, Ordering::Relaxed);
        h.version.store(VERSION, Ordering::Relaxed);
        h.magic.store(MAGIC, Ordering::Release);
        Ok(t)
    }

    /// Maps an existing table.
    ///
    /// # Errors
    /// When the segment is missing or is not a block table of this version.
    pub fn open(name: &str) -> Result<Self, ShmError> {
        let segment = Segment::open(name, Access::ReadWrite)?;
        let t = Self { segment };
        let h = t.header();
        if t.segment.len() < Self::bytes()
            || h.magic.load(Ordering::Acquire) != MAGIC
            || h.version.load(Ordering::Relaxed) != VERSION
            || h.n_blocks.load(Ordering::Relaxed) != MAX_BLOCKS as u64
        {
            return Err(ShmError::BadHeader { name: name.to_owned(), what: "block table" });
        }
        Ok(t)
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
        self.entry(slot).holders.fetch_and(!bit, Ordering::AcqRel);
    }

    /// Clears reader `bit` from every block: used when that reader is gone.
    pub fn release_all(&self, bit: u64) {
        for slot in 0..MAX_BLOCKS {
            self.release(slot, bit);
        }
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

/// One output's block table and the names of its blocks: what both ends of an output share.
#[derive(Debug)]
struct OutputBlocks {
    table: Arc<BlockTable>,
    names: RunNames,
    node: usize,
    output: usize,
}

impl OutputBlocks {
    fn open(names: &RunNames, node: usize, output: usize) -> Result<Self, ShmError> {
        let table = Arc::new(BlockTable::open(&names.pool(node, output))?);
        Ok(Self { table, names: names.clone(), node, output })
    }

    fn block_name(&self, seq: u64) -> String {
        self.names.block(self.node, self.output, seq)
    }
}

/// Producer-side view of an output's pool.
#[derive(Debug)]
pub struct OutputPool {
    output: OutputBlocks,
    blocks: Vec<Option<LocalBlock>>,
    /// Slots that hold a block, so a send scans a handful of blocks, not the whole table.
    allocated: Vec<usize>,
    next_seq: u64,
    uses: u64,
    capacity: usize,
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
    pub fn open(names: &RunNames, node: usize, output: usize, capacity: usize) -> Result<Self, ShmError> {
        Ok(Self {
            output: OutputBlocks::open(names, node, output)?,
            blocks: (0..MAX_BLOCKS).map(|_| None).collect(),
            allocated: Vec::new(),
            next_seq: 1,
            uses: 0,
            capacity,
        })
    }

    /// The shared block table.
    #[must_use]
    pub fn table(&self) -> &Arc<BlockTable> {
        &self.output.table
    }

    /// Lends a block of at least `len` bytes: the smallest free one, or a new one.
    ///
    /// # Errors
    /// When a new block cannot be created, or every slot is held by readers.
    pub fn lease(&mut self, len: usize) -> Result<Lease, ShmError> {
        self.uses += 1;
        let mut best: Option<(usize, usize)> = None;
        for &slot in &self.allocated {
            if let Some(b) = &self.blocks[slot] {
                let size = b.segment.len();
                if size >= len && best.is_none_or(|(_, s)| size < s) && self.is_free(slot) {
                    best = Some((slot, size));
                }
            }
        }
        if let Some((slot, _)) = best
            && let Some(lease) = self.try_lend(slot)
        {
            return Ok(lease);
        }
        let size = page_round(len);
        self.make_room(size);
        let Some(slot) = self.blocks.iter().position(Option::is_none) else {
            self.retire_one_free();
            return match self.blocks.iter().position(Option::is_none) {
                Some(slot) => self.create_block(slot, size),
                None => Err(ShmError::PoolExhausted(MAX_BLOCKS)),
            };
        };
        self.create_block(slot, size)
    }

    fn is_free(&self, slot: usize) -> bool {
        self.output.table.entry(slot).holders.load(Ordering::Acquire) == 0
    }

    fn try_lend(&mut self, slot: usize) -> Option<Lease> {
        let entry = self.output.table.entry(slot);
        entry.holders.compare_exchange(0, LOAN_BIT, Ordering::AcqRel, Ordering::Acquire).ok()?;
        let b = self.blocks[slot].as_mut()?;
        b.last_use = self.uses;
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
        let name = self.output.block_name(seq);
        let segment = Arc::new(Segment::create(&name, size, true)?);
        let entry = self.output.table.entry(slot);
        entry.size.store(size as u64, Ordering::Relaxed);
        entry.holders.store(LOAN_BIT, Ordering::Relaxed);
        entry.seq.store(seq, Ordering::Release);
        self.blocks[slot] = Some(LocalBlock { segment: segment.clone(), last_use: self.uses });
        self.allocated.push(slot);
        tracing::trace!(block = %name, size, "new block");
        Ok(Lease {
            table: self.output.table.clone(),
            segment,
            slot: u32::try_from(slot).map_err(|_| ShmError::PoolExhausted(MAX_BLOCKS))?,
            seq,
            armed: true,
        })
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
        let entry = self.output.table.entry(slot);
        // Claim it so no reader-side sweep races with the retirement.
        if entry.holders.compare_exchange(0, LOAN_BIT, Ordering::AcqRel, Ordering::Acquire).is_err() {
            return false;
        }
        if let Some(b) = self.blocks[slot].take() {
            b.segment.unlink();
        }
        self.allocated.retain(|&s| s != slot);
        entry.seq.store(0, Ordering::Release);
        entry.size.store(0, Ordering::Relaxed);
        entry.holders.store(0, Ordering::Release);
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

/// Reader-side mappings of one output's blocks, each mapped once and reused.
#[derive(Debug)]
pub struct BlockCache {
    output: OutputBlocks,
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
        Ok(Self {
            output: OutputBlocks::open(names, node, output)?,
            bit: 1u64 << edge,
            mapped: (0..MAX_BLOCKS).map(|_| None).collect(),
            since_sweep: 0,
        })
    }

    /// Takes over the reference a queue entry carries.
    ///
    /// # Errors
    /// When the entry names a block that does not exist; the reference is released then.
    pub fn take(&mut self, slot: u32, seq: u64) -> Result<BlockRef, ShmError> {
        let slot = slot as usize;
        if slot >= MAX_BLOCKS {
            return Err(ShmError::Malformed(format!("block slot {slot} out of range")));
        }
        self.since_sweep += 1;
        if self.since_sweep >= 256 {
            self.sweep();
        }
        let segment = match &self.mapped[slot] {
            Some((s, seg)) if *s == seq => seg.clone(),
            _ => {
                let name = self.output.block_name(seq);
                match Segment::open(&name, Access::ReadOnly) {
                    Ok(seg) => {
                        let seg = Arc::new(seg);
                        self.mapped[slot] = Some((seq, seg.clone()));
                        seg
                    }
                    Err(e) => {
                        self.output.table.release(slot, self.bit);
                        return Err(e);
                    }
                }
            }
        };
        Ok(BlockRef { table: self.output.table.clone(), segment, slot, bit: self.bit })
    }

    /// Unmaps blocks the producer has retired, so freed memory really goes back to the system.
    fn sweep(&mut self) {
        self.since_sweep = 0;
        for (slot, m) in self.mapped.iter_mut().enumerate() {
            if let Some((seq, _)) = m
                && self.output.table.seq(slot) != *seq
            {
                *m = None;
            }
        }
    }
}

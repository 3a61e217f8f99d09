//! The shared block table of one output: a small segment with one entry per block, whose
//! `holders` word has one bit per reader edge (bit 63 marks the producer's own loan), so a
//! block is free again exactly when every reader dropped it, and the runtime can clear a dead
//! reader's bits.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::doorbell::Doorbell;
use crate::error::ShmError;
use crate::names::RunNames;
use crate::segment::{Access, Segment};

const MAGIC: u64 = 0x4e45_5256_504f_4f4c; // "NERVPOOL"
const VERSION: u64 = 1;
/// Blocks one output can have at once.
pub const MAX_BLOCKS: usize = 1024;
/// Holder bit of the producer while it fills a block.
pub const LOAN_BIT: u64 = 1 << 63;
/// Reader edges one output can have (one holder bit each).
pub const MAX_READERS: usize = 63;

#[repr(C)]
pub(super) struct PoolHeader {
    magic: AtomicU64,
    version: AtomicU64,
    n_blocks: AtomicU64,
    /// Rung by the reader that frees a block while the producer waits for one.
    pub(super) returns: Doorbell,
    _pad: [u64; 4],
}

#[repr(C)]
pub(super) struct BlockEntry {
    pub(super) seq: AtomicU64,
    pub(super) size: AtomicU64,
    pub(super) holders: AtomicU64,
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

    pub(super) fn header(&self) -> &PoolHeader {
        // SAFETY: the segment is at least `bytes()` long and holds only atomics.
        unsafe { &*self.segment.as_ptr().cast::<PoolHeader>() }
    }

    pub(super) fn entry(&self, slot: usize) -> &BlockEntry {
        assert!(slot < MAX_BLOCKS, "block slot {slot} out of range");
        // SAFETY: in bounds by the assertion; entries are atomics, valid for any bytes.
        unsafe { &*self.segment.as_ptr().add(std::mem::size_of::<PoolHeader>()).cast::<BlockEntry>().add(slot) }
    }

    /// Current generation of a slot (0: empty).
    #[must_use]
    pub fn seq(&self, slot: usize) -> u64 {
        self.entry(slot).seq.load(Ordering::Acquire)
    }

    /// Whether the producer is asleep waiting for a reader to hand a block back (see
    /// [`crate::pool::OutputPool::lease`]).
    #[must_use]
    pub fn producer_waiting(&self) -> bool {
        self.header().returns.sleepers() != 0
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
    pub(super) fn clear_if_free(&self, slot: usize) -> bool {
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
pub(super) struct OutputBlocks {
    pub(super) table: Arc<BlockTable>,
    /// Names of the blocks, for named pools; `None` when blocks are handed over as descriptors.
    pub(super) names: Option<(RunNames, usize, usize)>,
}

impl OutputBlocks {
    pub(super) fn open(names: &RunNames, node: usize, output: usize) -> Result<Self, ShmError> {
        let table = Arc::new(BlockTable::open(&names.pool(node, output))?);
        Ok(Self { table, names: Some((names.clone(), node, output)) })
    }

    pub(super) fn block_name(&self, seq: u64) -> Option<String> {
        self.names.as_ref().map(|(names, node, output)| names.block(*node, *output, seq))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_that_is_not_a_table_is_refused() -> Result<(), ShmError> {
        let blank = Segment::anonymous("not-a-table", BlockTable::bytes(), true)?;
        assert!(matches!(BlockTable::from_segment(blank), Err(ShmError::BadHeader { what: "block table", .. })));
        let short = Segment::anonymous("short", 64, true)?;
        assert!(BlockTable::from_segment(short).is_err());
        Ok(())
    }

    #[test]
    fn a_block_is_free_again_once_every_holder_let_go() -> Result<(), ShmError> {
        let table = BlockTable::anonymous("holders")?;
        let entry = table.entry(7);
        entry.size.store(4096, Ordering::Relaxed);
        entry.holders.store(0b11, Ordering::Relaxed);
        entry.seq.store(5, Ordering::Release);
        assert_eq!(table.usage(), PoolUsage { blocks: 1, bytes: 4096, held_bytes: 4096 });
        assert!(!table.clear_if_free(7), "two readers hold it");
        table.release(7, 0b01);
        assert!(!table.clear_if_free(7), "one reader still holds it");
        table.release_all(0b10);
        assert_eq!(table.usage().held_bytes, 0);
        assert!(table.clear_if_free(7));
        assert_eq!((table.seq(7), table.usage().blocks), (0, 0));
        Ok(())
    }
}

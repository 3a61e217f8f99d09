//! A reader's side of an output's pool: [`BlockCache`] maps each block once and turns a queue
//! entry into a [`BlockRef`], whose drop hands the block back; [`HandedBlocks`] files the
//! blocks of a pool whose blocks arrive as file descriptors.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::table::{BlockTable, MAX_BLOCKS, OutputBlocks};
use crate::error::ShmError;
use crate::names::RunNames;
use crate::segment::{Access, Segment};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handed_blocks_are_found_by_slot_and_generation() -> Result<(), ShmError> {
        let table = BlockTable::anonymous("handed")?;
        let handed = HandedBlocks::default();
        handed.add(3, 9, Segment::anonymous("block", 4096, false)?);
        assert!(handed.has(3, 9));
        assert!(!handed.has(3, 8), "another generation of the slot");
        // The producer has not (or no longer) got block 9 in slot 3: it was retired.
        handed.forget_retired(&table);
        assert!(!handed.has(3, 9));
        Ok(())
    }

    #[test]
    fn an_entry_that_names_no_block_is_refused() -> Result<(), ShmError> {
        let table = BlockTable::anonymous("refusing")?;
        let mut cache = BlockCache::handed(table, Arc::new(HandedBlocks::default()), 0);
        assert!(matches!(cache.take(MAX_BLOCKS as u32, 1), Err(ShmError::Malformed(_))));
        assert!(!cache.is_available(2, 5));
        assert!(matches!(cache.take(2, 5), Err(ShmError::Malformed(_))));
        Ok(())
    }
}

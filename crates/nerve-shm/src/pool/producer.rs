//! The producer's side of an output's pool: [`OutputPool`] lends blocks ([`Lease`]) to fill,
//! reusing the one lent last, then the smallest free one that fits, then one a reader hands
//! back soon, or making a new one, freeing its oldest unused blocks past the capacity.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::table::{BlockTable, LOAN_BIT, MAX_BLOCKS, OutputBlocks};
use crate::doorbell::DEFAULT_SPIN;
use crate::error::ShmError;
use crate::names::RunNames;
use crate::segment::{Access, Segment, page_round};

/// Default bound on the bytes of one output's pool before unused blocks are freed.
pub const DEFAULT_CAPACITY: usize = 1 << 30;
/// Longest one lease waits for a reader to hand a block back before it makes a new one.
const RETURN_WAIT: Duration = Duration::from_millis(2);
/// Leases since a free block was last lent after which, when the pool grows for a message it
/// cannot hold, it counts as outgrown and is freed.
const OUTGROWN_AFTER: u64 = 16;

/// How long a lease for a block of `size` bytes may wait for one to come back, when making the
/// last block (`made`: its size and how long it took) tells what a new one costs and leases
/// have `waited` so much since: what is left of that cost, at most [`RETURN_WAIT`].
fn allowance(made: (usize, Duration), size: usize, waited: Duration) -> Duration {
    let (made, took) = made;
    #[allow(clippy::cast_precision_loss)] // a ratio of sizes: precision past 2^52 is moot
    let cost = took.mul_f64(size as f64 / made.max(1) as f64);
    cost.saturating_sub(waited).min(RETURN_WAIT)
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
    /// A fixed bound on each wait for a returning block, in place of the allowance.
    return_wait: Option<Duration>,
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
            return_wait: None,
        }
    }

    /// Makes every lease that finds no free block wait up to `bound` for a reader to hand one
    /// back before it makes a new one, in place of the allowance that weighs the wait against
    /// the cost of making a block (see [`OutputPool::lease`]); `None` restores that allowance.
    /// A producer of very large messages that must never grow its pool past what its readers
    /// hold sets a long bound.
    pub fn set_return_wait(&mut self, bound: Option<Duration>) {
        self.return_wait = bound;
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
        self.retire_outgrown(len);
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
        let allowance = match self.return_wait {
            Some(bound) => bound,
            None => allowance(self.last_made?, size, self.waited),
        };
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
        oldest.is_some_and(|(slot, _)| self.retire(slot))
    }

    /// Frees the blocks a growing message has left behind: free, smaller than `len` (the
    /// message the pool grows for) and not lent in [`OUTGROWN_AFTER`] leases. Without this, a
    /// message that keeps growing (a path, a map) would leave a block at every size it passed
    /// through, in `/dev/shm` and mapped by every reader, until the pool's capacity. A stream
    /// that still sends small messages between large ones keeps its small blocks: it lends them.
    fn retire_outgrown(&mut self, len: usize) {
        let outgrown: Vec<usize> = self
            .allocated
            .iter()
            .copied()
            .filter(|&slot| {
                self.blocks[slot]
                    .as_ref()
                    .is_some_and(|b| b.segment.len() < len && self.uses - b.last_use > OUTGROWN_AFTER)
            })
            .collect();
        for slot in outgrown {
            self.retire(slot);
        }
    }

    /// Frees block `slot` if no one holds it: its name goes, and readers drop their mappings
    /// when they next sweep. Whether it was freed.
    fn retire(&mut self, slot: usize) -> bool {
        if !self.output.table.clear_if_free(slot) {
            return false;
        }
        if let Some(b) = self.blocks[slot].take() {
            b.segment.unlink();
        }
        self.allocated.retain(|&s| s != slot);
        tracing::trace!(slot, "block retired");
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_lent_last_is_lent_again_once_free() -> Result<(), ShmError> {
        let mut pool = OutputPool::anonymous(DEFAULT_CAPACITY)?;
        let first = pool.lease(100)?;
        let (slot, seq) = (first.slot(), first.seq());
        assert!(first.capacity() >= 100);
        drop(first); // never queued: the loan ends, the block is free
        let again = pool.lease(100)?;
        assert_eq!((again.slot(), again.seq()), (slot, seq));
        // Held (here by the loan), it is not lent twice: a second lease gets another block.
        let other = pool.lease(100)?;
        assert_ne!(other.slot(), slot);
        Ok(())
    }

    #[test]
    fn a_pool_knows_its_own_leases_and_reports_new_blocks_once() -> Result<(), ShmError> {
        let mut pool = OutputPool::anonymous(DEFAULT_CAPACITY)?;
        let mut stranger = OutputPool::anonymous(DEFAULT_CAPACITY)?;
        let lease = pool.lease(10)?;
        assert!(pool.lent(&lease));
        let own = stranger.lease(10)?;
        assert!(stranger.lent(&own));
        assert!(!stranger.lent(&lease));
        let fresh = pool.take_new_blocks();
        assert_eq!(fresh.iter().map(|b| (b.slot, b.seq)).collect::<Vec<_>>(), [(lease.slot(), lease.seq())]);
        assert!(pool.take_new_blocks().is_empty());
        assert_eq!(pool.blocks().len(), 1);
        Ok(())
    }

    fn sizes(pool: &OutputPool) -> Vec<usize> {
        let mut sizes: Vec<usize> = pool.blocks().iter().map(|b| b.segment.len()).collect();
        sizes.sort_unstable();
        sizes
    }

    #[test]
    fn a_growing_message_leaves_no_block_behind_but_a_stream_of_two_sizes_keeps_both() -> Result<(), ShmError> {
        let page = page_round(1);
        let mut pool = OutputPool::anonymous(DEFAULT_CAPACITY)?;
        drop(pool.lease(page)?);
        for _ in 0..=OUTGROWN_AFTER {
            drop(pool.lease(2 * page)?);
        }
        // Grown again: the one-page block, unused for over OUTGROWN_AFTER leases, is freed;
        // the two-page one, lent just now, is kept (a reader may still be sending it back).
        let held = pool.lease(3 * page)?;
        assert_eq!(sizes(&pool), [2 * page, 3 * page]);
        // A block that is held is never freed, however old.
        for _ in 0..=OUTGROWN_AFTER {
            drop(pool.lease(3 * page)?);
        }
        drop(pool.lease(4 * page)?);
        assert_eq!(sizes(&pool), [3 * page, 3 * page, 4 * page]);
        drop(held);

        let mut pool = OutputPool::anonymous(DEFAULT_CAPACITY)?;
        for _ in 0..=OUTGROWN_AFTER {
            drop(pool.lease(page)?);
            drop(pool.lease(2 * page)?);
        }
        drop(pool.lease(3 * page)?);
        assert_eq!(sizes(&pool), [page, 2 * page, 3 * page]);
        Ok(())
    }

    #[test]
    fn a_lease_waits_at_most_what_a_new_block_costs_and_never_past_the_cap() {
        let ms = Duration::from_millis;
        // The last 4 MiB block took 1 ms: an 8 MiB one would take 2, so a lease may wait 2.
        assert_eq!(allowance((4 << 20, ms(1)), 8 << 20, Duration::ZERO), ms(2));
        // What leases already waited since the pool last grew is spent.
        assert_eq!(allowance((4 << 20, ms(1)), 8 << 20, ms(2)), Duration::ZERO);
        assert_eq!(allowance((4 << 20, ms(1)), 4 << 20, Duration::from_micros(400)), Duration::from_micros(600));
        // A block that is slow to make still lets a lease wait no longer than RETURN_WAIT.
        assert_eq!(allowance((1 << 20, ms(10)), 64 << 20, Duration::ZERO), RETURN_WAIT);
    }
}

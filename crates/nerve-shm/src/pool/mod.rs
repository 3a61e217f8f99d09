//! Per-output pools of shared-memory blocks, allocated on demand (DORA's algorithm).
//!
//! A producer sends into the block it lent last once that is free again and of the size, else
//! into the smallest free block that fits; with none free, it waits a little for a reader to
//! hand one back (see [`OutputPool::lease`]), else creates a block of exactly the page-rounded
//! size; past the pool's capacity it frees its oldest unused blocks first. The block table
//! lives in a small shared segment: each block's `holders` word has one bit per reader edge
//! (bit 63 marks the producer's own loan), so a block is free again exactly when every reader
//! dropped it, and the runtime can clear a dead reader's bits.
//!
//! The code is in three files, one per concept:
//!
//! * `pool/table.rs`: the shared block table, what both ends of an output see;
//! * `pool/producer.rs`: [`OutputPool`] and the [`Lease`] of a block to fill;
//! * `pool/reader.rs`: [`BlockCache`], the [`BlockRef`] of a received block, and [`HandedBlocks`].

mod producer;
mod reader;
mod table;

pub use producer::{DEFAULT_CAPACITY, Lease, NewBlock, OutputPool};
pub use reader::{BlockCache, BlockRef, HandedBlocks};
pub use table::{BlockTable, LOAN_BIT, MAX_BLOCKS, MAX_READERS, PoolUsage};

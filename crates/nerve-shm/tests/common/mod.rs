//! Set-up shared by the in-process pool tests.

use std::sync::Arc;

use nerve_shm::channel::{FanOut, ReaderLink};
use nerve_shm::inbox::{Inbox, QueueShape};
use nerve_shm::pool::{BlockTable, OutputPool};
use nerve_shm::ring::Policy;

/// A producer of `pool_capacity` bytes of blocks and one reader with a `drop_oldest` queue of
/// `queue_capacity`, in this process: the test plays the reader, popping and releasing blocks
/// when it wants.
pub fn one_reader(pool_capacity: usize, queue_capacity: usize) -> (FanOut, Arc<Inbox>, Arc<BlockTable>) {
    let pool = OutputPool::anonymous(pool_capacity).expect("pool");
    let table = pool.table().clone();
    let shape = [QueueShape { capacity: queue_capacity, policy: Policy::DropOldest }];
    let reader = Arc::new(Inbox::anonymous("reader", &shape).expect("inbox"));
    let publisher = FanOut::new(pool, vec![ReaderLink { inbox: reader.clone(), queue: 0, edge: 0 }], None);
    (publisher, reader, table)
}

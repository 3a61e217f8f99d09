//! Which block a send is lent: a stream whose reader keeps up writes into the same block every
//! time, however many blocks an earlier burst left in the pool; while that block is still
//! queued, another free block of the pool is lent rather than a new one made; and with none free,
//! a lease waits for its reader to hand a block back rather than make a (slow, large) new one.

mod common;

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use nerve_shm::channel::FanOut;
use nerve_shm::ring::Seen;

const LEN: usize = 64 * 1024;

#[test]
fn a_paced_stream_keeps_one_block_after_a_burst() {
    let (mut publisher, reader, table) = common::one_reader(1 << 30, 8);
    let stop = AtomicBool::new(false);
    let mut stamp = 0;
    let mut send = |publisher: &mut FanOut| {
        let lease = publisher.lease(LEN).expect("lease");
        stamp += 1;
        publisher.publish(lease, LEN, stamp, &stop);
        reader.ring(0).pop(&Seen::default()).expect("queued").slot as usize
    };

    // A burst: three messages queued before the reader is done with any.
    let burst: Vec<usize> = (0..3).map(|_| send(&mut publisher)).collect();
    assert_eq!(table.usage().blocks, 3, "one block per message held at once");
    for &slot in &burst {
        table.release(slot, 1);
    }

    // Then the reader keeps up: every message goes to the block of the message before it.
    let paced: Vec<usize> = (0..10)
        .map(|_| {
            let slot = send(&mut publisher);
            table.release(slot, 1);
            slot
        })
        .collect();
    assert!(paced.iter().all(|&s| s == burst[2]), "paced sends went to blocks {paced:?}, burst {burst:?}");

    // While that block is held, a free block of the pool is lent, not a new one.
    let held = send(&mut publisher);
    let next = send(&mut publisher);
    assert_ne!(next, held);
    assert!(burst.contains(&next), "block {next} is none of the pool's {burst:?}");
    assert_eq!(table.usage().blocks, 3);
}

#[test]
fn a_lease_waits_for_the_block_its_reader_hands_back_instead_of_making_one() {
    const LARGE: usize = 64 << 20;
    let (mut publisher, reader, table) = common::one_reader(1 << 30, 16);
    // However long this machine keeps the test off the CPU, the lease waits: what is asserted
    // is that it waits for the returning block, not how long its allowance is (a unit test of
    // `pool::producer` pins that).
    publisher.pool_mut().set_return_wait(Some(HUNG));
    let stop = AtomicBool::new(false);
    let lease = publisher.lease(LARGE).expect("lease");
    publisher.publish(lease, LARGE, 1, &stop);
    let held = reader.ring(0).pop(&Seen::default()).expect("queued").slot as usize;
    let waiting = std::thread::spawn(move || {
        let lease = publisher.lease(LARGE).expect("lease");
        lease.slot() as usize
    });
    let deadline = Instant::now() + HUNG;
    while !table.producer_waiting() {
        assert!(Instant::now() < deadline, "the second lease never waited for the held block");
        std::thread::yield_now();
    }
    assert_eq!(table.usage().blocks, 1, "a block was made while the lease waited");
    table.release(held, 1);
    let lent = waiting.join().expect("leasing thread");
    assert_eq!(lent, held, "the lease took a new block instead of the one handed back");
    assert_eq!(table.usage().blocks, 1);
}

/// How long anything here may take before the test is failed as hung (a broken build only).
const HUNG: Duration = Duration::from_secs(20);

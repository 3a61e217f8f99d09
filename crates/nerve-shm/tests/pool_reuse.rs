//! Which block a send is lent: a stream whose reader keeps up writes into the same block every
//! time, however many blocks an earlier burst left in the pool; while that block is still
//! queued, another free block of the pool is lent rather than a new one made, and a burst of
//! large messages waits for its reader to hand blocks back rather than make a slow block each.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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
fn a_burst_of_large_messages_waits_for_blocks_its_reader_hands_back() {
    // A reader kept off the CPU for longer than a lease waits (2 ms) rightly makes the pool
    // grow, so a busy machine gets a few tries; without the wait every try makes a second block,
    // the first message's block being still held when the second is leased.
    let mut made = Vec::new();
    while made.len() < 5 && made.last() != Some(&1) {
        made.push(blocks_after_a_burst());
    }
    assert_eq!(made.last(), Some(&1), "each burst made blocks instead of waiting for the one there was: {made:?}");
}

/// Ten 64 MiB messages sent at once, as when a producer catches up with its schedule (a block
/// of this size takes milliseconds to make), to a reader that takes each as it comes and is done
/// with it 300 µs later: how many blocks the pool made.
fn blocks_after_a_burst() -> usize {
    const LARGE: usize = 64 << 20;
    let (mut publisher, reader, table) = common::one_reader(1 << 30, 16);
    let stop = Arc::new(AtomicBool::new(false));
    let reading = {
        let (reader, table, stop) = (reader.clone(), table.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut read = 0;
            while !stop.load(Ordering::Acquire) {
                match reader.ring(0).pop(&Seen::default()) {
                    Some(d) => {
                        let until = Instant::now() + Duration::from_micros(300);
                        while Instant::now() < until {
                            std::hint::spin_loop();
                        }
                        table.release(d.slot as usize, 1);
                        read += 1;
                    }
                    None => std::thread::yield_now(),
                }
            }
            read
        })
    };
    for stamp in 0..10 {
        let lease = publisher.lease(LARGE).expect("lease");
        publisher.publish(lease, LARGE, stamp, &stop);
    }
    while table.usage().held_bytes != 0 {
        std::thread::yield_now();
    }
    stop.store(true, Ordering::Release);
    assert_eq!(reading.join().expect("reader thread"), 10, "every message read once");
    table.usage().blocks
}

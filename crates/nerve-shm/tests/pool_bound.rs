//! An output's pool stays within its configured capacity under any mix of message sizes: past
//! it, unused blocks are freed oldest first, so only blocks readers still hold (and the block of
//! the message being sent) can take it over.

mod common;

use std::sync::atomic::AtomicBool;

use nerve_shm::segment::page_round;
use proptest::prelude::*;

const CAPACITY: usize = 1 << 20;

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn pool_bytes_stay_within_capacity_plus_what_readers_hold(
        sizes in prop::collection::vec(1usize..CAPACITY / 2, 1..120),
        keep_every in 0usize..6,
    ) {
        let (mut publisher, reader, table) = common::one_reader(CAPACITY, 4);
        let stop = AtomicBool::new(false);
        let mut largest = 0;
        for (n, &len) in sizes.iter().enumerate() {
            let lease = publisher.lease(len).expect("lease");
            publisher.publish(lease, len, n as u64, &stop);
            // The reader takes each message, keeps some of them for good, and drops the rest.
            let d = reader.ring(0).pop(&nerve_shm::ring::Seen::default()).expect("queued");
            if keep_every == 0 || n % keep_every != 0 {
                table.release(d.slot as usize, 1);
            }
            largest = largest.max(page_round(len));
            let usage = table.usage();
            prop_assert!(
                usage.bytes <= CAPACITY.max(usage.held_bytes + largest),
                "{} bytes in {} blocks, {} held, capacity {CAPACITY}", usage.bytes, usage.blocks, usage.held_bytes
            );
        }
    }
}

//! The data plane across real processes: this test binary re-runs itself as the peer process.

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use nerve_shm::channel::{Input, Publisher, ReaderLink};
use nerve_shm::inbox::{Inbox, QueueShape};
use nerve_shm::names::RunNames;
use nerve_shm::pool::{BlockCache, BlockTable, DEFAULT_CAPACITY, OutputPool};
use nerve_shm::ring::Policy;

const ROLE: &str = "NERVE_SHM_TEST_ROLE";
const RUN: &str = "NERVE_SHM_TEST_RUN";
const MESSAGES: u64 = 2000;

fn shape(policy: Policy, capacity: usize) -> [QueueShape; 1] {
    [QueueShape { capacity, policy }]
}

fn setup(run: &str, policy: Policy, capacity: usize) -> (RunNames, Arc<Inbox>, Arc<Inbox>, BlockTable) {
    let names = RunNames::new(run);
    let writer = Arc::new(Inbox::create(&names.inbox(0), &[]).expect("writer inbox"));
    let reader = Arc::new(Inbox::create(&names.inbox(1), &shape(policy, capacity)).expect("reader inbox"));
    let table = BlockTable::create(&names.pool(0, 0)).expect("block table");
    (names, writer, reader, table)
}

fn spawn_peer(test: &str, role: &str, run: &str) -> std::process::Child {
    Command::new(std::env::current_exe().expect("test binary"))
        .args([test, "--exact", "--nocapture"])
        .env(ROLE, role)
        .env(RUN, run)
        .spawn()
        .expect("peer process")
}

/// Producer side, run in the child: sends MESSAGES messages whose bytes derive from their number.
fn produce(run: &str, policy: Policy, capacity: usize) {
    let names = RunNames::new(run);
    let writer = Arc::new(Inbox::open(&names.inbox(0), &[]).expect("writer inbox"));
    let reader = Arc::new(Inbox::open(&names.inbox(1), &shape(policy, capacity)).expect("reader inbox"));
    let pool = OutputPool::open(&names, 0, 0, DEFAULT_CAPACITY).expect("pool");
    let mut publisher = Publisher::new(pool, vec![ReaderLink { inbox: reader, queue: 0, edge: 0 }], Some(writer));
    let stop = AtomicBool::new(false);
    for n in 0..MESSAGES {
        let len = 16 + (n as usize % 7) * 4096;
        let mut lease = publisher.lease(len).expect("lease");
        let bytes = lease.bytes_mut();
        bytes[..8].copy_from_slice(&n.to_le_bytes());
        for (i, b) in bytes[8..len].iter_mut().enumerate() {
            *b = (n as usize + i) as u8;
        }
        publisher.publish(lease, len, n, &stop);
    }
}

fn check(bytes: &[u8], len: usize) -> u64 {
    let n = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
    assert_eq!(len, 16 + (n as usize % 7) * 4096, "length of message {n}");
    assert!(bytes[8..len].iter().enumerate().all(|(i, &b)| b == (n as usize + i) as u8), "message {n} corrupted");
    n
}

#[test]
fn backpressure_delivers_everything_in_order_across_processes() {
    if let Ok(run) = std::env::var(RUN) {
        if std::env::var(ROLE).as_deref() == Ok("producer-bp") {
            produce(&run, Policy::Backpressure, 4);
        }
        return;
    }
    let run = format!("t{}bp", std::process::id());
    let (names, writer, reader, table) = setup(&run, Policy::Backpressure, 4);
    let mut child = spawn_peer("backpressure_delivers_everything_in_order_across_processes", "producer-bp", &run);
    let cache = BlockCache::open(&names, 0, 0, 0).expect("cache");
    let mut input = Input::new(reader.clone(), 0, cache, Some(writer));
    let mut expected = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    while expected < MESSAGES {
        let got = reader.doorbell().wait_until(Some(deadline), Duration::ZERO, || input.recv());
        let (block, len) = got.expect("message before the deadline").expect("mappable block");
        assert_eq!(check(block.bytes(), len), expected);
        expected += 1;
    }
    assert!(child.wait().expect("producer").success());
    // Every reference was dropped: the producer's blocks are all free again.
    assert_eq!(table.usage().held_bytes, 0);
    names.sweep();
}

#[test]
fn drop_oldest_never_blocks_the_producer_and_never_hands_out_stale_data() {
    if let Ok(run) = std::env::var(RUN) {
        if std::env::var(ROLE).as_deref() == Ok("producer-do") {
            produce(&run, Policy::DropOldest, 1);
        }
        return;
    }
    let run = format!("t{}do", std::process::id());
    let (names, writer, reader, table) = setup(&run, Policy::DropOldest, 1);
    let mut child =
        spawn_peer("drop_oldest_never_blocks_the_producer_and_never_hands_out_stale_data", "producer-do", &run);
    let cache = BlockCache::open(&names, 0, 0, 0).expect("cache");
    let mut input = Input::new(reader.clone(), 0, cache, Some(writer));
    // A slow reader: the producer finishes without ever waiting for it.
    let mut last = None;
    let status = loop {
        if let Some(got) = input.recv() {
            let (block, len) = got.expect("mappable block");
            let n = check(block.bytes(), len);
            assert!(last.is_none_or(|l| n > l), "stale message {n} after {last:?}");
            last = Some(n);
            std::thread::sleep(Duration::from_millis(5));
        }
        if let Some(status) = child.try_wait().expect("producer") {
            break status;
        }
    };
    assert!(status.success());
    // After the producer is done, the queue of one holds exactly the last message.
    let (block, len) = input.recv().expect("the newest message").expect("mappable block");
    assert_eq!(check(block.bytes(), len), MESSAGES - 1);
    drop(block);
    assert!(input.recv().is_none());
    assert_eq!(table.usage().held_bytes, 0, "evicted messages must release their blocks");
    names.sweep();
}

#[test]
fn a_killed_readers_references_are_reclaimed() {
    if let Ok(run) = std::env::var(RUN) {
        if std::env::var(ROLE).as_deref() == Ok("reader-hold") {
            // Take one message, keep the reference, and get killed while holding it.
            let names = RunNames::new(&run);
            let writer = Arc::new(Inbox::open(&names.inbox(0), &[]).expect("inbox"));
            let reader = Arc::new(Inbox::open(&names.inbox(1), &shape(Policy::Backpressure, 4)).expect("inbox"));
            let cache = BlockCache::open(&names, 0, 0, 0).expect("cache");
            let mut input = Input::new(reader.clone(), 0, cache, Some(writer));
            let held = reader.doorbell().wait_until(None, Duration::ZERO, || input.recv());
            println!("holding");
            std::thread::sleep(Duration::from_secs(600));
            drop(held);
        }
        return;
    }
    let run = format!("t{}kill", std::process::id());
    let (names, writer, reader, table) = setup(&run, Policy::Backpressure, 4);
    let pool = OutputPool::open(&names, 0, 0, DEFAULT_CAPACITY).expect("pool");
    let mut publisher =
        Publisher::new(pool, vec![ReaderLink { inbox: reader.clone(), queue: 0, edge: 0 }], Some(writer));
    let lease = publisher.lease(1 << 20).expect("lease");
    publisher.publish(lease, 1 << 20, 0, &AtomicBool::new(false));
    let mut child = spawn_peer("a_killed_readers_references_are_reclaimed", "reader-hold", &run);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !reader.ring(0).is_empty() {
        assert!(Instant::now() < deadline, "reader never took the message");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(table.usage().held_bytes, 1 << 20, "the reader holds the block");
    child.kill().expect("kill reader");
    child.wait().expect("reap reader");
    // What the runtime does when a reader dies: close its queue and clear its holder bit.
    reader.ring(0).close();
    table.release_all(1);
    assert_eq!(table.usage().held_bytes, 0);
    // The producer reuses the reclaimed block instead of allocating a new one.
    let blocks_before = table.usage().blocks;
    let lease = publisher.lease(1 << 20).expect("lease");
    drop(lease);
    assert_eq!(table.usage().blocks, blocks_before);
    names.sweep();
}

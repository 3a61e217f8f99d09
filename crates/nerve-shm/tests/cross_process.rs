//! The data plane across real processes: this test binary re-runs itself as the peer process.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use nerve_shm::channel::{FanOut, Input, ReaderLink, Taken};
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
    peer(test, role, run).spawn().expect("peer process")
}

fn peer(test: &str, role: &str, run: &str) -> Command {
    let mut command = Command::new(std::env::current_exe().expect("test binary"));
    command.args([test, "--exact", "--nocapture"]).env(ROLE, role).env(RUN, run);
    command
}

/// Waits up to 30 s (a bound only a broken build reaches) for `done`.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Producer side, run in the child: sends MESSAGES messages whose bytes derive from their number.
fn produce(run: &str, policy: Policy, capacity: usize) {
    let names = RunNames::new(run);
    let writer = Arc::new(Inbox::open(&names.inbox(0), &[]).expect("writer inbox"));
    let reader = Arc::new(Inbox::open(&names.inbox(1), &shape(policy, capacity)).expect("reader inbox"));
    let pool = OutputPool::open(&names, 0, 0, DEFAULT_CAPACITY).expect("pool");
    let mut publisher = FanOut::new(pool, vec![ReaderLink { inbox: reader, queue: 0, edge: 0 }], Some(writer));
    let stop = AtomicBool::new(false);
    for n in 0..MESSAGES {
        send_numbered(&mut publisher, n, &stop);
    }
}

/// Sends message `n`: its number, then bytes derived from it, in one of seven sizes.
fn send_numbered(publisher: &mut FanOut, n: u64, stop: &AtomicBool) {
    let len = 16 + (n as usize % 7) * 4096;
    let mut lease = publisher.lease(len).expect("lease");
    let bytes = lease.bytes_mut();
    bytes[..8].copy_from_slice(&n.to_le_bytes());
    for (i, b) in bytes[8..len].iter_mut().enumerate() {
        *b = (n as usize + i) as u8;
    }
    publisher.publish(lease, len, n, stop);
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
fn a_producer_waiting_for_room_is_woken_while_its_node_also_waits_for_input() {
    const SENDS: u64 = 200;
    if let Ok(run) = std::env::var(RUN) {
        if std::env::var(ROLE).as_deref() == Ok("producer-two-sleepers") {
            // A producer left asleep would otherwise outlive the failed test.
            std::thread::spawn(|| {
                std::thread::sleep(Duration::from_secs(30));
                std::process::exit(3);
            });
            let names = RunNames::new(&run);
            let writer = Arc::new(Inbox::open(&names.inbox(0), &[]).expect("writer inbox"));
            // The node's event wait, asleep on the same doorbell before the producer first waits
            // for room, with nothing coming: a ring must wake both, not just the first asleep.
            let idle = writer.clone();
            std::thread::spawn(move || idle.doorbell().wait_until(None, Duration::ZERO, || None::<()>));
            while writer.doorbell().sleepers() == 0 {
                std::thread::yield_now();
            }
            let reader = Arc::new(Inbox::open(&names.inbox(1), &shape(Policy::Backpressure, 1)).expect("reader inbox"));
            let pool = OutputPool::open(&names, 0, 0, DEFAULT_CAPACITY).expect("pool");
            let mut publisher = FanOut::new(pool, vec![ReaderLink { inbox: reader, queue: 0, edge: 0 }], Some(writer));
            let stop = AtomicBool::new(false);
            for n in 0..SENDS {
                send_numbered(&mut publisher, n, &stop);
            }
        }
        return;
    }
    let run = format!("t{}two", std::process::id());
    let (names, writer, reader, table) = setup(&run, Policy::Backpressure, 1);
    let mut child = spawn_peer(
        "a_producer_waiting_for_room_is_woken_while_its_node_also_waits_for_input",
        "producer-two-sleepers",
        &run,
    );
    let cache = BlockCache::open(&names, 0, 0, 0).expect("cache");
    let mut input = Input::new(reader.clone(), 0, cache, Some(writer));
    let deadline = Instant::now() + Duration::from_secs(20);
    for expected in 0..SENDS {
        let got = reader.doorbell().wait_until(Some(deadline), Duration::ZERO, || input.recv());
        let (block, len) = got.expect("message before the deadline: the producer was left asleep").expect("block");
        assert_eq!(check(block.bytes(), len), expected);
    }
    assert!(child.wait().expect("producer").success());
    assert_eq!(table.usage().held_bytes, 0);
    names.sweep();
}

#[test]
fn a_held_message_holds_a_back_pressured_producer_back() {
    if let Ok(run) = std::env::var(RUN) {
        if std::env::var(ROLE).as_deref() == Ok("producer-hold") {
            produce(&run, Policy::Backpressure, 1);
        }
        return;
    }
    let run = format!("t{}hold", std::process::id());
    let (names, writer, reader, table) = setup(&run, Policy::Backpressure, 1);
    let mut child = spawn_peer("a_held_message_holds_a_back_pressured_producer_back", "producer-hold", &run);
    let cache = BlockCache::open(&names, 0, 0, 0).expect("cache");
    let mut input = Input::new(reader.clone(), 0, cache, Some(writer.clone()));
    let deadline = Instant::now() + Duration::from_secs(60);
    for expected in 0..MESSAGES {
        let got = reader.doorbell().wait_until(Some(deadline), Duration::ZERO, || input.hold());
        let Taken { block, len, held } = got.expect("message before the deadline").expect("mappable block");
        assert_eq!(check(block.bytes(), len), expected);
        assert!(held.is_some(), "a back-pressured queue keeps the message at its head");
        if expected % 100 == 0 {
            // The producer, asleep on its doorbell for room, has not queued the next message:
            // the held one fills the queue (the stamp of a message is its number). Its earlier
            // sleep ended before it sent the message held here, so this is a sleep for the next.
            wait_for("the producer to wait for room", || writer.doorbell().sleepers() > 0);
            assert_eq!(
                reader.ring(0).peek_stamp(&nerve_shm::ring::Seen::default()),
                Some(expected),
                "the producer got ahead of a held message"
            );
            assert!(input.hold().is_none());
        }
        drop(held);
    }
    assert!(child.wait().expect("producer").success());
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
    // A slow reader (5 ms a message) of a few messages, which never sees an older message after
    // a newer one; then it reads nothing more: the producer finishes without waiting for it.
    let mut last = None;
    let mut taken = 0;
    let mut status = None;
    while taken < 10 && status.is_none() {
        if let Some(got) = input.recv() {
            let (block, len) = got.expect("mappable block");
            let n = check(block.bytes(), len);
            assert!(last.is_none_or(|l| n > l), "stale message {n} after {last:?}");
            last = Some(n);
            taken += 1;
            std::thread::sleep(Duration::from_millis(5));
        }
        status = child.try_wait().expect("producer");
    }
    wait_for("the producer to finish while nobody reads", || {
        status = status.or_else(|| child.try_wait().expect("producer"));
        status.is_some()
    });
    assert!(status.is_some_and(|s| s.success()));
    // The newest message is never dropped: the reader ends with it, taken in the loop or
    // still waiting in the queue of one.
    if let Some(got) = input.recv() {
        let (block, len) = got.expect("mappable block");
        last = Some(check(block.bytes(), len));
    }
    assert_eq!(last, Some(MESSAGES - 1));
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
    let mut publisher = FanOut::new(pool, vec![ReaderLink { inbox: reader.clone(), queue: 0, edge: 0 }], Some(writer));
    let lease = publisher.lease(1 << 20).expect("lease");
    publisher.publish(lease, 1 << 20, 0, &AtomicBool::new(false));
    let mut child = peer("a_killed_readers_references_are_reclaimed", "reader-hold", &run)
        .stdout(Stdio::piped())
        .spawn()
        .expect("reader process");
    let out = BufReader::new(child.stdout.take().expect("stdout"));
    assert!(out.lines().map_while(Result::ok).any(|l| l == "holding"), "the reader never took the message");
    assert!(reader.ring(0).is_empty(), "the reader took the message");
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

#[test]
fn a_restarted_producer_takes_over_its_pool_without_touching_held_blocks() {
    if let Ok(run) = std::env::var(RUN) {
        if std::env::var(ROLE).as_deref() == Ok("producer-crash") {
            // Blocks in `publish` once the reader's queue of 4 is full, and is killed there.
            produce(&run, Policy::Backpressure, 4);
        }
        return;
    }
    let run = format!("t{}restart", std::process::id());
    let (names, writer, reader, table) = setup(&run, Policy::Backpressure, 4);
    let mut child =
        spawn_peer("a_restarted_producer_takes_over_its_pool_without_touching_held_blocks", "producer-crash", &run);
    let cache = BlockCache::open(&names, 0, 0, 0).expect("cache");
    let mut input = Input::new(reader.clone(), 0, cache, Some(writer.clone()));
    let deadline = Instant::now() + Duration::from_secs(30);
    let held = reader.doorbell().wait_until(Some(deadline), Duration::ZERO, || input.recv());
    let (held, held_len) = held.expect("a first message").expect("mappable block");
    // Killed while asleep in `publish`, waiting for room: with the queue full, or with 3 queued
    // if it filled the queue before the first message was taken (a producer that found the
    // queue full waits for half of it).
    wait_for("the producer to wait for room", || writer.doorbell().sleepers() > 0);
    child.kill().expect("kill producer");
    child.wait().expect("reap producer");

    // What the dead producer queued is still whole; the reader keeps one of those too.
    let mut queued = Vec::new();
    let mut kept = None;
    while let Some(got) = input.recv() {
        let (block, len) = got.expect("mappable block");
        queued.push(check(block.bytes(), len));
        kept.get_or_insert((block, len));
    }
    assert!(queued == [1, 2, 3] || queued == [1, 2, 3, 4], "queued before the crash: {queued:?}");

    // The node is restarted: a new producer opens the same pool and sends sizes that fit in
    // the held blocks, which must not be written into.
    let pool = OutputPool::open(&names, 0, 0, DEFAULT_CAPACITY).expect("pool of the restarted producer");
    let mut publisher = FanOut::new(pool, vec![ReaderLink { inbox: reader.clone(), queue: 0, edge: 0 }], Some(writer));
    let stop = AtomicBool::new(false);
    for n in 10_000..10_200u64 {
        send_numbered(&mut publisher, n, &stop);
        let (block, len) = input.recv().expect("the new message").expect("mappable block");
        assert_eq!(check(block.bytes(), len), n);
    }
    assert_eq!(check(held.bytes(), held_len), 0, "a held block was overwritten");
    let (kept, kept_len) = kept.expect("a kept block");
    assert_eq!(check(kept.bytes(), kept_len), 1, "a held block was overwritten");
    drop((held, kept));
    // Nothing of the crash leaks: not the message it was sending, not its loans.
    assert_eq!(table.usage().held_bytes, 0);
    names.sweep();
}

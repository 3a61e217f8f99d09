//! Topics across real processes: this test binary re-runs itself as the publisher process.

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nerve_topic::arrow_array::{Array, ArrayRef, UInt64Array};
use std::sync::atomic::{AtomicUsize, Ordering};

use nerve_topic::{CallbackMode, Publisher, PublisherOptions, Subscriber, SubscriberOptions};

const ROLE: &str = "NERVE_TOPIC_TEST_ROLE";
const TOPIC: &str = "NERVE_TOPIC_TEST_TOPIC";

fn unique(name: &str) -> String {
    format!("test/{name}/{}", std::process::id())
}

fn spawn_publisher(test: &str, topic: &str, role: &str) -> std::process::Child {
    Command::new(std::env::current_exe().expect("test binary"))
        .args([test, "--exact", "--nocapture"])
        .env(ROLE, role)
        .env(TOPIC, topic)
        .spawn()
        .expect("publisher process")
}

/// Message `i`: `1 + i % 50` copies of `i`, so sizes vary and every value is checkable.
fn message(i: u64) -> ArrayRef {
    Arc::new(UInt64Array::from(vec![i; 1 + (i % 50) as usize]))
}

/// Child side: waits for one subscriber, sends messages `from..to`, and exits at once.
fn publish_range(domain: u32, from: u64, to: u64) {
    let topic = std::env::var(TOPIC).expect("topic");
    let p = Publisher::new(&topic, PublisherOptions { domain, ..Default::default() }).expect("publisher");
    let deadline = Instant::now() + Duration::from_secs(10);
    while p.subscriber_count() == 0 {
        assert!(Instant::now() < deadline, "no subscriber linked");
        std::thread::sleep(Duration::from_millis(5));
    }
    for i in from..to {
        p.send(&message(i), &Default::default()).expect("send");
    }
}

fn role() -> Option<String> {
    std::env::var(ROLE).ok()
}

fn expect_range(sub: &Subscriber, from: u64, to: u64) {
    for i in from..to {
        let m = sub.recv(Some(Duration::from_secs(10))).expect("recv").unwrap_or_else(|| panic!("message {i} missing"));
        let a = m.data.as_any().downcast_ref::<UInt64Array>().expect("u64 values").clone();
        assert_eq!(a.len(), 1 + (i % 50) as usize, "message {i} length");
        assert!(a.values().iter().all(|&v| v == i), "message {i} corrupted");
    }
}

fn big_queue() -> SubscriberOptions {
    SubscriberOptions { queue_size: 1000, ..Default::default() }
}

#[test]
fn another_process_delivers_everything_in_order_even_after_it_exits() {
    if role().is_some() {
        return publish_range(0, 0, 500);
    }
    let topic = unique("order");
    let sub = Subscriber::new(&topic, big_queue()).expect("subscriber");
    let status = spawn_publisher("another_process_delivers_everything_in_order_even_after_it_exits", &topic, "pub")
        .wait()
        .expect("publisher ran");
    assert!(status.success());
    // The publisher is gone; what it sent is still readable in place.
    expect_range(&sub, 0, 500);
    assert_eq!(sub.try_recv().expect("try_recv").map(|m| m.metadata), None);
    assert_eq!(sub.dropped(), 0);
}

#[test]
fn a_restarted_publisher_is_picked_up_again() {
    match role().as_deref() {
        Some("first") => return publish_range(0, 0, 100),
        Some(_) => return publish_range(0, 100, 200),
        None => {}
    }
    let test = "a_restarted_publisher_is_picked_up_again";
    let topic = unique("restart");
    let sub = Subscriber::new(&topic, big_queue()).expect("subscriber");
    assert!(spawn_publisher(test, &topic, "first").wait().expect("first run").success());
    expect_range(&sub, 0, 100);
    assert!(spawn_publisher(test, &topic, "second").wait().expect("second run").success());
    expect_range(&sub, 100, 200);
}

#[test]
fn domains_never_see_each_other() {
    if role().is_some() {
        return publish_range(7, 0, 10);
    }
    let topic = unique("domains");
    let other = Subscriber::new(&topic, SubscriberOptions { domain: 8, ..big_queue() }).expect("domain 8");
    let same = Subscriber::new(&topic, SubscriberOptions { domain: 7, ..big_queue() }).expect("domain 7");
    assert!(spawn_publisher("domains_never_see_each_other", &topic, "pub").wait().expect("ran").success());
    expect_range(&same, 0, 10);
    // The publisher is gone: anything it sent to this host is queued by now.
    assert!(other.try_recv().expect("try_recv").is_none());
}

#[test]
fn a_subscriber_in_the_same_process_gets_the_very_array() {
    let topic = unique("local");
    let sub = Subscriber::new(&topic, SubscriberOptions::default()).expect("subscriber");
    let p = Publisher::new(&topic, PublisherOptions::default()).expect("publisher");
    assert_eq!(sub.publisher_count(), 1);
    let sent = message(3);
    p.send(&sent, &Default::default()).expect("send");
    let got = sub.recv(Some(Duration::from_secs(1))).expect("recv").expect("a message");
    assert!(got.object.is_none(), "expected an array");
    assert!(Arc::ptr_eq(&got.data, &sent), "in-process delivery must pass the array itself");
}

#[test]
fn keep_latest_holds_only_the_newest() {
    let topic = unique("latest");
    let sub = Subscriber::new(&topic, SubscriberOptions { keep_latest: true, ..Default::default() }).expect("sub");
    let p = Publisher::new(&topic, PublisherOptions::default()).expect("publisher");
    for i in 0..20 {
        p.send(&message(i), &Default::default()).expect("send");
    }
    expect_range(&sub, 19, 20);
    assert_eq!(sub.try_recv().expect("try_recv").map(|m| m.metadata), None);
    assert_eq!(sub.dropped(), 19);
}

#[test]
fn a_waker_ends_a_wait_that_has_no_timeout() {
    let topic = unique("waker");
    let sub = Subscriber::new(&topic, SubscriberOptions::default()).expect("subscriber");
    let waker = sub.waker();
    let (tx, rx) = std::sync::mpsc::channel();
    // Not a scoped thread: if a wake were lost, the test fails below instead of hanging.
    std::thread::spawn(move || {
        for _ in 0..4 {
            let got = sub.recv(None).expect("recv").map(|m| m.metadata.timestamp);
            tx.send(got).expect("the test waits");
        }
    });
    let next = || rx.recv_timeout(Duration::from_secs(10)).expect("recv(None) returned");
    let blocked = || rx.recv_timeout(Duration::from_millis(200)).is_err();
    assert!(blocked(), "recv(None) returned with nothing sent");
    waker.wake();
    assert_eq!(next(), None);
    // A message queued before the wake still comes first; the wake ends the wait after it.
    let p = Publisher::new(&topic, PublisherOptions::default()).expect("publisher");
    p.send(&message(1), &Default::default()).expect("send");
    waker.wake();
    assert!(next().is_some());
    assert_eq!(next(), None);
    // One wake ends one wait: the next sleeps until woken again.
    assert!(blocked(), "a wake ended two waits");
    waker.wake();
    assert_eq!(next(), None);
}

#[test]
fn bad_topic_names_are_refused_with_the_reason() {
    let err = Publisher::new("a//b", PublisherOptions::default()).err().expect("refused");
    assert!(err.to_string().contains("a//b"), "{err}");
}

#[test]
fn serial_callbacks_run_one_at_a_time_in_order() {
    let topic = unique("serial");
    let sub = Subscriber::new(&topic, big_queue()).expect("subscriber");
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (running, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (s, r, m) = (seen.clone(), running.clone(), most.clone());
    let callbacks = sub
        .on_message(CallbackMode::Serial, move |msg| {
            let now = r.fetch_add(1, Ordering::SeqCst) + 1;
            m.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(2));
            s.lock().expect("lock").push(msg.metadata.timestamp);
            r.fetch_sub(1, Ordering::SeqCst);
        })
        .expect("callbacks");
    let p = Publisher::new(&topic, PublisherOptions::default()).expect("publisher");
    for i in 0..20 {
        p.send(&message(i), &Default::default()).expect("send");
    }
    wait_until(|| seen.lock().expect("lock").len() == 20);
    drop(callbacks);
    let stamps = seen.lock().expect("lock").clone();
    assert!(stamps.windows(2).all(|w| w[0] < w[1]), "out of order");
    assert_eq!(most.load(Ordering::SeqCst), 1);
}

#[test]
fn concurrent_callbacks_of_one_subscriber_overlap() {
    let topic = unique("concurrent");
    let sub = Subscriber::new(&topic, big_queue()).expect("subscriber");
    // Every call waits at a gate until all four are inside: calls that ran one after the other
    // would never all be in at once.
    let gate = Arc::new(Gate::default());
    let g = gate.clone();
    let callbacks =
        sub.on_message(CallbackMode::Concurrent { workers: 4 }, move |_| g.arrive_and_wait()).expect("callbacks");
    let p = Publisher::new(&topic, PublisherOptions::default()).expect("publisher");
    for i in 0..4 {
        p.send(&message(i), &Default::default()).expect("send");
    }
    let inside = gate.wait_for(4);
    gate.open();
    assert_eq!(inside, 4, "only {inside} of 4 calls were running at once");
    drop(callbacks);
    let zero = Subscriber::new(&topic, big_queue()).expect("subscriber");
    assert!(zero.on_message(CallbackMode::Concurrent { workers: 0 }, |_| ()).is_err());
}

/// Callbacks that arrive and stay until the test opens the gate.
#[derive(Default)]
struct Gate {
    state: std::sync::Mutex<(usize, bool)>,
    changed: std::sync::Condvar,
}

impl Gate {
    /// Counts this call in and waits until the gate opens.
    fn arrive_and_wait(&self) {
        let mut state = self.state.lock().expect("lock");
        state.0 += 1;
        self.changed.notify_all();
        drop(self.changed.wait_while(state, |s| !s.1).expect("lock"));
    }

    /// Waits until `n` calls are inside (20 s at most, a bound only a broken build reaches);
    /// how many are.
    fn wait_for(&self, n: usize) -> usize {
        let state = self.state.lock().expect("lock");
        let (state, _) = self.changed.wait_timeout_while(state, Duration::from_secs(20), |s| s.0 < n).expect("lock");
        state.0
    }

    fn open(&self) {
        self.state.lock().expect("lock").1 = true;
        self.changed.notify_all();
    }
}

fn wait_until(done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "timed out");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Child side of the latched tests: subscribes, expects exactly the values named in
/// `NERVE_TOPIC_TEST_EXPECT` (comma-separated, in order), one message each, and nothing more
/// until the last.
fn expect_exactly() {
    let topic = std::env::var(TOPIC).expect("topic");
    let expected: Vec<u64> = std::env::var("NERVE_TOPIC_TEST_EXPECT")
        .expect("expected")
        .split(',')
        .map(|v| v.parse().expect("value"))
        .collect();
    let sub = Subscriber::new(&topic, SubscriberOptions::default()).expect("subscriber");
    for want in expected {
        let m = sub.recv(Some(Duration::from_secs(60))).expect("recv").unwrap_or_else(|| panic!("{want} missing"));
        let got = m.data.as_any().downcast_ref::<UInt64Array>().expect("u64 values").value(0);
        assert_eq!(got, want, "messages out of order, repeated or missing");
    }
}

fn spawn_expecting(test: &str, topic: &str, expect: &str) -> std::process::Child {
    Command::new(std::env::current_exe().expect("test binary"))
        .args([test, "--exact", "--nocapture"])
        .env(ROLE, "sub")
        .env(TOPIC, topic)
        .env("NERVE_TOPIC_TEST_EXPECT", expect)
        .spawn()
        .expect("subscriber process")
}

#[test]
fn a_latched_publisher_hands_its_last_message_to_each_late_subscriber_process_only() {
    const TEST: &str = "a_latched_publisher_hands_its_last_message_to_each_late_subscriber_process_only";
    if role().is_some() {
        return expect_exactly();
    }
    let topic = unique("latched");
    let p = Publisher::new(&topic, PublisherOptions { latched: true, ..Default::default() }).expect("publisher");
    let hung = Duration::from_secs(60);
    // Sent before anyone subscribes: only the last one is kept.
    p.send(&message(1), &Default::default()).expect("send");
    p.send(&message(2), &Default::default()).expect("send");
    // The first subscriber gets 2 on joining; the second gets 3, which the first must not see
    // again; both then get 4.
    let mut first = spawn_expecting(TEST, &topic, "2,3,4");
    assert!(p.wait_for_subscribers(1, hung), "the first subscriber never linked");
    p.send(&message(3), &Default::default()).expect("send");
    let mut second = spawn_expecting(TEST, &topic, "3,4");
    assert!(p.wait_for_subscribers(2, hung), "the second subscriber never linked");
    p.send(&message(4), &Default::default()).expect("send");
    assert!(first.wait().expect("first ran").success(), "the first subscriber saw something else");
    assert!(second.wait().expect("second ran").success(), "the second subscriber saw something else");
}

#[test]
fn a_latched_publisher_hands_its_last_message_to_a_late_subscriber_of_its_process_only() {
    let topic = unique("latched-here");
    let p = Publisher::new(
        &topic,
        PublisherOptions { latched: true, scope: nerve_topic::Scope::Process, ..Default::default() },
    )
    .expect("publisher");
    let value = |sub: &Subscriber| {
        sub.try_recv()
            .expect("try_recv")
            .map(|m| m.data.as_any().downcast_ref::<UInt64Array>().expect("u64 values").value(0))
    };
    let options = || SubscriberOptions { scope: nerve_topic::Scope::Process, ..Default::default() };
    p.send(&message(1), &Default::default()).expect("send");
    p.send(&message(2), &Default::default()).expect("send");
    let first = Subscriber::new(&topic, options()).expect("subscriber");
    assert_eq!(value(&first), Some(2), "the last message, on joining");
    assert_eq!(value(&first), None, "only the last message");
    p.send(&message(3), &Default::default()).expect("send");
    let second = Subscriber::new(&topic, options()).expect("subscriber");
    assert_eq!(value(&second), Some(3));
    assert_eq!(value(&first), Some(3));
    assert_eq!(value(&first), None, "a subscriber joining later sends nothing again to the others");
}

#[test]
fn a_publisher_that_is_not_latched_keeps_nothing_for_late_subscribers() {
    let topic = unique("unlatched");
    let p = Publisher::new(&topic, PublisherOptions::default()).expect("publisher");
    p.send(&message(1), &Default::default()).expect("send");
    let sub = Subscriber::new(&topic, SubscriberOptions::default()).expect("subscriber");
    assert_eq!(sub.try_recv().expect("try_recv").map(|m| m.metadata), None);
}

#[test]
fn waiting_for_subscribers_ends_when_one_links_and_it_gets_the_next_message() {
    const TEST: &str = "waiting_for_subscribers_ends_when_one_links_and_it_gets_the_next_message";
    if role().is_some() {
        return expect_exactly();
    }
    let topic = unique("wait-subs");
    let p = Publisher::new(&topic, PublisherOptions::default()).expect("publisher");
    assert!(!p.wait_for_subscribers(1, Duration::from_millis(50)), "nobody subscribes yet");
    assert!(p.wait_for_subscribers(0, Duration::ZERO), "zero subscribers are always reached");
    let mut child = spawn_expecting(TEST, &topic, "7");
    assert!(p.wait_for_subscribers(1, Duration::from_secs(60)), "the subscriber never linked");
    // The very first message sent once the wait returns reaches the subscriber.
    p.send(&message(7), &Default::default()).expect("send");
    assert!(child.wait().expect("subscriber ran").success(), "the subscriber missed the first message");
}

//! One endpoint model: a subscriber whose queues are in its owner's inbox is woken by the
//! owner's doorbell, with no thread of its own; a lent sample that cannot be sent comes back.
//! The publisher runs in another process: this test binary re-runs itself.

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nerve_message::channel_table::TOPIC_FEEDS;
use nerve_shm::doorbell::DEFAULT_SPIN;
use nerve_shm::inbox::{Inbox, QueueShape};
use nerve_shm::ring::Policy;
use nerve_topic::arrow_array::{Array, ArrayRef, UInt8Array, UInt64Array};
use nerve_topic::{
    HAND_OVER_PAUSE, Publisher, PublisherOptions, SendFailure, Subscriber, SubscriberOptions, TopicError,
};

const ROLE: &str = "NERVE_ENDPOINT_TEST_ROLE";
const TOPIC: &str = "NERVE_ENDPOINT_TEST_TOPIC";
const MESSAGES: u64 = 200;
/// How long anything here may take before the test is failed as hung (a broken build only).
const HUNG: Duration = Duration::from_secs(20);

fn unique(name: &str) -> String {
    format!("test/{name}/{}", std::process::id())
}

fn message(i: u64) -> ArrayRef {
    Arc::new(UInt64Array::from(vec![i; 1 + (i % 50) as usize]))
}

/// The other process: waits for a subscriber to link, sends every message, and exits.
#[test]
fn publisher_process() {
    let Ok(topic) = std::env::var(TOPIC) else { return };
    assert_eq!(std::env::var(ROLE).as_deref(), Ok("publisher"));
    let p = Publisher::new(&topic, PublisherOptions::default()).expect("publisher");
    assert!(p.arrivals().wait_past(0, HUNG) > 0, "no subscriber linked");
    for i in 0..MESSAGES {
        p.send(&message(i), &Default::default()).expect("send");
    }
}

#[test]
fn a_subscriber_in_its_owners_inbox_is_woken_by_the_owners_doorbell() {
    if std::env::var(TOPIC).is_ok() {
        return;
    }
    let topic = unique("in-inbox");
    let options = SubscriberOptions { queue_size: MESSAGES as usize, ..Default::default() };
    // The owner's inbox: a queue of its own first, then the subscriber's, as a node's has.
    let mut shapes = vec![QueueShape { capacity: 4, policy: Policy::Backpressure }];
    shapes.extend(vec![Subscriber::queue_shape(&options).expect("shape"); TOPIC_FEEDS]);
    let inbox = Arc::new(Inbox::anonymous("test-owner", &shapes).expect("inbox"));
    let sub = Subscriber::in_inbox(&topic, options, inbox.clone(), 1).expect("subscriber");
    let mut publisher = Command::new(std::env::current_exe().expect("test binary"))
        .args(["publisher_process", "--exact", "--nocapture"])
        .env(ROLE, "publisher")
        .env(TOPIC, &topic)
        .spawn()
        .expect("publisher process");
    let deadline = Instant::now() + HUNG;
    let mut next = 0;
    while next < MESSAGES {
        // Never `recv`: only the owner's doorbell and the subscriber's lock-free look.
        let rang = inbox.doorbell().wait_until(Some(deadline), DEFAULT_SPIN, || sub.has_pending().then_some(()));
        assert!(rang.is_some(), "message {next}: the owner's doorbell never rang");
        match sub.try_recv().expect("try_recv") {
            Some(m) => {
                let values = m.data.as_any().downcast_ref::<UInt64Array>().expect("u64 values");
                assert_eq!(values.len(), 1 + (next % 50) as usize, "message {next} length");
                assert!(values.values().iter().all(|&v| v == next), "message {next} corrupted");
                assert_eq!(&*m.id, topic.as_str());
                next += 1;
            }
            None if sub.handing_over() => std::thread::sleep(HAND_OVER_PAUSE),
            None => {}
        }
    }
    assert!(publisher.wait().expect("publisher exit").success());
    assert_eq!(sub.dropped(), 0);
    // The owner's own queue was never touched.
    assert!(inbox.ring(0).is_empty());
}

#[test]
fn an_inbox_without_the_queues_is_refused() {
    let options = SubscriberOptions::default();
    let shape = Subscriber::queue_shape(&options).expect("shape");
    let short = Arc::new(Inbox::anonymous("test-short", &vec![shape; TOPIC_FEEDS - 1]).expect("inbox"));
    let refused = Subscriber::in_inbox("test/short", options.clone(), short, 0).err().expect("refused");
    assert!(matches!(refused, TopicError::InboxQueues { .. }), "{refused}");
    let other = QueueShape { capacity: shape.capacity + 1, policy: Policy::DropOldest };
    let wrong = Arc::new(Inbox::anonymous("test-wrong", &vec![other; TOPIC_FEEDS]).expect("inbox"));
    let refused = Subscriber::in_inbox("test/wrong", options, wrong, 0).err().expect("refused");
    assert!(refused.to_string().contains("test/wrong"), "{refused}");
}

#[test]
fn a_sample_sent_by_the_wrong_publisher_comes_back_filled() {
    let (a, b) = (unique("lender"), unique("other"));
    let sub = Subscriber::new(&a, SubscriberOptions::default()).expect("subscriber");
    let lender = Publisher::new(&a, PublisherOptions::default()).expect("publisher");
    let other = Publisher::new(&b, PublisherOptions::default()).expect("publisher");
    let mut sample = lender.loan(4, &Default::default()).expect("loan");
    sample.data_mut().copy_from_slice(&[1, 2, 3, 4]);
    let err = other.send_sample(sample).expect_err("refused");
    assert_eq!(err.reason, SendFailure::LentElsewhere { lent_by: a.clone() });
    assert!(err.to_string().contains(&b) && err.to_string().contains(&a), "{err}");
    let mut sample = err.into_inner();
    assert_eq!(sample.data_mut(), &[1, 2, 3, 4], "the bytes written came back");
    lender.send_sample(sample).expect("sent where it was lent");
    let got = sub.recv(Some(HUNG)).expect("recv").expect("a message");
    let bytes = got.data.as_any().downcast_ref::<UInt8Array>().expect("bytes");
    assert_eq!(bytes.values().as_ref(), &[1, 2, 3, 4]);
}

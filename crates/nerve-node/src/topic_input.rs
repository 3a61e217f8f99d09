//! Inputs that read a named topic (`inputs: {pose: topic/robot/pose}`).
//!
//! A topic subscriber sleeps on a doorbell of its own, and a node sleeps on one doorbell for
//! all its inputs; so a thread per topic input waits on the topic and hands each message over,
//! ringing the node's doorbell. That costs one extra wake-up per message, against none for a
//! dataflow edge.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use nerve_shm::inbox::Inbox;
use nerve_topic::{Message, RecvWaker, Subscriber, SubscriberOptions};

use crate::error::NodeError;

/// Messages of one topic input, waiting for the node.
pub(crate) struct TopicFeed {
    queue: Mutex<VecDeque<Result<Message, String>>>,
    pending: AtomicUsize,
    capacity: usize,
    open: AtomicBool,
    /// Messages this feed's own queue let go (the node fell behind).
    overflowed: AtomicU64,
    /// The subscriber's own drop count, as last seen by the hand-over thread.
    subscriber_dropped: AtomicU64,
    /// Ends the hand-over thread's wait when the feed closes.
    waker: RecvWaker,
}

impl TopicFeed {
    /// Subscribes to `topic` and starts handing its messages over; `bell` is the node's inbox.
    pub(crate) fn start(topic: &str, queue_size: usize, bell: Arc<Inbox>) -> Result<Arc<Self>, NodeError> {
        let sub = Subscriber::new(topic, SubscriberOptions { queue_size, ..Default::default() })?;
        let feed = Arc::new(Self {
            queue: Mutex::new(VecDeque::new()),
            pending: AtomicUsize::new(0),
            capacity: queue_size.max(1),
            open: AtomicBool::new(true),
            overflowed: AtomicU64::new(0),
            subscriber_dropped: AtomicU64::new(0),
            waker: sub.waker(),
        });
        let handing = feed.clone();
        std::thread::Builder::new()
            .name(format!("nerve-topic-in:{topic}"))
            .spawn(move || handing.hand_over(&sub, &bell))
            .map_err(|e| NodeError::Protocol(format!("cannot start the reader of topic `{topic}`: {e}")))?;
        Ok(feed)
    }

    fn hand_over(&self, sub: &Subscriber, bell: &Inbox) {
        while self.open.load(Ordering::Acquire) {
            let item = sub.recv(None);
            self.subscriber_dropped.store(sub.dropped(), Ordering::Release);
            let item = match item {
                Ok(Some(m)) => Ok(m),
                Ok(None) => continue,
                Err(e) => Err(e.to_string()),
            };
            let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
            queue.push_back(item);
            // Bounded like the input's queue: a busy node loses the oldest, never the newest.
            if queue.len() > self.capacity {
                queue.pop_front();
                self.overflowed.fetch_add(1, Ordering::AcqRel);
            }
            self.pending.store(queue.len(), Ordering::Release);
            drop(queue);
            bell.doorbell().ring();
        }
    }

    /// Send stamp of the oldest waiting message (errors first).
    pub(crate) fn peek_stamp(&self) -> Option<u64> {
        if self.pending.load(Ordering::Acquire) == 0 {
            return None;
        }
        let queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        queue.front().map(|m| m.as_ref().map_or(0, |m| m.metadata.timestamp))
    }

    /// Messages lost so far: by the subscriber's queues (as of the last message the hand-over
    /// thread took) and by this feed's.
    pub(crate) fn dropped(&self) -> u64 {
        self.overflowed.load(Ordering::Acquire) + self.subscriber_dropped.load(Ordering::Acquire)
    }

    /// Whether a message waits.
    pub(crate) fn has_pending(&self) -> bool {
        self.pending.load(Ordering::Acquire) > 0
    }

    /// The oldest waiting message.
    pub(crate) fn take(&self) -> Option<Result<Message, String>> {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        let m = queue.pop_front();
        self.pending.store(queue.len(), Ordering::Release);
        m
    }

    /// Stops handing over (the thread wakes and ends, dropping the subscription).
    pub(crate) fn close(&self) {
        self.open.store(false, Ordering::Release);
        self.waker.wake();
    }
}

//! Messages handed to a callback on threads of their own (HyperGraph ROS's parallel
//! callbacks), instead of `recv` calls.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use nerve_shm::sync::lock;

use crate::error::TopicError;
use crate::message::Message;
use crate::subscriber::{RecvWaker, Subscriber};

/// How a subscriber's callback is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallbackMode {
    /// One message at a time, in order.
    Serial,
    /// Up to `workers` messages of this subscriber at once, on a pool of that many threads.
    Concurrent {
        /// Threads, hence messages in flight.
        workers: usize,
    },
}

type Callback = dyn Fn(Message) + Send + Sync;

/// Callbacks running for a subscriber; dropping it stops them (calls in progress finish).
pub struct Callbacks {
    stop: Arc<AtomicBool>,
    waker: RecvWaker,
    threads: Vec<JoinHandle<()>>,
    subscriber: Arc<Subscriber>,
}

impl Callbacks {
    /// The subscriber whose messages the callbacks get (for its counts: publishers, drops).
    #[must_use]
    pub fn subscriber(&self) -> &Subscriber {
        &self.subscriber
    }
}

impl Subscriber {
    /// Hands every message to `callback` on threads of its own, until the returned handle is
    /// dropped. A panicking callback is reported (tracing) and the next message goes on. While
    /// every worker is busy, messages wait in the subscriber's queue, where the oldest are
    /// dropped: a slow callback never slows the publisher.
    ///
    /// # Errors
    /// When a thread cannot be started, or `workers` is zero.
    pub fn on_message(
        self,
        mode: CallbackMode,
        callback: impl Fn(Message) + Send + Sync + 'static,
    ) -> Result<Callbacks, TopicError> {
        let callback: Arc<Callback> = Arc::new(callback);
        let stop = Arc::new(AtomicBool::new(false));
        let topic = self.topic().to_owned();
        let mut threads = Vec::new();
        let sink = match mode {
            CallbackMode::Serial => Sink::Here(callback),
            CallbackMode::Concurrent { workers: 0 } => return Err(TopicError::BadWorkers(0)),
            CallbackMode::Concurrent { workers } => {
                let (tx, rx) = sync_channel::<Message>(0);
                let rx = Arc::new(Mutex::new(rx));
                for i in 0..workers {
                    let (rx, callback) = (rx.clone(), callback.clone());
                    let worker = std::thread::Builder::new()
                        .name(format!("nerve-callback-{i}:{topic}"))
                        .spawn(move || work(&rx, &*callback))
                        .map_err(TopicError::Thread)?;
                    threads.push(worker);
                }
                Sink::Pool(tx)
            }
        };
        let running = stop.clone();
        let waker = self.waker();
        let subscriber = Arc::new(self);
        let dispatching = subscriber.clone();
        let dispatcher = std::thread::Builder::new()
            .name(format!("nerve-dispatch:{topic}"))
            .spawn(move || dispatch(&dispatching, &sink, &running))
            .map_err(TopicError::Thread)?;
        threads.insert(0, dispatcher);
        Ok(Callbacks { stop, waker, threads, subscriber })
    }
}

enum Sink {
    Here(Arc<Callback>),
    Pool(SyncSender<Message>),
}

fn dispatch(sub: &Subscriber, sink: &Sink, stop: &AtomicBool) {
    while !stop.load(Ordering::Acquire) {
        let m = match sub.recv(None) {
            Ok(Some(m)) => m,
            Ok(None) => continue,
            Err(e) => {
                tracing::warn!(topic = sub.topic(), error = %e, "message skipped");
                continue;
            }
        };
        match sink {
            Sink::Here(callback) => call(&**callback, m),
            // A rendezvous channel: the hand-over waits for a free worker.
            Sink::Pool(tx) => {
                if tx.send(m).is_err() {
                    return;
                }
            }
        }
    }
}

fn work(rx: &Mutex<Receiver<Message>>, callback: &Callback) {
    loop {
        let next = lock(rx).recv();
        match next {
            Ok(m) => call(callback, m),
            Err(_) => return, // the dispatcher stopped
        }
    }
}

fn call(callback: &Callback, m: Message) {
    let topic = m.id.clone();
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| callback(m))).is_err() {
        tracing::error!(%topic, "a topic callback panicked; going on with the next message");
    }
}

impl Drop for Callbacks {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // The dispatcher wakes, sees the stop, ends and drops the channel, ending the workers.
        self.waker.wake();
        let me = std::thread::current().id();
        for t in self.threads.drain(..) {
            // A callback may drop its own subscription: its thread ends once the call returns.
            if t.thread().id() != me {
                let _ = t.join();
            }
        }
    }
}

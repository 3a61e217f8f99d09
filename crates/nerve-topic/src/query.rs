//! Zenoh queries that carry nerve messages: the parts services and actions share.
//!
//! A server declares queryables and hands every query to its own threads (never working on
//! Zenoh's); it answers with a nerve message, or refuses with a reason that travels as a
//! marked error reply. An asker reads the first reply and tells a refusal from nobody
//! answering, from a server that went away, and from a timeout. Servers announce themselves
//! with liveliness tokens, which askers count and `list` reads.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use arrow_array::ArrayRef;
use nerve_shm::codec::{Decoder, Metadata, aligned_copy};
use zenoh::Wait;
use zenoh::bytes::ZBytes;
use zenoh::query::{ConsolidationMode, Query, QueryTarget, Reply, ReplyError};
use zenoh::sample::{Sample, SampleKind};

use crate::error::TopicError;
use crate::network::{self, End, Network};
use nerve_shm::sync::{lock, wait_timeout};

/// How a server's refusal travels in an error reply, so the asker tells it from Zenoh's own
/// errors (the text predates actions; changing it would break services between versions).
const REFUSAL: &str = "nerve-service-error:";

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A number for a server's liveliness token, unique in this process.
pub(crate) fn server_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// A nerve message from the bytes of a query or reply.
///
/// # Errors
/// The decoder's complaint, for the caller to put in context.
pub(crate) fn decode(payload: &ZBytes) -> Result<(Metadata, ArrayRef), String> {
    Decoder::default().decode_buffer(&aligned_copy(&payload.to_bytes())).map_err(|e| e.to_string())
}

/// Answers `query` with `payload`, or refuses it with the reason in `answer`'s error.
pub(crate) fn answer(query: &Query, answer: Result<ZBytes, String>, what: &str) {
    let sent = match answer {
        Ok(payload) => query.reply(query.key_expr().clone(), payload).wait(),
        Err(reason) => query.reply_err(format!("{REFUSAL}{reason}")).wait(),
    };
    if let Err(e) = sent {
        tracing::debug!(%what, error = %e, "cannot send a reply (the asker may have given up)");
    }
}

/// Why a query got no answer.
#[derive(Debug)]
pub(crate) enum Unanswered {
    /// No server was known when the query left, and none answered.
    NoServer,
    /// A server was known, but none answered: it went away mid-query.
    Gone,
    /// The time allowed passed.
    Timeout,
    /// The server refused, with this reason.
    Refused(String),
    /// Zenoh could not send the query.
    Network(String),
}

/// Sends a query for `key` with `payload` and waits up to `timeout` for the first reply.
///
/// `had_servers` tells [`Unanswered::NoServer`] from [`Unanswered::Gone`] when nothing answers.
pub(crate) fn ask(
    net: &Network,
    key: &str,
    payload: Option<Vec<u8>>,
    target: QueryTarget,
    timeout: Duration,
    had_servers: bool,
) -> Result<Sample, Unanswered> {
    let started = Instant::now();
    let replies = start(net, key, payload, target, timeout)?;
    first_reply(replies.recv().ok(), started, timeout, had_servers)
}

/// Sends a query for `key` whose replies arrive on the returned channel.
pub(crate) fn start(
    net: &Network,
    key: &str,
    payload: Option<Vec<u8>>,
    target: QueryTarget,
    timeout: Duration,
) -> Result<zenoh::handlers::FifoChannelHandler<Reply>, Unanswered> {
    let get = net.session.get(key).target(target).consolidation(ConsolidationMode::None).timeout(timeout);
    let get = match payload {
        Some(payload) => get.payload(payload),
        None => get,
    };
    get.wait().map_err(|e| Unanswered::Network(e.to_string()))
}

/// What the first reply of a query (`None`: the query ended without one) means.
pub(crate) fn first_reply(
    reply: Option<Reply>,
    started: Instant,
    timeout: Duration,
    had_servers: bool,
) -> Result<Sample, Unanswered> {
    let Some(reply) = reply else {
        // No reply and no error: nobody answered, or the one who would have is gone.
        return Err(if started.elapsed() >= timeout {
            Unanswered::Timeout
        } else if had_servers {
            Unanswered::Gone
        } else {
            Unanswered::NoServer
        });
    };
    reply.into_result().map_err(|e| match refusal(&e) {
        Some(reason) => Unanswered::Refused(reason),
        None if started.elapsed() >= timeout => Unanswered::Timeout,
        None => Unanswered::Gone,
    })
}

/// The reason of a server's refusal, or `None` for Zenoh's own errors (timeout, closed link).
fn refusal(e: &ReplyError) -> Option<String> {
    let text = e.payload().try_to_string().ok()?;
    text.strip_prefix(REFUSAL).map(str::to_owned)
}

/// Threads that each take the next item handed to the pool's [`Queue`] and work on it, for as
/// long as the pool lives.
///
/// Closing (or dropping) the pool stops the queue, drops what waits in it, and waits for the
/// work under way, except on a worker's own thread (work may close its own server). So once a
/// server is gone, nothing of it runs: a C handler's user data may be freed, and Python's
/// interpreter may shut down (a thread calling into it then would abort the process).
pub(crate) struct Workers<T> {
    queue: Queue<T>,
    closed: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl<T: Send + 'static> Workers<T> {
    /// Starts `workers` threads named `name` that `work` on what the queue is handed.
    ///
    /// # Errors
    /// Zero workers, or a thread that cannot be started.
    pub(crate) fn start(
        workers: usize,
        name: &str,
        work: impl Fn(T) + Send + Sync + 'static,
    ) -> Result<Self, TopicError> {
        if workers == 0 {
            return Err(TopicError::BadWorkers(0));
        }
        let (tx, rx) = mpsc::channel::<T>();
        let rx = Arc::new(Mutex::new(rx));
        let work = Arc::new(work);
        let closed = Arc::new(AtomicBool::new(false));
        let mut pool =
            Self { queue: Queue(Arc::new(Mutex::new(Some(tx)))), closed: closed.clone(), threads: Vec::new() };
        for _ in 0..workers {
            let (rx, work, closed) = (rx.clone(), work.clone(), closed.clone());
            let thread = std::thread::Builder::new()
                .name(name.to_owned())
                .spawn(move || {
                    // The lock is held only to take the next item, not while working on it.
                    while let Ok(item) = { lock(&rx).recv() } {
                        if closed.load(Ordering::Acquire) {
                            break;
                        }
                        work(item);
                    }
                })
                // The threads already started end as `pool` drops.
                .map_err(TopicError::Thread)?;
            pool.threads.push(thread);
        }
        Ok(pool)
    }

    /// Where work is handed to the pool.
    pub(crate) fn queue(&self) -> Queue<T> {
        self.queue.clone()
    }
}

impl<T> Workers<T> {
    /// Stops the queue and waits for the work under way (see [`Workers`]); later calls do nothing.
    pub(crate) fn close(&mut self) {
        self.closed.store(true, Ordering::Release);
        drop(lock(&self.queue.0).take());
        let me = std::thread::current().id();
        for thread in self.threads.drain(..) {
            if thread.thread().id() == me {
                continue;
            }
            let name = thread.thread().name().map(str::to_owned);
            if thread.join().is_err() {
                tracing::warn!(worker = ?name, "a server's worker thread panicked");
            }
        }
    }
}

impl<T> Drop for Workers<T> {
    fn drop(&mut self) {
        self.close();
    }
}

/// Where a [`Workers`] pool is handed work; it takes nothing once the pool is closed.
pub(crate) struct Queue<T>(Arc<Mutex<Option<mpsc::Sender<T>>>>);

impl<T> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<T> Queue<T> {
    /// Hands `item` to the pool, or drops it when the pool is closed (a dropped query reaches
    /// its asker as a server that went away).
    pub(crate) fn hand(&self, item: T, what: &str) {
        let closed = match lock(&self.0).as_ref() {
            Some(tx) => tx.send(item).is_err(),
            None => true,
        };
        if closed {
            tracing::debug!(%what, "the server is closing: a query is dropped");
        }
    }
}

/// The number of servers of one name, and a wake-up for whoever waits for it to change.
#[derive(Default)]
struct Servers {
    count: Mutex<usize>,
    changed: Condvar,
}

/// The servers of one name, counted from their liveliness tokens.
pub(crate) struct ServerCount {
    servers: Arc<Servers>,
    _watch: zenoh::pubsub::Subscriber<()>,
}

impl ServerCount {
    /// Starts counting the servers of kind `end` of `name` in `domain`.
    pub(crate) fn watch(net: &Network, end: End, domain: u32, name: &str) -> Result<Self, TopicError> {
        let servers = Arc::new(Servers::default());
        let counted = servers.clone();
        let watch = net
            .session
            .liveliness()
            .declare_subscriber(format!("nerve/{}/d{domain}/*/*/{name}", end.chunk()))
            .history(true)
            .callback(move |sample| {
                let mut count = lock(&counted.count);
                match sample.kind() {
                    SampleKind::Put => *count += 1,
                    SampleKind::Delete => *count = count.saturating_sub(1),
                }
                drop(count);
                counted.changed.notify_all();
            })
            .wait()
            .map_err(|e| TopicError::Network(format!("cannot watch the servers of `{name}`: {e}")))?;
        Ok(Self { servers, _watch: watch })
    }

    /// Servers reachable now.
    pub(crate) fn get(&self) -> usize {
        *lock(&self.servers.count)
    }

    /// Waits up to `timeout` until a server is reachable; whether one is. Woken by each server
    /// that appears, it never polls.
    pub(crate) fn wait_for_one(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut count = lock(&self.servers.count);
        while *count == 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            count = wait_timeout(&self.servers.changed, count, left).0;
        }
        true
    }
}

/// Every server of kind `end` reachable now in `domain`: (host, name), sorted.
pub(crate) fn list(end: End, domain: u32) -> Result<Vec<(String, String)>, TopicError> {
    let replies = network::network()?
        .session
        .liveliness()
        .get(format!("nerve/{}/d{domain}/**", end.chunk()))
        .timeout(Duration::from_millis(500))
        .wait()
        .map_err(|e| TopicError::Network(e.to_string()))?;
    let mut found = Vec::new();
    while let Ok(reply) = replies.recv() {
        if let Ok(sample) = reply.result() {
            // nerve/<end>/d<domain>/h<host>/e<pid>x<id>/<name…>
            let key = sample.key_expr().as_str();
            if let (Some(host), Some(name)) = (network::token_host(key), key.splitn(6, '/').nth(5)) {
                found.push((host.to_owned(), name.to_owned()));
            }
        }
    }
    found.sort();
    Ok(found)
}

//! Services: a request answered by one reply, by name, from any process of any host.
//!
//! A [`Server`] answers the requests of a service with a handler run on a pool of worker
//! threads, so slow requests do not hold up others; a [`Client`] calls it and waits for the
//! reply, with a timeout. Requests and replies are messages like a topic's (an Arrow array and
//! metadata), carried by Zenoh queries in this process's session (the transport between hosts
//! of topics), so one service works the same whether its server runs in the same process,
//! another process or another host.
//!
//! Key expressions:
//!
//! ```text
//! nerve/d<domain>/srv/<service>                        requests (a Zenoh queryable per server)
//! nerve/srv/d<domain>/h<host>/e<pid>x<id>/<service>    liveliness token of one server
//! ```
//!
//! A call never hangs: it ends with the reply, the handler's error, [`ServiceError::NoServer`]
//! at once when nobody serves the name, [`ServiceError::ServerGone`] as soon as a server dies
//! mid-call, or [`ServiceError::Timeout`].

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use arrow_array::ArrayRef;
use arrow_data::ArrayData;
use nerve_shm::codec::{Decoder, Metadata, Parameters, aligned_copy, encode};
use zenoh::Wait;
use zenoh::query::{ConsolidationMode, Query, QueryTarget};
use zenoh::sample::SampleKind;

use crate::error::TopicError;
use crate::name;
use crate::network::{self, End, Network};
use crate::runtime::lock;

/// How a handler's error travels in a reply, so the client tells it from Zenoh's own errors.
const HANDLER_ERROR: &str = "nerve-service-error:";

/// What can go wrong calling a service.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// Setting up the client failed (a bad name, no network session).
    #[error(transparent)]
    Setup(#[from] TopicError),
    /// No process serves this service now.
    #[error("no server for service `{service}` (is the process that serves it running, with the same domain?)")]
    NoServer {
        /// Service name.
        service: String,
    },
    /// The server did not answer in time.
    #[error("service `{service}` did not answer within {timeout:?}")]
    Timeout {
        /// Service name.
        service: String,
        /// The time allowed.
        timeout: Duration,
    },
    /// The server went away before answering.
    #[error("the server of service `{service}` went away before answering")]
    ServerGone {
        /// Service name.
        service: String,
    },
    /// The server's handler refused or failed the request.
    #[error("service `{service}` failed the request: {reason}")]
    Failed {
        /// Service name.
        service: String,
        /// What the handler said.
        reason: String,
    },
    /// A request or reply that is not a nerve message, or data nerve cannot carry.
    #[error("service `{service}`: {what}")]
    Malformed {
        /// Service name.
        service: String,
        /// What was wrong.
        what: String,
    },
}

/// A request as a server's handler sees it.
#[derive(Debug, Clone)]
pub struct Request {
    /// Service name.
    pub service: Arc<str>,
    /// The caller's send stamp and parameters.
    pub metadata: Metadata,
    /// The request data.
    pub data: ArrayRef,
}

/// A reply as a client receives it.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The server's send stamp and parameters.
    pub metadata: Metadata,
    /// The reply data.
    pub data: ArrayRef,
}

/// What a handler answers: the reply's data and parameters, or why it refuses.
pub type HandlerResult = Result<(ArrayData, Parameters), String>;

/// Options of a server or client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServiceOptions {
    /// Only servers and clients of the same domain meet.
    pub domain: u32,
    /// Threads running the server's handler; requests beyond them wait their turn.
    pub workers: usize,
}

impl Default for ServiceOptions {
    fn default() -> Self {
        Self { domain: 0, workers: 1 }
    }
}

fn request_key(domain: u32, service: &str) -> String {
    format!("nerve/d{domain}/srv/{service}")
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Serves one service until dropped.
///
/// Dropping it stops new requests from reaching it; its workers finish the requests they hold
/// and end (they are not waited for: a handler may need what the dropping thread holds).
pub struct Server {
    service: Arc<str>,
    _queryable: zenoh::query::Queryable<()>,
    _token: zenoh::liveliness::LivelinessToken,
    _net: Arc<Network>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("service", &self.service).finish_non_exhaustive()
    }
}

impl Server {
    /// Serves `service` with `handler`, run on `options.workers` threads.
    ///
    /// # Errors
    /// A bad name, zero workers, or no network session.
    pub fn new(
        service: &str,
        options: ServiceOptions,
        handler: impl Fn(Request) -> HandlerResult + Send + Sync + 'static,
    ) -> Result<Self, TopicError> {
        let service: Arc<str> = name::canonical(service)?.into();
        if options.workers == 0 {
            return Err(TopicError::BadWorkers(0));
        }
        let net = network::network()?;
        let (tx, rx) = mpsc::channel::<Query>();
        let rx = Arc::new(Mutex::new(rx));
        let handler = Arc::new(handler);
        for _ in 0..options.workers {
            let (rx, handler, service) = (rx.clone(), handler.clone(), service.clone());
            std::thread::Builder::new()
                .name(format!("nerve-srv-{service}"))
                .spawn(move || {
                    // The lock is held only to take the next query, not while answering it.
                    while let Ok(query) = { lock(&rx).recv() } {
                        answer(&query, &service, &*handler);
                    }
                })
                .map_err(TopicError::Thread)?;
        }
        let err = |e: zenoh::Error| TopicError::Network(format!("cannot serve `{service}`: {e}"));
        let tx = Mutex::new(tx);
        let queryable = net
            .session
            .declare_queryable(request_key(options.domain, &service))
            .callback(move |query| {
                let _ = lock(&tx).send(query);
            })
            .wait()
            .map_err(err)?;
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let token = network::announce(&net, End::Server, options.domain, id, &service)?;
        Ok(Self { service, _queryable: queryable, _token: token, _net: net })
    }

    /// The service's name (canonical).
    #[must_use]
    pub fn service(&self) -> &str {
        &self.service
    }
}

fn answer(query: &Query, service: &Arc<str>, handler: &dyn Fn(Request) -> HandlerResult) {
    let outcome = match query.payload() {
        None => Err("the request carries no message".to_owned()),
        Some(payload) => match Decoder::default().decode_buffer(&aligned_copy(&payload.to_bytes())) {
            Err(e) => Err(format!("the request is not a nerve message: {e}")),
            Ok((metadata, data)) => handler(Request { service: service.clone(), metadata, data }),
        },
    };
    let sent = match outcome.and_then(|(data, params)| encode(&data, &params).map_err(|e| e.to_string())) {
        Ok(bytes) => query.reply(query.key_expr().clone(), bytes).wait(),
        Err(reason) => query.reply_err(format!("{HANDLER_ERROR}{reason}")).wait(),
    };
    if let Err(e) = sent {
        tracing::debug!(%service, error = %e, "cannot send a reply (the caller may have given up)");
    }
}

/// Calls one service.
pub struct Client {
    service: Arc<str>,
    key: String,
    /// Servers of the service now, from their liveliness tokens.
    servers: Arc<AtomicUsize>,
    _watch: zenoh::pubsub::Subscriber<()>,
    net: Arc<Network>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("service", &self.service).finish_non_exhaustive()
    }
}

impl Client {
    /// A client of `service`.
    ///
    /// # Errors
    /// A bad name, or no network session.
    pub fn new(service: &str, options: ServiceOptions) -> Result<Self, TopicError> {
        let service: Arc<str> = name::canonical(service)?.into();
        let net = network::network()?;
        let servers = Arc::new(AtomicUsize::new(0));
        let count = servers.clone();
        let watch = net
            .session
            .liveliness()
            .declare_subscriber(format!("nerve/{}/d{}/*/*/{service}", End::Server.chunk(), options.domain))
            .history(true)
            .callback(move |sample| match sample.kind() {
                SampleKind::Put => {
                    count.fetch_add(1, Ordering::AcqRel);
                }
                SampleKind::Delete => {
                    let _ = count.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
                }
            })
            .wait()
            .map_err(|e| TopicError::Network(format!("cannot watch the servers of `{service}`: {e}")))?;
        Ok(Self { key: request_key(options.domain, &service), service, servers, _watch: watch, net })
    }

    /// The service's name (canonical).
    #[must_use]
    pub fn service(&self) -> &str {
        &self.service
    }

    /// Servers of this service reachable now.
    #[must_use]
    pub fn server_count(&self) -> usize {
        self.servers.load(Ordering::Acquire)
    }

    /// Sends `data` with `parameters` and waits up to `timeout` for the reply.
    ///
    /// # Errors
    /// See [`ServiceError`]: never a hang past `timeout`.
    pub fn call(&self, data: &ArrayData, parameters: &Parameters, timeout: Duration) -> Result<Reply, ServiceError> {
        let malformed = |what: String| ServiceError::Malformed { service: self.service.to_string(), what };
        let request = encode(data, parameters).map_err(|e| malformed(format!("cannot send the request: {e}")))?;
        let started = Instant::now();
        let had_servers = self.server_count() > 0;
        let replies = self
            .net
            .session
            .get(&self.key)
            .payload(request)
            .target(QueryTarget::BestMatching)
            .consolidation(ConsolidationMode::None)
            .timeout(timeout)
            .wait()
            .map_err(|e| ServiceError::Setup(TopicError::Network(e.to_string())))?;
        let service = self.service.to_string();
        let Ok(reply) = replies.recv() else {
            // No reply and no error: nobody answered, or the one who would have is gone.
            return Err(if had_servers {
                ServiceError::ServerGone { service }
            } else {
                ServiceError::NoServer { service }
            });
        };
        match reply.result() {
            Ok(sample) => {
                let (metadata, data) = Decoder::default()
                    .decode_buffer(&aligned_copy(&sample.payload().to_bytes()))
                    .map_err(|e| malformed(format!("the reply is not a nerve message: {e}")))?;
                Ok(Reply { metadata, data })
            }
            Err(e) => {
                let text = e.payload().try_to_string().map(|s| s.into_owned()).unwrap_or_default();
                match text.strip_prefix(HANDLER_ERROR) {
                    Some(reason) => Err(ServiceError::Failed { service, reason: reason.to_owned() }),
                    None if started.elapsed() >= timeout => Err(ServiceError::Timeout { service, timeout }),
                    None => Err(ServiceError::ServerGone { service }),
                }
            }
        }
    }
}

/// Every server reachable now in `domain`: (host, service name).
///
/// # Errors
/// When the network cannot be asked.
pub fn list(domain: u32) -> Result<Vec<(String, String)>, TopicError> {
    let replies = network::network()?
        .session
        .liveliness()
        .get(format!("nerve/{}/d{domain}/**", End::Server.chunk()))
        .timeout(Duration::from_millis(500))
        .wait()
        .map_err(|e| TopicError::Network(e.to_string()))?;
    let mut found = Vec::new();
    while let Ok(reply) = replies.recv() {
        if let Ok(sample) = reply.result() {
            // nerve/srv/d<domain>/h<host>/e<pid>x<id>/<service…>
            let key = sample.key_expr().as_str();
            if let (Some(host), Some(service)) = (network::token_host(key), key.splitn(6, '/').nth(5)) {
                found.push((host.to_owned(), service.to_owned()));
            }
        }
    }
    found.sort();
    Ok(found)
}

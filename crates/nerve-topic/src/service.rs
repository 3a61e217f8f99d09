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

use std::sync::Arc;
use std::time::Duration;

use arrow_array::ArrayRef;
use arrow_data::ArrayData;
use nerve_shm::codec::{Metadata, Parameters, encode};
use zenoh::Wait;
use zenoh::query::{Query, QueryTarget};

use crate::error::{Refusal, TopicError};
use crate::network::{self, End, Network};
use crate::query::{self, ServerCount, Unanswered, Workers};
use crate::run_scope::{Resolved, RunScope, resolve};

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
pub type HandlerResult = Result<(ArrayData, Parameters), Refusal>;

/// Options of a server or client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceOptions {
    /// Only servers and clients of the same domain meet.
    pub domain: u32,
    /// Threads running the server's handler; requests beyond them wait their turn.
    pub workers: usize,
    /// Whose service it is: this process's run's by default (see [`crate::run_scope`]).
    pub run: RunScope,
}

impl Default for ServiceOptions {
    fn default() -> Self {
        Self { domain: 0, workers: 1, run: RunScope::Inherit }
    }
}

fn request_key(domain: u32, service: &str) -> String {
    format!("nerve/d{domain}/srv/{service}")
}

/// Serves one service until dropped.
///
/// Dropping it stops new requests from reaching it, drops the requests that wait for a worker
/// (their callers see the server go away), and waits for the handlers under way, unless it is
/// dropped by a handler itself. So do not drop it while holding what a handler waits for.
pub struct Server {
    service: Arc<str>,
    // Fields drop in order: no new query, then no handler.
    _queryable: zenoh::query::Queryable<()>,
    _token: zenoh::liveliness::LivelinessToken,
    _workers: Workers<Query>,
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
        let Resolved { name, key } = resolve(service, &options.run)?;
        let service: Arc<str> = name.into();
        let net = network::network()?;
        let answering = service.clone();
        let workers = Workers::start(options.workers, &format!("nerve-srv-{service}"), move |query: Query| {
            answer(&query, &answering, &handler);
        })?;
        let err = |e: zenoh::Error| TopicError::Network(format!("cannot serve `{service}`: {e}"));
        let (queue, what) = (workers.queue(), service.clone());
        let queryable = net
            .session
            .declare_queryable(request_key(options.domain, &key))
            .callback(move |query| queue.hand(query, &what))
            .wait()
            .map_err(err)?;
        let token = network::announce(&net, End::Server, options.domain, query::server_id(), &key)?;
        Ok(Self { service, _queryable: queryable, _token: token, _workers: workers, _net: net })
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
        Some(payload) => match query::decode(payload) {
            Err(e) => Err(format!("the request is not a nerve message: {e}")),
            Ok((metadata, data)) => {
                handler(Request { service: service.clone(), metadata, data }).map_err(|refusal| refusal.reason)
            }
        },
    };
    let reply = outcome.and_then(|(data, params)| encode(&data, &params).map_err(|e| e.to_string()));
    query::answer(query, reply.map(Into::into), service);
}

/// Calls one service.
pub struct Client {
    service: Arc<str>,
    key: String,
    servers: ServerCount,
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
        let Resolved { name, key } = resolve(service, &options.run)?;
        let net = network::network()?;
        let servers = ServerCount::watch(&net, End::Server, options.domain, &key)?;
        Ok(Self { key: request_key(options.domain, &key), service: name.into(), servers, net })
    }

    /// The service's name (canonical).
    #[must_use]
    pub fn service(&self) -> &str {
        &self.service
    }

    /// Servers of this service reachable now.
    #[must_use]
    pub fn server_count(&self) -> usize {
        self.servers.get()
    }

    /// Waits up to `timeout` until a server of this service is reachable; returns whether one
    /// is (as ROS 2's `wait_for_service`). Woken when a server appears, it never polls. A call
    /// made once this returned `true` reaches a server, unless that server goes away meanwhile
    /// ([`ServiceError::NoServer`] or [`ServiceError::ServerGone`] then).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use nerve_topic::service::{Client, ServiceOptions};
    ///
    /// let client = Client::new("add", ServiceOptions::default())?;
    /// if !client.wait_for_server(Duration::from_secs(5)) {
    ///     eprintln!("nobody serves `add`");
    /// }
    /// # Ok::<(), nerve_topic::TopicError>(())
    /// ```
    #[must_use]
    pub fn wait_for_server(&self, timeout: Duration) -> bool {
        self.servers.wait_for_one(timeout)
    }

    /// Sends `data` with `parameters` and waits up to `timeout` for the reply.
    ///
    /// # Errors
    /// See [`ServiceError`]: never a hang past `timeout`.
    pub fn call(&self, data: &ArrayData, parameters: &Parameters, timeout: Duration) -> Result<Reply, ServiceError> {
        let malformed = |what: String| ServiceError::Malformed { service: self.service.to_string(), what };
        let request = encode(data, parameters).map_err(|e| malformed(format!("cannot send the request: {e}")))?;
        let had_servers = self.server_count() > 0;
        let service = self.service.to_string();
        let sample = query::ask(&self.net, &self.key, Some(request), QueryTarget::BestMatching, timeout, had_servers)
            .map_err(|e| match e {
            Unanswered::NoServer => ServiceError::NoServer { service },
            Unanswered::Gone => ServiceError::ServerGone { service },
            Unanswered::Timeout => ServiceError::Timeout { service, timeout },
            Unanswered::Refused(reason) => ServiceError::Failed { service, reason },
            Unanswered::Network(e) => ServiceError::Setup(TopicError::Network(e)),
        })?;
        let (metadata, data) =
            query::decode(sample.payload()).map_err(|e| malformed(format!("the reply is not a nerve message: {e}")))?;
        Ok(Reply { metadata, data })
    }
}

/// Every server reachable now in `domain`: (host, service key; a run's service's key names the
/// run, see [`crate::run_scope::split_key`]).
///
/// # Errors
/// When the network cannot be asked.
pub fn list(domain: u32) -> Result<Vec<(String, String)>, TopicError> {
    query::list(End::Server, domain)
}

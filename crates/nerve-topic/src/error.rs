//! Errors of the topic API.

use nerve_shm::ShmError;

/// Why code written by the user says no, with the reason its caller is given: a service
/// handler's failure (the client's `ServiceError::Failed`), an action's rejected or aborted
/// goal (`ActionError::Rejected`, `ActionError::Aborted`), a node's parameter change refused by
/// an on-change callback (`ParamError::Rejected`).
///
/// `Err("too fast".into())`, or `Err(format!("n must be at most {max}").into())`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Refusal {
    /// The reason, for the caller.
    pub reason: String,
}

impl From<String> for Refusal {
    fn from(reason: String) -> Self {
        Self { reason }
    }
}

impl From<&str> for Refusal {
    fn from(reason: &str) -> Self {
        Self { reason: reason.to_owned() }
    }
}

/// What went wrong publishing or subscribing.
#[derive(Debug, thiserror::Error)]
pub enum TopicError {
    /// A topic name nerve does not accept.
    #[error("invalid topic name `{topic}`: {why}")]
    BadName {
        /// The name given.
        topic: String,
        /// What is wrong with it.
        why: String,
    },
    /// A scope other than `process`, `host` or `network`.
    #[error("unknown scope `{0}` (expected `process`, `host` or `network`)")]
    BadScope(String),
    /// A subscriber queue of zero entries.
    #[error("queue_size must be at least 1 (got {0})")]
    BadQueueSize(usize),
    /// A concurrent callback pool of zero workers.
    #[error("a concurrent callback needs at least 1 worker (got {0})")]
    BadWorkers(usize),
    /// A thread nerve needs could not be started.
    #[error("cannot start a thread: {0}")]
    Thread(#[source] std::io::Error),
    /// The per-user registry or this process's socket could not be set up.
    #[error("topic registry at {path}: {source}")]
    Registry {
        /// File or directory concerned.
        path: std::path::PathBuf,
        /// OS error.
        #[source]
        source: std::io::Error,
    },
    /// The network transport (Zenoh) failed.
    #[error("network: {0}")]
    Network(String),
    /// A shared-memory failure.
    #[error(transparent)]
    Shm(#[from] ShmError),
    /// An inbox handed to a subscriber does not hold the queues it needs.
    #[error("cannot subscribe to `{topic}` in the inbox given: {why}")]
    InboxQueues {
        /// Topic.
        topic: String,
        /// What is missing.
        why: String,
    },
    /// A network option that cannot be read (environment, command line or code).
    #[error("{option}: `{value}`: {why}")]
    BadOption {
        /// The option, or the environment variable that set it.
        option: String,
        /// The value given.
        value: String,
        /// What is wrong with it.
        why: String,
    },
    /// An address that does not make a Zenoh endpoint.
    #[error("bad address `{address}`: {why}")]
    BadAddress {
        /// The address given.
        address: String,
        /// What is wrong with it.
        why: String,
    },
    /// A message larger than the publisher allows.
    #[error("message of {len} bytes on topic `{topic}` exceeds the limit of {limit} bytes")]
    TooLarge {
        /// Topic.
        topic: String,
        /// Message size.
        len: usize,
        /// Limit.
        limit: usize,
    },
}

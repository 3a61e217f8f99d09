//! How the tools, the coordinator and the daemons ask each other: JSON over Zenoh queries.
//!
//! The messages are nerve's cluster protocol, in [`nerve_message`] with its other wire
//! protocols, one module per direction (re-exported here): [`tool_to_coordinator`],
//! [`coordinator_to_tool`], [`coordinator_to_daemon`] and [`daemon_to_coordinator`]. This module
//! carries them over Zenoh: [`ask`] on one side, `serve`/`request`/`answer` on the other.
//!
//! Every answer is a `Result` as JSON (`{"Ok": …}` or `{"Err": "why"}`); the error text is
//! meant for the user and names the machine, dataflow or node concerned.
//!
//! [`tool_to_coordinator`]: nerve_message::tool_to_coordinator
//! [`coordinator_to_tool`]: nerve_message::coordinator_to_tool
//! [`coordinator_to_daemon`]: nerve_message::coordinator_to_daemon
//! [`daemon_to_coordinator`]: nerve_message::daemon_to_coordinator

use std::time::Duration;

pub use nerve_message::coordinator_to_daemon::{Assignment, DaemonRequest, Link, Placement, StartOptions, label};
pub use nerve_message::coordinator_to_tool::{ClusterStatus, DataflowStatus, Started};
pub use nerve_message::daemon_to_coordinator::{
    DaemonHello, DaemonInfo, LogChunk, PartEnded, PartReport, PartState, PartStatus, ProcessInfo,
};
pub use nerve_message::run_status::RunState;
pub use nerve_message::tool_to_coordinator::CoordinatorRequest;
use serde::Serialize;
use serde::de::DeserializeOwned;
use zenoh::Wait;

use crate::error::ClusterError;

/// How long answers that need no work may take.
pub(crate) const QUICK: Duration = Duration::from_secs(5);

/// Ended dataflows (and parts) kept for `nerve list --all`, `nerve logs` and a new
/// coordinator's hello, the oldest forgotten first.
pub(crate) const KEEP_ENDED: usize = 100;

/// Largest piece of a log one answer carries.
pub const LOG_CHUNK: usize = 1 << 20;

/// Sends `request` to the queryable at `key` and reads its one answer.
///
/// # Errors
/// [`ClusterError::Refused`] with the peer's reason; [`ClusterError::Network`] when nobody
/// answers within `timeout` (`who` names the peer); [`ClusterError::Protocol`] for an answer
/// this version cannot read.
pub fn ask<Q: Serialize, A: DeserializeOwned>(
    session: &zenoh::Session,
    key: &str,
    who: &str,
    request: &Q,
    timeout: Duration,
) -> Result<A, ClusterError> {
    let payload =
        serde_json::to_vec(request).map_err(|e| ClusterError::Protocol { from: who.into(), why: e.to_string() })?;
    let asked = std::time::Instant::now();
    let replies = session
        .get(key)
        .payload(payload)
        .timeout(timeout)
        .wait()
        .map_err(|e| ClusterError::Network(format!("cannot ask {who}: {e}")))?;
    let Ok(reply) = replies.recv() else {
        // The query ends early when nobody serves the key at all.
        let why = if asked.elapsed() < timeout {
            "is not there (nobody serves its requests)".to_owned()
        } else {
            format!("did not answer within {timeout:?}")
        };
        return Err(ClusterError::Network(format!("{who} {why}")));
    };
    let bytes = match reply.result() {
        Ok(sample) => sample.payload().to_bytes(),
        Err(e) => {
            return Err(ClusterError::Network(format!(
                "{who} did not answer: {}",
                String::from_utf8_lossy(&e.payload().to_bytes())
            )));
        }
    };
    let answer: Result<A, String> =
        serde_json::from_slice(&bytes).map_err(|e| ClusterError::Protocol { from: who.into(), why: e.to_string() })?;
    answer.map_err(ClusterError::Refused)
}

/// Serves the requests of `queryable`, each on a thread of its own (some wait long: a machine
/// readying its part), until `done()`.
///
/// # Errors
/// When the queryable fails.
pub(crate) fn serve(
    queryable: &zenoh::query::Queryable<zenoh::handlers::FifoChannelHandler<zenoh::query::Query>>,
    whose: &str,
    done: impl Fn() -> bool,
    answer: impl Fn(zenoh::query::Query) + Clone + Send + 'static,
) -> Result<(), ClusterError> {
    while !done() {
        match queryable.recv_timeout(Duration::from_millis(200)) {
            Ok(Some(query)) => {
                let answer = answer.clone();
                if let Err(e) = std::thread::Builder::new().name("nerve-request".into()).spawn(move || answer(query)) {
                    tracing::error!(error = %e, "cannot serve a request");
                }
            }
            Ok(None) => {}
            Err(e) => return Err(ClusterError::Network(format!("{whose} requests: {e}"))),
        }
    }
    Ok(())
}

/// Answers `query` with `answer`: the error is the text the asker's user reads, as it travels.
pub(crate) fn answer<A: Serialize>(query: &zenoh::query::Query, answer: &Result<A, String>) {
    let payload = serde_json::to_vec(answer).unwrap_or_else(|e| {
        serde_json::to_vec(&Err::<(), String>(format!("cannot encode the answer: {e}"))).unwrap_or_default()
    });
    if let Err(e) = query.reply(query.key_expr().clone(), payload).wait() {
        tracing::debug!(error = %e, "the asker is gone");
    }
}

/// A query whose payload is not a request this version of nerve reads.
#[derive(Debug, thiserror::Error)]
#[error(
    "not a request this nerve {} understands (is every machine on the same version?): {source}",
    nerve_message::NERVE_VERSION
)]
pub struct UnknownRequest {
    /// Why it could not be read.
    #[source]
    pub source: serde_json::Error,
}

/// The request a query carries.
///
/// # Errors
/// [`UnknownRequest`] when it is not a request of this version; its text is what to answer.
pub fn request<Q: DeserializeOwned>(query: &zenoh::query::Query) -> Result<Q, UnknownRequest> {
    let bytes = query.payload().map(|p| p.to_bytes()).unwrap_or_default();
    serde_json::from_slice(&bytes).map_err(|source| UnknownRequest { source })
}

/// This process, as the cluster sees it, listening on `listen`.
#[must_use]
pub fn this_process(listen: Vec<String>) -> ProcessInfo {
    ProcessInfo {
        hostname: std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_owned()).unwrap_or_default(),
        host: nerve_topic::network::host_id(),
        pid: std::process::id(),
        version: nerve_message::NERVE_VERSION.to_owned(),
        listen,
    }
}

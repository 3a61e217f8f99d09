//! Why the dashboard could not start.

use std::net::SocketAddr;

/// Why [`crate::View::start`] failed.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The address is taken or not this machine's.
    #[error("cannot listen on {address}: {source}")]
    Listen {
        /// The address asked for.
        address: SocketAddr,
        /// What the system said.
        source: std::io::Error,
    },
    /// Threads or the async runtime could not be started.
    #[error("cannot start the dashboard's {what}: {source}")]
    Spawn {
        /// What was being started.
        what: &'static str,
        /// What the system said.
        source: std::io::Error,
    },
}

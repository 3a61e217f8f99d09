//! Why the bridge could not start, and why a client's message or request was refused.

/// Why [`Bridge::start`](crate::Bridge::start) failed.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The WebSocket server could not start (the address is taken or cannot be bound).
    #[error("cannot serve Foxglove on {address}:{port}: {source}")]
    Server {
        /// The address asked for.
        address: String,
        /// The port asked for.
        port: u16,
        /// The server's reason.
        #[source]
        source: foxglove::FoxgloveError,
    },
    /// A thread of the bridge could not be started.
    #[error("cannot start the bridge's {what} thread: {source}")]
    Thread {
        /// Which thread.
        what: &'static str,
        /// The system's reason.
        #[source]
        source: std::io::Error,
    },
}

/// Why a message a client published, or a service request it sent, could not become a nerve
/// value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    /// The payload is not JSON.
    #[error("the payload is not JSON: {0}")]
    Json(String),
    /// A JSON object without the values.
    #[error("a JSON object payload needs a `value` key (and may have `parameters`, `type`)")]
    NoValue,
    /// `parameters` is not an object.
    #[error("`parameters` must be a JSON object, not {0}")]
    Parameters(String),
    /// `type` names no Arrow type.
    #[error("`{0}` is not an Arrow type")]
    UnknownType(String),
    /// The values do not fit the type.
    #[error("the values are not all {data_type}: {why}")]
    Values {
        /// The type they were read as.
        data_type: String,
        /// Arrow's reason.
        why: String,
    },
    /// The channel's encoding is neither `json` nor `cdr` of a known ROS 2 type.
    #[error(
        "cannot publish `{encoding}` messages of schema `{schema}`: nerve takes `json`, or `cdr` of a ROS 2 message type it knows"
    )]
    Encoding {
        /// The client channel's message encoding.
        encoding: String,
        /// Its schema name.
        schema: String,
    },
    /// CDR bytes that do not decode as the channel's type.
    #[error("{0}")]
    Cdr(String),
}

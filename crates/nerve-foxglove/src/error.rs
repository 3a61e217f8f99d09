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
}

/// Why a client cannot publish on a channel it advertised, or why one of its messages was
/// dropped.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// The channel's encoding is neither `json` nor `cdr`.
    #[error("cannot publish `{encoding}` messages: nerve takes `json`, or `cdr` of a ROS 2 message type")]
    Encoding {
        /// The client channel's message encoding.
        encoding: String,
    },
    /// A `cdr` channel whose schema names no ROS 2 message type.
    #[error("schema `{schema}`: {source}")]
    TypeName {
        /// The schema name.
        schema: String,
        /// Why it is no type name.
        #[source]
        source: nerve_types::NameError,
    },
    /// The `ros2msg` schema the client sent does not parse.
    #[error(transparent)]
    Schema(#[from] nerve_types::ParseError),
    /// The type is not defined (by the client's schema, nor on this host).
    #[error(transparent)]
    Type(#[from] nerve_types::TypesError),
    /// A JSON message that is no nerve value.
    #[error(transparent)]
    Payload(#[from] PayloadError),
    /// CDR bytes that are not a message of the channel's type.
    #[error(transparent)]
    Cdr(#[from] nerve_types::CdrError),
    /// The topic cannot be published on.
    #[error(transparent)]
    Topic(#[from] nerve_topic::TopicError),
}

/// Why a client's service call failed.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The request is no nerve value.
    #[error(transparent)]
    Payload(#[from] PayloadError),
    /// No client of the service could be made.
    #[error(transparent)]
    Topic(#[from] nerve_topic::TopicError),
    /// No server appeared in time.
    #[error("no server of `{service}` appeared within {seconds} s")]
    NoServer {
        /// The service.
        service: String,
        /// How long the call waited.
        seconds: u64,
    },
    /// The call itself failed (the handler refused, the server went away, no reply in time).
    #[error(transparent)]
    Service(#[from] nerve_topic::service::ServiceError),
}

/// Why a client could not set a parameter.
#[derive(Debug, thiserror::Error)]
pub enum ParamSetError {
    /// The name is not `NODE/KEY` or `RUN/NODE/KEY`.
    #[error("`{0}` is not NODE/KEY or RUN/NODE/KEY")]
    Name(String),
    /// The request had no value.
    #[error("no value given")]
    NoValue,
    /// The value is not one a parameter can hold.
    #[error(transparent)]
    Value(#[from] nerve_spec::param::ParamValueError),
    /// The node or its run cannot be found or asked.
    #[error(transparent)]
    Runtime(#[from] nerve_runtime::RuntimeError),
    /// The node refused the value.
    #[error(transparent)]
    Refused(#[from] nerve_runtime::param::ParamError),
    /// The node's answer lacks the parameter.
    #[error("node `{node}` did not answer with `{key}`")]
    NoAnswer {
        /// The node.
        node: String,
        /// The parameter.
        key: String,
    },
}

/// Why a topic could not be offered as a channel.
#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    /// Its declared type cannot be resolved.
    #[error(transparent)]
    Type(#[from] nerve_types::TypesError),
    /// The server refused the channel.
    #[error(transparent)]
    Server(#[from] foxglove::FoxgloveError),
}

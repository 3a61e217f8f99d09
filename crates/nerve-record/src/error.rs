//! Errors of writing and reading recordings.

use std::path::PathBuf;

/// What went wrong writing a recording.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The file could not be created.
    #[error("cannot create the recording {path}: {source}")]
    Create {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A message could not be encoded as Arrow IPC (it was not written).
    #[error("channel `{channel}`: cannot encode the message as Arrow IPC: {source}")]
    Encode {
        /// The channel the message was for.
        channel: String,
        /// Arrow's reason.
        source: arrow_schema::ArrowError,
    },
    /// A typed message could not be encoded as ROS 2 CDR (it was not written).
    #[error("channel `{channel}`: cannot encode the message as CDR: {source}")]
    Cdr {
        /// The channel the message was for.
        channel: String,
        /// Why.
        source: nerve_types::CdrError,
    },
    /// The type declared for a channel cannot be resolved.
    #[error("channel `{channel}`: {source}")]
    Type {
        /// The channel.
        channel: String,
        /// Why.
        source: nerve_types::TypesError,
    },
    /// Writing MCAP records into the file failed (a full disk, an I/O error).
    #[error("writing the recording {path}: {source}")]
    Mcap {
        /// The file.
        path: PathBuf,
        /// The MCAP library's reason.
        source: mcap::McapError,
    },
}

/// What went wrong reading a recording.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be opened or mapped.
    #[error("cannot open the recording {path}: {source}")]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file does not start with MCAP's magic bytes.
    #[error("{path} is not an MCAP file (it does not start with the MCAP magic bytes)")]
    NotMcap {
        /// The file.
        path: PathBuf,
    },
    /// The file is MCAP but its records cannot be read.
    #[error("{path}: malformed MCAP: {source}")]
    Mcap {
        /// The file.
        path: PathBuf,
        /// The MCAP library's reason.
        source: mcap::McapError,
    },
    /// A channel whose messages are neither nerve's Arrow IPC encoding nor ROS 2 CDR.
    #[error("{path}: channel `{channel}` has message encoding `{encoding}`, not `{arrow}` or `{cdr}`", arrow = crate::MESSAGE_ENCODING, cdr = crate::CDR_ENCODING)]
    Encoding {
        /// The file.
        path: PathBuf,
        /// The channel.
        channel: String,
        /// Its message encoding.
        encoding: String,
    },
    /// A message whose payload is not one Arrow IPC stream of one single-column batch.
    #[error("channel `{channel}`, message at log time {log_time}: {why}")]
    Payload {
        /// The channel.
        channel: String,
        /// The message's log time.
        log_time: u64,
        /// What is wrong.
        why: crate::payload::PayloadError,
    },
    /// A CDR channel whose `ros2msg` schema does not describe a type.
    #[error("{path}: channel `{channel}`: its schema: {why}")]
    Schema {
        /// The file.
        path: PathBuf,
        /// The channel.
        channel: String,
        /// What is wrong.
        why: String,
    },
    /// A CDR message that is not a message of its channel's type.
    #[error("channel `{channel}`, message at log time {log_time}: {source}")]
    Cdr {
        /// The channel.
        channel: String,
        /// The message's log time.
        log_time: u64,
        /// What is wrong.
        source: nerve_types::CdrError,
    },
}

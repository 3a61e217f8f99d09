//! Errors of the data plane.

use std::io;

/// What went wrong in the shared-memory data plane.
#[derive(Debug, thiserror::Error)]
pub enum ShmError {
    /// A segment could not be created.
    #[error("cannot create shared memory `{name}` of {len} bytes: {source}")]
    Create {
        /// Object name.
        name: String,
        /// Requested length.
        len: usize,
        /// OS error.
        #[source]
        source: io::Error,
    },
    /// A segment could not be opened or mapped.
    #[error("cannot open shared memory `{name}`: {source}")]
    Open {
        /// Object name.
        name: String,
        /// OS error.
        #[source]
        source: io::Error,
    },
    /// A name that POSIX shared memory cannot hold.
    #[error("invalid shared-memory name `{0}`")]
    BadName(String),
    /// A segment whose header does not match what this version of nerve writes.
    #[error("shared memory `{name}` is not a nerve {what} of this version (magic/version mismatch)")]
    BadHeader {
        /// Object name.
        name: String,
        /// Expected kind of segment.
        what: &'static str,
    },
    /// A message in shared memory that does not decode.
    #[error("malformed message: {0}")]
    Malformed(String),
    /// The array type cannot be carried.
    #[error("unsupported array: {0}")]
    Unsupported(String),
    /// A message larger than the limit its sender was given.
    #[error("message of {len} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        /// Message size.
        len: usize,
        /// Limit.
        limit: usize,
    },
    /// Every block slot of an output is held by readers.
    #[error("all {0} blocks of this output are held by readers; release received values sooner")]
    PoolExhausted(usize),
}

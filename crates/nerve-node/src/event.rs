//! Events a node receives.

use arrow_array::ArrayRef;

/// Sender-supplied key/value parameters of a message.
pub type Parameters = serde_json::Map<String, serde_json::Value>;

/// What came with a message besides its data.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Metadata {
    /// Sender's `CLOCK_MONOTONIC` at send, in nanoseconds (comparable across processes of one
    /// host, e.g. with Python's `time.monotonic_ns()`).
    pub timestamp: u64,
    /// Sender's parameters.
    pub parameters: Parameters,
}

/// One event of a node's stream.
#[derive(Debug, Clone)]
pub enum Event {
    /// A message on an input; `data` views shared memory, no copy was made.
    Input {
        /// Input id.
        id: String,
        /// Timestamp and parameters.
        metadata: Metadata,
        /// The Arrow array.
        data: ArrayRef,
    },
    /// The producer of this input finished; nothing more will arrive on it.
    InputClosed {
        /// Input id.
        id: String,
    },
    /// The dataflow is stopping: finish up and return.
    Stop,
    /// Something went wrong receiving; the stream goes on.
    Error(String),
}

/// Outcome of waiting for an event.
#[derive(Debug, Clone)]
pub enum Next {
    /// An event.
    Event(Event),
    /// The timeout passed first.
    Timeout,
    /// The stream has ended: stop was delivered, or every input closed.
    End,
}

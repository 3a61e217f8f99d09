//! Events a node receives.

use arrow_array::ArrayRef;

pub use nerve_shm::codec::{Metadata, Parameters};

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

//! Events a node receives.

pub use nerve_shm::codec::{Metadata, Parameters};
pub use nerve_topic::{InputId, Message};

/// One event of a node's stream.
#[derive(Debug, Clone)]
pub enum Event {
    /// A message on an input (`message.id` is the input's id); its `data` views shared memory
    /// in place, no copy was made.
    Input(Message),
    /// The producer of this input finished; nothing more will arrive on it. Or, for an input
    /// with an `input_timeout`, it fell silent that long: then [`Event::InputRecovered`] comes
    /// before its next message.
    InputClosed {
        /// Input id.
        id: InputId,
    },
    /// An input its `input_timeout` closed has a message again, which comes next.
    InputRecovered {
        /// Input id.
        id: InputId,
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

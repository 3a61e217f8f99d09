//! What a subscriber receives.

use std::any::Any;
use std::sync::Arc;

use arrow_array::ArrayRef;
use nerve_shm::codec::Metadata;

/// The data of a message.
#[derive(Clone)]
pub enum Payload {
    /// An Arrow array: viewing the publisher's shared memory when it came from another process,
    /// the publisher's very array when it came from this one.
    Array(ArrayRef),
    /// An object handed over within this process as is (bindings pass their language's objects
    /// this way: a Python subscriber receives the very object its publisher sent).
    Object(Arc<dyn Any + Send + Sync>),
}

impl std::fmt::Debug for Payload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Array(a) => f.debug_tuple("Array").field(a).finish(),
            Self::Object(_) => f.write_str("Object(..)"),
        }
    }
}

/// One message of a topic.
#[derive(Debug, Clone)]
pub struct Message {
    /// Topic name (canonical: no leading `/`).
    pub topic: Arc<str>,
    /// Send timestamp and the publisher's parameters.
    pub metadata: Metadata,
    /// The data.
    pub payload: Payload,
}

impl Message {
    /// The data as an Arrow array, if it is one.
    #[must_use]
    pub fn array(&self) -> Option<&ArrayRef> {
        match &self.payload {
            Payload::Array(a) => Some(a),
            Payload::Object(_) => None,
        }
    }
}

//! Events a node receives.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use arrow_array::ArrayRef;

pub use nerve_shm::codec::{Metadata, Parameters};

/// One event of a node's stream.
#[derive(Debug, Clone)]
pub enum Event {
    /// A message on an input; `data` views shared memory, no copy was made.
    Input {
        /// Input id.
        id: InputId,
        /// Timestamp and parameters.
        metadata: Metadata,
        /// The Arrow array.
        data: ArrayRef,
    },
    /// The producer of this input finished; nothing more will arrive on it.
    InputClosed {
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

/// The id of an input, as the dataflow declares it. It reads as a `&str` (`id == "tick"`,
/// `id.as_str()`, `&id` where a `&str` is wanted); every event of one input shares it, so
/// receiving a message allocates nothing for its id.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InputId(Arc<str>);

impl InputId {
    /// The id as a string slice.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for InputId {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for InputId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for InputId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for InputId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for InputId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl From<&str> for InputId {
    fn from(id: &str) -> Self {
        Self(id.into())
    }
}

impl From<String> for InputId {
    fn from(id: String) -> Self {
        Self(id.into())
    }
}

impl From<InputId> for String {
    fn from(id: InputId) -> Self {
        id.0.as_ref().to_owned()
    }
}

impl PartialEq<str> for InputId {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for InputId {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for InputId {
    fn eq(&self, other: &String) -> bool {
        &*self.0 == other.as_str()
    }
}

impl PartialEq<InputId> for str {
    fn eq(&self, other: &InputId) -> bool {
        self == &*other.0
    }
}

impl PartialEq<InputId> for &str {
    fn eq(&self, other: &InputId) -> bool {
        *self == &*other.0
    }
}

impl PartialEq<InputId> for String {
    fn eq(&self, other: &InputId) -> bool {
        self.as_str() == &*other.0
    }
}

#[cfg(test)]
mod tests {
    use super::InputId;

    #[test]
    fn an_input_id_compares_and_reads_as_its_string() {
        let id = InputId::from("tick");
        let owned = String::from("tick");
        assert!(id == "tick");
        assert!("tock" != id);
        assert!(id == *owned.as_str());
        assert!(id == owned);
        assert!(owned == id);
        assert_eq!(id.as_str(), "tick");
        assert_eq!(format!("{id} {id:?}"), "tick \"tick\"");
        assert_eq!(String::from(id.clone()), "tick");
        let set: std::collections::HashSet<InputId> = [id].into();
        assert!(set.contains("tick"));
    }
}

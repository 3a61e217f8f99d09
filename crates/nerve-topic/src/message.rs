//! What a reader receives: one message type for a node's inputs and a topic's subscribers.

use std::any::Any;
use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use arrow_array::{ArrayRef, NullArray};
use arrow_schema::Field;
use nerve_shm::codec::Metadata;

/// One received message: on an input of a dataflow node (`id` is the input's id) or from a
/// topic (`id` is the topic's name), alike.
#[derive(Clone)]
pub struct Message {
    /// The input it arrived on, or the topic.
    pub id: InputId,
    /// The send timestamp and the sender's parameters.
    pub metadata: Metadata,
    /// The Arrow value. From another process it views the sender's shared memory in place;
    /// from this process it is the very array that was sent.
    pub data: ArrayRef,
    /// The very object a language binding of this process sent, as it sent it (a Python
    /// subscriber receives the object its publisher in the same process passed); `data` is then
    /// an empty null array. `None` for every message that is an Arrow value.
    pub object: Option<Arc<dyn Any + Send + Sync>>,
}

impl Message {
    /// A message of an Arrow value.
    #[must_use]
    pub fn new(id: InputId, metadata: Metadata, data: ArrayRef) -> Self {
        Self { id, metadata, data, object: None }
    }

    /// A message passing a binding's own object within this process (see [`Message::object`]).
    #[must_use]
    pub fn of_object(id: InputId, metadata: Metadata, object: Arc<dyn Any + Send + Sync>) -> Self {
        Self { id, metadata, data: Arc::new(NullArray::new(0)), object: Some(object) }
    }

    /// The Arrow field of the value, named after `id`: its type and, in the field's metadata,
    /// the extension type it stands for, if any. An n-D numpy array sent from Python reads as
    /// Arrow's fixed-shape tensor of its shape (`field.extension_type_name()` is
    /// `"arrow.fixed_shape_tensor"`, `metadata.extension` holds the shape too).
    #[must_use]
    pub fn field(&self) -> Field {
        let data_type = self.data.data_type().clone();
        match &self.metadata.extension {
            Some(extension) => extension.field(&self.id, data_type),
            None => Field::new(self.id.as_str(), data_type, true),
        }
    }

    /// The sender's `CLOCK_MONOTONIC` at send, in nanoseconds.
    #[must_use]
    pub fn timestamp(&self) -> u64 {
        self.metadata.timestamp
    }
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("Message");
        s.field("id", &self.id).field("metadata", &self.metadata).field("data", &self.data);
        if self.object.is_some() {
            s.field("object", &"..");
        }
        s.finish()
    }
}

/// The id of an input, as the dataflow declares it, or a topic's name. It reads as a `&str` (`id == "tick"`,
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

impl From<Arc<str>> for InputId {
    fn from(id: Arc<str>) -> Self {
        Self(id)
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

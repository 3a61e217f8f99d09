//! What a topic subscriber sends to a publisher in another process of the host, over the link
//! it opens to the publisher's socket (`SOCK_SEQPACKET`, see `nerve_topic::wire`).
//!
//! A link is always opened by the subscriber, and `Hello` is the only thing it says: the
//! publisher answers with [`PublisherMessage`](crate::publisher_to_subscriber::PublisherMessage)s
//! and from then on writes into the subscriber's queue directly. Data never travels here.

use nerve_shm::ring::Policy;
use serde::{Deserialize, Serialize};

/// A subscriber's message to a publisher.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "msg", rename_all = "snake_case")]
pub enum SubscriberMessage {
    /// "Queue messages of your endpoint `publisher` into the queue of `capacity` entries at
    /// byte `offset` of the inbox attached" (the subscriber's own inbox, or the inbox of the
    /// node it serves, whose other queues are not the publisher's business).
    Hello {
        /// nerve version of the subscriber.
        version: String,
        /// Publisher endpoint id, from its registry entry.
        publisher: u64,
        /// Index of the queue in the inbox (for logs).
        ring: usize,
        /// Where the queue starts in the inbox, in bytes.
        offset: usize,
        /// Entries of the queue.
        capacity: usize,
        /// Policy of the queue.
        policy: Policy,
    },
}

#[cfg(test)]
mod tests {
    use super::{Policy, SubscriberMessage};

    #[test]
    fn encoding_is_pinned() -> serde_json::Result<()> {
        // Publishers of other builds read this: a change here is a protocol change.
        let hello = SubscriberMessage::Hello {
            version: "0.1.0".into(),
            publisher: 7,
            ring: 2,
            offset: 4096,
            capacity: 10,
            policy: Policy::DropOldest,
        };
        let json = r#"{"msg":"hello","version":"0.1.0","publisher":7,"ring":2,"offset":4096,"capacity":10,"policy":"drop_oldest"}"#;
        assert_eq!(serde_json::to_string(&hello)?, json);
        assert_eq!(serde_json::from_str::<SubscriberMessage>(json)?, hello);
        Ok(())
    }
}

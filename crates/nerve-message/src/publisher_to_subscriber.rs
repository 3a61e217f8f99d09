//! What a topic publisher answers a subscriber in another process of the host, on the link the
//! subscriber opened (see [`crate::subscriber_to_publisher`]).
//!
//! Shared memory travels as file descriptors attached to these messages: the block table with
//! `Welcome`, each block with `Block`, always before the first message queued in it.

use serde::{Deserialize, Serialize};

/// A publisher's message to a subscriber.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "msg", rename_all = "snake_case")]
pub enum PublisherMessage {
    /// Accepted as reader bit `edge`; the block table is attached.
    Welcome {
        /// The reader's holder bit.
        edge: usize,
    },
    /// Not accepted, and why.
    Refused {
        /// Reason, for the subscriber's log.
        reason: String,
    },
    /// Block `seq` now lives in table slot `slot`; attached.
    Block {
        /// Table slot.
        slot: u32,
        /// Block generation.
        seq: u64,
    },
}

#[cfg(test)]
mod tests {
    use super::PublisherMessage;

    #[test]
    fn encoding_is_pinned() -> serde_json::Result<()> {
        // Peers of other builds read these: a change here is a protocol change.
        for (msg, json) in [
            (PublisherMessage::Welcome { edge: 3 }, r#"{"msg":"welcome","edge":3}"#),
            (PublisherMessage::Refused { reason: "no".into() }, r#"{"msg":"refused","reason":"no"}"#),
            (PublisherMessage::Block { slot: 5, seq: 99 }, r#"{"msg":"block","slot":5,"seq":99}"#),
        ] {
            assert_eq!(serde_json::to_string(&msg)?, json);
            assert_eq!(serde_json::from_str::<PublisherMessage>(json)?, msg);
        }
        Ok(())
    }
}

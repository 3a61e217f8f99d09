//! Publish and subscribe by topic name from any process, with no daemon, broker or YAML.
//!
//! The transport follows where the peer is, not the code: a subscriber in the same process
//! receives the publisher's very data (no copy, no serialization); one in another process of
//! the host reads it in place in shared memory. Endpoints find each other through a per-user
//! registry directory (see [`registry`]); a `domain` isolates groups, a [`Scope`] fences how
//! far a topic travels, and a [`RunScope`] keeps the names of a run to that run. A subscriber keeps working while publishers come, go and restart; a
//! slow subscriber loses its oldest messages, never the newest, and never slows the publisher
//! or other subscribers.
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//! use nerve_topic::arrow_array::{ArrayRef, UInt32Array};
//! use nerve_topic::{Publisher, Subscriber};
//!
//! let sub = Subscriber::new("counter", Default::default())?;
//! let publisher = Publisher::new("counter", Default::default())?;
//! let value: ArrayRef = Arc::new(UInt32Array::from(vec![7]));
//! publisher.send(&value, &Default::default())?;
//! let got = sub.recv(Some(Duration::from_secs(1)))?.expect("a message");
//! assert_eq!(got.data.len(), 1);
//! # Ok::<(), nerve_topic::TopicError>(())
//! ```
//!
//! [`service`] adds request/response by name (a [`service::Server`] and [`service::Client`])
//! over the same network session, and [`action`] long-running goals with feedback and cancel
//! (an [`action::ActionServer`] and [`action::ActionClient`]).

pub mod action;
mod arrivals;
mod callback;
mod error;
mod feeds;
mod message;
pub mod name;
pub mod network;
mod publisher;
mod query;
pub mod registry;
mod rendezvous;
pub mod run_scope;
mod runtime;
mod sample;
pub mod service;
pub mod session;
mod subscriber;
pub mod wire;

pub use arrivals::Arrivals;
pub use arrow_array;
pub use callback::{CallbackMode, Callbacks};
pub use error::{Refusal, TopicError};
pub use message::{InputId, Message};
pub use nerve_shm::codec::{Metadata, Parameters};
pub use nerve_shm::message::{Extension, FIXED_SHAPE_TENSOR};
pub use publisher::{DEFAULT_MAX_MESSAGE, Publisher, PublisherOptions};
pub use registry::Scope;
pub use run_scope::RunScope;
pub use sample::{Sample, SendError, SendFailure};
pub use session::{DiscoveryRange, NetworkOptions};
pub use subscriber::{HAND_OVER_PAUSE, RecvWaker, Subscriber, SubscriberOptions};

//! Write nerve dataflow nodes in Rust.
//!
//! A node is a process that `nerve run` starts from a dataflow YAML. It receives [`Event`]s for
//! its declared inputs and sends Arrow arrays on its declared outputs. Data moves through
//! shared memory: a sent array is written once into a block, and every reader's `data` views
//! that block in place.
//!
//! ```no_run
//! use arrow_array::{Array, UInt64Array};
//! use nerve_node::{Event, Node, Parameters};
//!
//! let (node, mut events) = Node::init_from_env()?;
//! while let Some(event) = events.recv() {
//!     match event {
//!         Event::Input(message) if message.id == "tick" => {
//!             let counter = UInt64Array::from(vec![message.timestamp()]);
//!             node.send_output("counter", &Parameters::new(), &counter)?;
//!         }
//!         Event::Stop => break,
//!         other => eprintln!("ignoring {other:?}"),
//!     }
//! }
//! # Ok::<(), nerve_node::NodeError>(())
//! ```
//!
//! Typed messages: [`msg`] holds every ROS 2 interface nerve ships as a Rust struct
//! (`msg::sensor_msgs::msg::Image`); [`Node::send_message`] sends one and
//! `Image::from_arrow(&message.data)` reads one back, its `data` a view of shared memory.
//! `nerve types rust my_msgs` writes the same code for packages of your own.

mod calls;
mod clock;
mod connect;
mod error;
mod event;
mod log;
mod node;
mod params;
#[cfg(feature = "profile-stages")]
mod profile;
mod shared;
mod stream;

pub use arrow_array;
pub use clock::Clock;
pub use error::NodeError;
pub use event::{Event, InputId, Message, Metadata, Next, Parameters};
pub use nerve_msgs as msg;
pub use nerve_shm::clock::monotonic_ns;
pub use nerve_topic::{Extension, FIXED_SHAPE_TENSOR, Refusal};
pub use nerve_topic::{Sample, SendError, SendFailure};
pub use node::{LOG_TARGET, Node};
pub use params::{ParamError, ParamValue, Params};
pub use stream::{Encoded, EncodedNext, EventStream};
pub use tracing::Level;

/// Logs as the node this process runs (its `NERVE_NODE_ID`), without a [`Node`] at hand: for
/// a language's own logging, routed to nerve before or after the node connects. See
/// [`Node::log_with`].
pub fn log_as_this_process(
    level: tracing::Level,
    message: &str,
    target: Option<&str>,
    fields: &std::collections::BTreeMap<String, String>,
) {
    let node = std::env::var(nerve_message::env::NODE_ID).unwrap_or_default();
    log::emit(&node, level, message, target, fields);
}

/// Whether this process was spawned by `nerve run` (rather than started by hand).
#[must_use]
pub fn started_by_nerve() -> bool {
    std::env::var_os(nerve_message::env::SOCKET).is_some()
}

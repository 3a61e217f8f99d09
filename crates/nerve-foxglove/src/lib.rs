//! A [Foxglove](https://foxglove.dev) WebSocket server over nerve: what `nerve foxglove` and
//! `nerve run --foxglove` serve.
//!
//! Every topic of this host that has a publisher, every dataflow output among them, is a channel
//! (named as `nerve topic list` names it: `robot/pose`, or `~RUN/node/output` for a run's own):
//!
//! * an output a running dataflow declares with a ROS 2 message type (`output_types:`) goes out
//!   as CDR under the type's `ros2msg` schema, as `ros2 bag` records it, which Foxglove decodes
//!   and draws (images, point clouds, transforms, markers…);
//! * the transforms of the `tf` and `tf_static` topics (`nerve_tf::wire`) as Foxglove's own
//!   `foxglove.FrameTransforms`, the frame tree of its 3D panel;
//! * any other value as JSON ([`json`]): the sender's stamp, its metadata parameters, the values.
//!
//! Nothing flows to a client that did not subscribe: the bridge subscribes to a topic when the
//! first client subscribes to its channel and unsubscribes when the last one leaves. A client
//! that reads slowly loses its oldest messages ([`Options::backlog`]); no node ever waits.
//! Clients may publish (JSON values, or CDR of a ROS 2 type) on any topic, call services
//! ([`services`]), and read and set the parameters of running nodes ([`params`]). Under
//! simulated time the server announces the run's time and stamps messages with it.
//!
//! The server is the `foxglove` crate's (subprotocol `foxglove.sdk.v1`), which Foxglove's app
//! and the `foxglove-sdk` clients speak.
//!
//! ```no_run
//! use nerve_foxglove::{Bridge, Options};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let bridge = Bridge::start(&Options { port: 0, ..Options::default() })?; // 127.0.0.1
//! println!("open ws://127.0.0.1:{} in Foxglove", bridge.port());
//! // …serves until `bridge` is dropped
//! # Ok(())
//! # }
//! ```

mod bridge;
pub mod channels;
mod error;
pub mod json;
pub mod params;
pub mod services;

pub use bridge::{Bridge, DEFAULT_BACKLOG, Options, TimeSource};
pub use error::{CallError, ChannelError, ParamSetError, PayloadError, PublishError, StartError};

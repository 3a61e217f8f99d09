//! nerve's live dashboard, what `nerve view` serves: a web page on loopback that draws the
//! dataflows running on this host as they run.
//!
//! * **The graph**: every node with its state, restarts, CPU and memory, every edge with its
//!   rate, delivery latency (from the send stamps, sampled by the reader), queue fill and drops
//!   ([`stats`]). These are counters nerve keeps anyway, read once a second and only while a
//!   page is open.
//! * **A channel's latest value**, when one is clicked: images drawn as images, a few numbers
//!   plotted, point clouds, paths and laser scans as points to turn and zoom ([`points`]),
//!   anything else as a tree ([`preview`]). The server subscribes to the channel only
//!   while a page looks at it, and sends the next value only when the page has drawn the last
//!   one, so a slow browser never queues and never slows a node.
//! * **The transform tree** of the shared `tf` / `tf_static` topics, while its panel is open.
//! * **A node's log tail**.
//!
//! Everything the page needs is in this crate (no CDN): it works on a robot with no internet.
//!
//! ```no_run
//! use nerve_view::{Options, View};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let view = View::start(&Options { port: 0, ..Options::default() })?; // 127.0.0.1
//! println!("open http://127.0.0.1:{}", view.port());
//! // …serves until `view` is dropped
//! # Ok(())
//! # }
//! ```

pub mod channel;
mod error;
mod graph;
mod logs;
pub mod points;
pub mod preview;
mod server;
pub mod stats;
mod transforms;

pub use error::StartError;
pub use server::{DEFAULT_PORT, Options, View};

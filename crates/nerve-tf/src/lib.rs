//! A transform tree like ROS's tf2: any process publishes where its frames are, any process
//! asks where one frame is in another, at a time.
//!
//! Frames form trees: each frame has at most one parent, and the transform of an edge is the
//! child's pose in its parent. A [`TransformBroadcaster`] publishes time-stamped transforms
//! (a robot's base moving in the world) on topic `tf`; a [`StaticTransformBroadcaster`]
//! publishes fixed ones (a camera bolted to the base) on `tf_static`, and sends them again to
//! every listener that starts later. A [`TransformBuffer`] listens to both, keeps each moving
//! edge's recent history (10 s by default), and looks a transform up through the two frames'
//! common ancestor, interpolating each moving edge between the transforms around the time
//! asked for (linearly for translations, by slerp for rotations).
//!
//! Transforms travel on ordinary topics (shared memory on a host, Zenoh between hosts), as
//! Arrow struct arrays any Arrow tool can read: see [`wire`].
//!
//! ```no_run
//! use std::time::Duration;
//! use nerve_tf::*;
//!
//! let fixed = StaticTransformBroadcaster::new(TfOptions::default())?;
//! fixed.send(&[StampedTransform::now("base", "camera", Transform::new([0.2, 0.0, 0.5], [0.0, 0.0, 0.0, 1.0])?)])?;
//! let moving = TransformBroadcaster::new(TfOptions::default())?;
//! for x in [0.0, 0.1, 0.2] {
//!     moving.send(&[StampedTransform::now("world", "base", Transform::new([x, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0])?)])?;
//! }
//!
//! let buffer = TransformBuffer::new(BufferOptions::default())?;
//! let camera = buffer.lookup_wait("world", "camera", None, Duration::from_secs(1))?;
//! println!("camera at {:?}, {:?}", camera.transform.translation, camera.transform.rotation);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The tree itself, with no topics, is a [`FrameTree`].

mod broadcaster;
mod buffer;
mod clock;
mod error;
mod history;
mod transform;
mod tree;
pub mod wire;

pub use broadcaster::{StaticTransformBroadcaster, TfOptions, TransformBroadcaster};
pub use buffer::{BufferOptions, TransformBuffer};
pub use error::{Direction, Stamp, TfError, TransformError};
pub use transform::{StampedTransform, Transform};
pub use tree::{DEFAULT_CACHE, EdgeInfo, FrameTree};

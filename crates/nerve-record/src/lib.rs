//! Recordings of nerve dataflows and topics in [MCAP](https://mcap.dev), the robotics log
//! format, and reading them back for replay.
//!
//! A recording holds one MCAP channel per recorded dataflow output (`<node>/<output>`) or topic
//! (`topic/<name>`). Each message is one Arrow IPC stream (see [`payload`]): the schema, with
//! the array's type as the one column `value` and the sender's parameters in the schema's
//! metadata, then one record batch. The MCAP schema of a channel has encoding
//! [`SCHEMA_ENCODING`], the Arrow type as text for its name, and the IPC schema as its data;
//! the channel's message encoding is [`MESSAGE_ENCODING`]. A channel declared with a ROS 2
//! message type ([`RecordingWriter::declare_type`]) is written as `ros2 bag` writes it
//! instead: schema encoding [`ROS2_SCHEMA_ENCODING`] (the type's name, its full definition as
//! data), message encoding [`CDR_ENCODING`], one CDR message per row, so ROS 2's tools and
//! `mcap-ros2-support` decode it; such messages keep no sender's parameters (CDR has no place
//! for them). `log_time` is when the recorder
//! received the message (ns since the Unix epoch), `publish_time` the sender's
//! `CLOCK_MONOTONIC` stamp. Chunks are uncompressed unless the writer is asked for zstd or lz4
//! ([`RecordingWriter::create_compressed`]). Metadata records hold the dataflow ([`DATAFLOW_METADATA`]) and the
//! messages each channel lost ([`DROPS_METADATA`]). The file has a summary section with
//! statistics, so `mcap info` shows it at once.
//!
//! ```
//! use std::collections::BTreeSet;
//! use nerve_record::{Pace, Recording, RecordingWriter, arrow_array::{Array, UInt32Array}};
//! use nerve_shm::codec::Metadata;
//!
//! let path = std::env::temp_dir().join(format!("nerve-record-doc-{}.mcap", std::process::id()));
//! let mut writer = RecordingWriter::create(&path)?;
//! let mut metadata = Metadata { timestamp: 42, ..Default::default() };
//! metadata.parameters.insert("frame".into(), 1.into());
//! writer.write("camera/image", &metadata, &UInt32Array::from(vec![1, 2, 3]), 1_700_000_000_000_000_000)?;
//! writer.finish()?;
//!
//! let recording = Recording::open(&path)?;
//! let channels = recording.channels()?;
//! assert_eq!(channels, BTreeSet::from(["camera/image".to_owned()]));
//! let messages = recording.messages(&channels)?;
//! nerve_record::replay(&messages, Pace { speed: 0.0, looped: false }, &|| false, |m| {
//!     let (array, parameters) = m.decode()?;
//!     assert_eq!((array.len(), m.publish_time, &parameters["frame"]), (3, 42, &1.into()));
//!     Ok::<(), nerve_record::ReadError>(())
//! })?;
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod pace;
pub mod payload;
mod reader;
mod writer;

pub use arrow_array;
pub use error::{ReadError, WriteError};
pub use pace::{Pace, replay};
pub use payload::PayloadError;
pub use reader::{Recorded, Recording};
pub use writer::{ChannelTotals, Compression, RecordingWriter, Split};

/// The file of part `index` of a recording split into several (`run_0.mcap`, `run_1.mcap`, …
/// for `run.mcap`).
#[must_use]
pub fn part_path(path: &std::path::Path, index: usize) -> std::path::PathBuf {
    let stem = path.file_stem().map_or_else(|| "recording".into(), |s| s.to_string_lossy().into_owned());
    let extension = path.extension().map_or_else(|| "mcap".into(), |e| e.to_string_lossy().into_owned());
    path.with_file_name(format!("{stem}_{index}.{extension}"))
}

/// Encoding of every channel's MCAP schema: the data is an Arrow IPC stream holding only the
/// schema (`pyarrow.ipc.open_stream(schema.data).schema`).
pub const SCHEMA_ENCODING: &str = "arrow.ipc.schema";

/// Message encoding of every channel: each message is one Arrow IPC stream of one record batch
/// of one column (`pyarrow.ipc.open_stream(message.data).read_all()`).
pub const MESSAGE_ENCODING: &str = "arrow.ipc";

/// Encoding of a typed channel's MCAP schema: the message type's definition and those of the
/// types it contains, as `ros2 bag` writes them.
pub const ROS2_SCHEMA_ENCODING: &str = "ros2msg";

/// Message encoding of a typed channel: ROS 2's CDR.
pub const CDR_ENCODING: &str = "cdr";

/// Name of the metadata record holding the recorded dataflow: keys `file` and `yaml`.
pub const DATAFLOW_METADATA: &str = "nerve.dataflow";

/// Name of the metadata record holding the messages each channel lost before reaching the
/// file: channel → count (decimal text), every recorded channel listed.
pub const DROPS_METADATA: &str = "nerve.drops";

/// Prefix of a recorded topic's channel: `topic/<name>`.
pub const TOPIC_PREFIX: &str = "topic/";

/// The channel of dataflow output `output` of node `node`.
#[must_use]
pub fn output_channel(node: &str, output: &str) -> String {
    format!("{node}/{output}")
}

/// The channel of topic `topic` (canonical name).
#[must_use]
pub fn topic_channel(topic: &str) -> String {
    format!("{TOPIC_PREFIX}{topic}")
}

/// The topic a channel is republished on: a recorded topic's own name, or for a dataflow
/// output `<node>/<output>`, the name `nerve topic` shows that output under.
#[must_use]
pub fn channel_topic(channel: &str) -> &str {
    channel.strip_prefix(TOPIC_PREFIX).unwrap_or(channel)
}

/// A message's log time: nerve's time in ns, the wall clock since the Unix epoch, or the run's
/// simulated time when the recorder is a node of a `--sim-time` run.
#[must_use]
pub fn now_ns() -> u64 {
    nerve_shm::sim_clock::process_now_ns()
}

//! Writing a recording: one MCAP channel per recorded output or topic, one message per
//! message received, and the drop counts in the file's metadata.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use arrow_array::Array;
use arrow_schema::DataType;
use mcap::records::{MessageHeader, Metadata as McapMetadata};
use nerve_shm::codec::Metadata;
use nerve_types::{Codec, Registry, TypeName, ros2msg, same_layout};

use crate::error::WriteError;
use crate::payload;
use crate::{CDR_ENCODING, DATAFLOW_METADATA, DROPS_METADATA, MESSAGE_ENCODING, ROS2_SCHEMA_ENCODING, SCHEMA_ENCODING};

/// How the chunks of a recording are compressed. Without compression (the default) a replay
/// reads messages in place from the mapped file, without a copy; zstd makes the smallest files
/// (what `mcap` and `ros2 bag` users usually choose), lz4 the fastest to write and read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Compression {
    /// Chunks stored as written.
    #[default]
    None,
    /// Zstandard.
    Zstd,
    /// LZ4 (frame format).
    Lz4,
}

impl Compression {
    fn mcap(self) -> Option<mcap::Compression> {
        match self {
            Self::None => None,
            Self::Zstd => Some(mcap::Compression::Zstd),
            Self::Lz4 => Some(mcap::Compression::Lz4),
        }
    }
}

/// What a finished recording holds, per channel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChannelTotals {
    /// Messages written.
    pub written: u64,
    /// Messages lost before reaching the file (full queue, or not encodable).
    pub dropped: u64,
}

/// An MCAP file being recorded.
///
/// Messages of one channel may change Arrow type: each type gets an MCAP channel of its own
/// (same topic, another schema), so nothing is coerced.
pub struct RecordingWriter {
    mcap: mcap::Writer<BufWriter<File>>,
    path: PathBuf,
    /// (channel, type) → MCAP channel id.
    channels: HashMap<(String, DataType), u16>,
    /// Channels declared with a ROS 2 message type.
    typed: HashMap<String, Typed>,
    totals: BTreeMap<String, ChannelTotals>,
    sequence: u32,
}

/// A channel written as ROS 2 writes it.
struct Typed {
    name: TypeName,
    codec: Codec,
    /// The `ros2msg` schema's text.
    definition: String,
    /// Its MCAP channel, once it has a message.
    id: Option<u16>,
}

impl Typed {
    /// The MCAP channel of `channel`'s CDR messages, added (with its `ros2msg` schema) at the
    /// first one.
    fn channel_id(
        &mut self,
        mcap: &mut mcap::Writer<BufWriter<File>>,
        path: &Path,
        channel: &str,
    ) -> Result<u16, WriteError> {
        if let Some(id) = self.id {
            return Ok(id);
        }
        let error = |source| WriteError::Mcap { path: path.to_owned(), source };
        let schema =
            mcap.add_schema(&self.name.to_string(), ROS2_SCHEMA_ENCODING, self.definition.as_bytes()).map_err(error)?;
        let id = mcap.add_channel(schema, channel, CDR_ENCODING, &BTreeMap::new()).map_err(error)?;
        self.id = Some(id);
        Ok(id)
    }
}

impl RecordingWriter {
    /// Creates (or truncates) the file at `path`, its chunks uncompressed.
    ///
    /// # Errors
    /// When the file cannot be created.
    pub fn create(path: &Path) -> Result<Self, WriteError> {
        Self::create_compressed(path, Compression::None)
    }

    /// Creates (or truncates) the file at `path`, its chunks compressed with `compression`.
    ///
    /// # Errors
    /// When the file cannot be created.
    pub fn create_compressed(path: &Path, compression: Compression) -> Result<Self, WriteError> {
        let file = File::create(path).map_err(|source| WriteError::Create { path: path.to_owned(), source })?;
        let mcap = mcap::WriteOptions::new()
            .compression(compression.mcap())
            .profile("nerve")
            .library(format!("nerve-record/{} ({})", env!("CARGO_PKG_VERSION"), mcap::LIBRARY_IDENTIFIER))
            .create(BufWriter::new(file))
            .map_err(|source| WriteError::Mcap { path: path.to_owned(), source })?;
        Ok(Self {
            mcap,
            path: path.to_owned(),
            channels: HashMap::new(),
            typed: HashMap::new(),
            totals: BTreeMap::new(),
            sequence: 0,
        })
    }

    fn mcap_error(&self) -> impl Fn(mcap::McapError) -> WriteError + '_ {
        |source| WriteError::Mcap { path: self.path.clone(), source }
    }

    /// Declares `channel` before its first message, so a channel that never gets one still
    /// shows in the recording's statistics with zero messages and its drop count.
    pub fn declare(&mut self, channel: &str) {
        self.totals.entry(channel.to_owned()).or_default();
    }

    /// Records `channel` as ROS 2 does: its values of message type `name` (a `.msg` type) as CDR
    /// under a `ros2msg` schema, so ROS 2's tools read them. A value of another Arrow type (the
    /// sender did not keep to its declaration) still goes in as Arrow IPC.
    ///
    /// # Errors
    /// [`WriteError::Type`] when `name` cannot be resolved in `registry`.
    pub fn declare_type(&mut self, channel: &str, registry: &Registry, name: &TypeName) -> Result<(), WriteError> {
        let error = |source| WriteError::Type { channel: channel.to_owned(), source };
        let codec = Codec::new(registry, name).map_err(error)?;
        let definition = ros2msg(registry, name).map_err(error)?;
        self.typed.insert(channel.to_owned(), Typed { name: name.clone(), codec, definition, id: None });
        self.declare(channel);
        Ok(())
    }

    /// Stores the dataflow the recording was made from (a metadata record named
    /// [`DATAFLOW_METADATA`] with its `file` and its `yaml` text).
    ///
    /// # Errors
    /// When the record cannot be written.
    pub fn write_dataflow(&mut self, file: &Path, yaml: &str) -> Result<(), WriteError> {
        let metadata =
            BTreeMap::from([("file".to_owned(), file.display().to_string()), ("yaml".to_owned(), yaml.to_owned())]);
        self.mcap
            .write_metadata(&McapMetadata { name: DATAFLOW_METADATA.to_owned(), metadata })
            .map_err(self.mcap_error())
    }

    fn channel_id(&mut self, channel: &str, data_type: &DataType) -> Result<u16, WriteError> {
        if let Some(&id) = self.channels.get(&(channel.to_owned(), data_type.clone())) {
            return Ok(id);
        }
        let schema = payload::schema_stream(data_type)
            .map_err(|source| WriteError::Encode { channel: channel.to_owned(), source })?;
        let schema_id =
            self.mcap.add_schema(&data_type.to_string(), SCHEMA_ENCODING, &schema).map_err(self.mcap_error())?;
        let id =
            self.mcap.add_channel(schema_id, channel, MESSAGE_ENCODING, &BTreeMap::new()).map_err(self.mcap_error())?;
        self.channels.insert((channel.to_owned(), data_type.clone()), id);
        Ok(id)
    }

    /// Writes one message of `channel`: `log_time` is when the recorder received it (ns since
    /// the Unix epoch), the publish time the sender's stamp.
    ///
    /// # Errors
    /// [`WriteError::Encode`] or, on a typed channel, [`WriteError::Cdr`] when the array cannot
    /// be encoded (nothing was written; count it with [`RecordingWriter::count_dropped`]),
    /// [`WriteError::Mcap`] when the file cannot be written.
    pub fn write(
        &mut self,
        channel: &str,
        metadata: &Metadata,
        data: &dyn Array,
        log_time: u64,
    ) -> Result<(), WriteError> {
        if let Some(typed) = self.typed.get_mut(channel)
            && same_layout(typed.codec.data_type(), data.data_type())
        {
            // Each row is one CDR message; all are encoded before any is written, so a value
            // is recorded whole or not at all.
            let rows = (0..data.len())
                .map(|row| typed.codec.encode(data, row))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|source| WriteError::Cdr { channel: channel.to_owned(), source })?;
            let channel_id = typed.channel_id(&mut self.mcap, &self.path, channel)?;
            for bytes in rows {
                self.write_message(channel, channel_id, metadata.timestamp, log_time, &bytes)?;
            }
            return Ok(());
        }
        let bytes = payload::encode(data, &metadata.parameters)
            .map_err(|source| WriteError::Encode { channel: channel.to_owned(), source })?;
        let channel_id = self.channel_id(channel, data.data_type())?;
        self.write_message(channel, channel_id, metadata.timestamp, log_time, &bytes)
    }

    fn write_message(
        &mut self,
        channel: &str,
        channel_id: u16,
        publish_time: u64,
        log_time: u64,
        bytes: &[u8],
    ) -> Result<(), WriteError> {
        self.sequence = self.sequence.wrapping_add(1);
        let header = MessageHeader { channel_id, sequence: self.sequence, log_time, publish_time };
        self.mcap.write_to_known_channel(&header, bytes).map_err(self.mcap_error())?;
        self.totals.entry(channel.to_owned()).or_default().written += 1;
        Ok(())
    }

    /// Counts `n` messages of `channel` lost before they reached the file.
    pub fn count_dropped(&mut self, channel: &str, n: u64) {
        self.totals.entry(channel.to_owned()).or_default().dropped += n;
    }

    /// Every channel's totals so far.
    #[must_use]
    pub fn totals(&self) -> &BTreeMap<String, ChannelTotals> {
        &self.totals
    }

    /// Writes the drop counts (a metadata record named [`DROPS_METADATA`]: channel → messages
    /// lost, every declared or written channel listed) and the summary section, and closes the
    /// file.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn finish(mut self) -> Result<BTreeMap<String, ChannelTotals>, WriteError> {
        let metadata = self.totals.iter().map(|(c, t)| (c.clone(), t.dropped.to_string())).collect();
        self.mcap
            .write_metadata(&McapMetadata { name: DROPS_METADATA.to_owned(), metadata })
            .map_err(self.mcap_error())?;
        self.mcap.finish().map_err(self.mcap_error())?;
        let Self { mcap, path, totals, .. } = self;
        // Flushed and synced here, so a failing disk is an error and not a truncated file.
        let file = mcap
            .into_inner()
            .into_inner()
            .map_err(|e| WriteError::Mcap { path: path.clone(), source: e.into_error().into() })?;
        file.sync_all().map_err(|e| WriteError::Mcap { path, source: e.into() })?;
        Ok(totals)
    }
}

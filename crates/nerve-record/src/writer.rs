//! Writing a recording: one MCAP channel per recorded output or topic, one message per
//! message received, and the drop counts in the file's metadata.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::Duration;

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

/// When a recording goes on in a new file: once the current one holds about `bytes` of
/// messages, or spans `duration` of log time, whichever comes first. Each part is a whole MCAP
/// file (its own schemas, channels, summary, the dataflow and the drops so far), named by
/// [`crate::part_path`]; [`crate::Recording::open`] reads the parts back as one recording.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Split {
    /// Message bytes per file.
    pub bytes: Option<u64>,
    /// Log time per file.
    pub duration: Option<Duration>,
}

impl Split {
    fn is_split(self) -> bool {
        self.bytes.is_some() || self.duration.is_some()
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
    /// The file being written (the current part of a split recording).
    path: PathBuf,
    /// The recording's name, and how it is split, if it is.
    name: PathBuf,
    compression: Compression,
    split: Split,
    /// The current part's number, its message bytes, and the log time of its first message.
    part: usize,
    part_bytes: u64,
    part_since: Option<u64>,
    /// The dataflow record, written into every part.
    dataflow: Option<McapMetadata>,
    /// (channel, type) → MCAP channel id, in the current file.
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
        Self::create_split(path, compression, Split::default())
    }

    /// Creates a recording named `path`, its chunks compressed with `compression`, in parts
    /// as `split` says ([`crate::part_path`]; a single file at `path` when it says nothing).
    /// The parts of an earlier recording of that name are removed (as a file at `path` would be
    /// replaced), and so is a file at `path` itself, which would be read in their stead.
    ///
    /// # Errors
    /// When the file cannot be created or an earlier part removed.
    pub fn create_split(path: &Path, compression: Compression, split: Split) -> Result<Self, WriteError> {
        let first = if split.is_split() {
            remove_earlier(path)?;
            crate::part_path(path, 0)
        } else {
            path.to_owned()
        };
        Ok(Self {
            mcap: open_mcap(&first, compression)?,
            path: first,
            name: path.to_owned(),
            compression,
            split,
            part: 0,
            part_bytes: 0,
            part_since: None,
            dataflow: None,
            channels: HashMap::new(),
            typed: HashMap::new(),
            totals: BTreeMap::new(),
            sequence: 0,
        })
    }

    /// Goes on in the next part when the current one is full (see [`Split`]), before a message
    /// of `bytes` logged at `log_time` is written.
    fn maybe_split(&mut self, bytes: usize, log_time: u64) -> Result<(), WriteError> {
        let since = *self.part_since.get_or_insert(log_time);
        let full = self.split.bytes.is_some_and(|max| self.part_bytes > 0 && self.part_bytes + bytes as u64 > max)
            || self.split.duration.is_some_and(|d| log_time.saturating_sub(since) >= duration_ns(d));
        if !full {
            return Ok(());
        }
        let next = crate::part_path(&self.name, self.part + 1);
        let finished = std::mem::replace(&mut self.mcap, open_mcap(&next, self.compression)?);
        close(finished, &self.path, &self.totals)?;
        self.path = next;
        self.part += 1;
        (self.part_bytes, self.part_since) = (0, Some(log_time));
        // Every part names its own schemas and channels.
        self.channels.clear();
        self.typed.values_mut().for_each(|t| t.id = None);
        if let Some(dataflow) = &self.dataflow {
            self.mcap
                .write_metadata(dataflow)
                .map_err(|source| WriteError::Mcap { path: self.path.clone(), source })?;
        }
        Ok(())
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
        let record = McapMetadata { name: DATAFLOW_METADATA.to_owned(), metadata };
        self.mcap.write_metadata(&record).map_err(self.mcap_error())?;
        self.dataflow = Some(record);
        Ok(())
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
        // Its size in memory stands for its size in the file: the split comes before the
        // message is encoded, so that the message goes whole into the next part.
        if self.split.is_split() {
            self.maybe_split(data.get_array_memory_size(), log_time)?;
        }
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
        self.part_bytes += bytes.len() as u64;
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
    pub fn finish(self) -> Result<BTreeMap<String, ChannelTotals>, WriteError> {
        close(self.mcap, &self.path, &self.totals)?;
        Ok(self.totals)
    }
}

/// An MCAP writer on a new file at `path`.
fn open_mcap(path: &Path, compression: Compression) -> Result<mcap::Writer<BufWriter<File>>, WriteError> {
    let file = File::create(path).map_err(|source| WriteError::Create { path: path.to_owned(), source })?;
    mcap::WriteOptions::new()
        .compression(compression.mcap())
        .profile("nerve")
        .library(format!("nerve-record/{} ({})", env!("CARGO_PKG_VERSION"), mcap::LIBRARY_IDENTIFIER))
        .create(BufWriter::new(file))
        .map_err(|source| WriteError::Mcap { path: path.to_owned(), source })
}

/// Writes the drop counts so far and the summary of the file at `path`, and closes it.
fn close(
    mut mcap: mcap::Writer<BufWriter<File>>,
    path: &Path,
    totals: &BTreeMap<String, ChannelTotals>,
) -> Result<(), WriteError> {
    let error = |source| WriteError::Mcap { path: path.to_owned(), source };
    let metadata = totals.iter().map(|(c, t)| (c.clone(), t.dropped.to_string())).collect();
    mcap.write_metadata(&McapMetadata { name: DROPS_METADATA.to_owned(), metadata }).map_err(error)?;
    mcap.finish().map_err(error)?;
    // Flushed and synced here, so a failing disk is an error and not a truncated file.
    let file = mcap.into_inner().into_inner().map_err(|e| error(e.into_error().into()))?;
    file.sync_all().map_err(|e| error(e.into()))
}

/// Removes a recording named `path`: the file, and its parts.
fn remove_earlier(path: &Path) -> Result<(), WriteError> {
    let parts = (0..).map(|i| crate::part_path(path, i)).take_while(|p| p.exists());
    for file in std::iter::once(path.to_owned()).filter(|p| p.exists()).chain(parts) {
        std::fs::remove_file(&file).map_err(|source| WriteError::Create { path: file, source })?;
    }
    Ok(())
}

fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

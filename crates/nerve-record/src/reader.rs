//! Reading a recording back: its channels, its metadata, and its messages in log-time order.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::ArrayRef;
use nerve_shm::codec::Parameters;
use nerve_types::{Codec, TypeName, registry_of};

use crate::error::ReadError;
use crate::payload;
use crate::{CDR_ENCODING, MESSAGE_ENCODING, ROS2_SCHEMA_ENCODING};

/// The record of `length` bytes (opcode and length prefix included) at `offset` of `bytes`,
/// its data borrowed from them.
fn record(bytes: &[u8], offset: u64, length: u64) -> Result<mcap::records::Record<'_>, mcap::McapError> {
    let range = usize::try_from(offset).ok().zip(usize::try_from(length).ok()).and_then(|(o, l)| {
        let end = o.checked_add(l)?;
        bytes.get(o..end).filter(|r| r.len() >= 9)
    });
    let record = range.ok_or(mcap::McapError::BadIndex)?;
    mcap::parse_record(record[0], &record[9..])
}

/// A recording opened for reading: one file, or the parts of a split one, mapped in memory
/// (however large, it is read in place).
pub struct Recording {
    path: PathBuf,
    parts: Vec<Part>,
}

/// One MCAP file of a recording.
struct Part {
    map: memmap2::Mmap,
    path: PathBuf,
    summary: Option<mcap::Summary>,
}

/// One recorded message.
#[derive(Debug, Clone)]
pub struct Recorded<'a> {
    /// The channel (`<node>/<output>` or `topic/<name>`).
    pub channel: &'a str,
    /// When the recorder received it: ns since the Unix epoch.
    pub log_time: u64,
    /// The sender's stamp (`CLOCK_MONOTONIC` ns of the sender's host).
    pub publish_time: u64,
    /// The payload: one Arrow IPC stream, or a CDR message on a typed channel.
    pub data: Cow<'a, [u8]>,
    /// The codec of a typed channel's message type (from the recording's own schema).
    pub cdr: Option<Arc<Codec>>,
}

impl Recorded<'_> {
    /// The array and the sender's parameters (none on a typed channel: CDR keeps none).
    ///
    /// # Errors
    /// A payload that is not nerve's Arrow IPC encoding, or not a CDR message of its type.
    pub fn decode(&self) -> Result<(ArrayRef, Parameters), ReadError> {
        if let Some(codec) = &self.cdr {
            let array = codec.decode(&self.data).map_err(|source| ReadError::Cdr {
                channel: self.channel.to_owned(),
                log_time: self.log_time,
                source,
            })?;
            return Ok((array, Parameters::new()));
        }
        payload::decode(&self.data).map_err(|why| ReadError::Payload {
            channel: self.channel.to_owned(),
            log_time: self.log_time,
            why,
        })
    }
}

impl Recording {
    /// Opens the recording at `path`: that file, or, when there is none, the parts a split
    /// recording of that name was written in (`run_0.mcap`, `run_1.mcap`, … for `run.mcap`).
    ///
    /// # Errors
    /// A file that cannot be read, or is not MCAP.
    pub fn open(path: &Path) -> Result<Self, ReadError> {
        if path.exists() {
            return Ok(Self { path: path.to_owned(), parts: vec![Part::open(path)?] });
        }
        let parts: Vec<PathBuf> = (0..).map(|i| crate::part_path(path, i)).take_while(|p| p.exists()).collect();
        if parts.is_empty() {
            // The error names the file asked for, not its first part.
            return Err(ReadError::Open { path: path.to_owned(), source: std::io::ErrorKind::NotFound.into() });
        }
        let parts = parts.iter().map(|p| Part::open(p)).collect::<Result<_, _>>()?;
        Ok(Self { path: path.to_owned(), parts })
    }

    /// The file asked for (a split recording's name, not one of its parts).
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The files it is read from: the file itself, or the parts of a split recording in order.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.parts.iter().map(|p| p.path.as_path())
    }

    /// The names of its channels, sorted.
    ///
    /// # Errors
    /// A malformed file (read linearly when it has no summary).
    pub fn channels(&self) -> Result<BTreeSet<String>, ReadError> {
        let mut channels = BTreeSet::new();
        for part in &self.parts {
            channels.extend(part.channels()?);
        }
        Ok(channels)
    }

    /// Messages per channel (from the summaries' statistics, or counted where there is none).
    ///
    /// # Errors
    /// A malformed file.
    pub fn message_counts(&self) -> Result<BTreeMap<String, u64>, ReadError> {
        let mut counts = BTreeMap::new();
        for part in &self.parts {
            for (channel, n) in part.message_counts()? {
                *counts.entry(channel).or_default() += n;
            }
        }
        Ok(counts)
    }

    /// The metadata record called `name` (e.g. [`crate::DROPS_METADATA`]), if there is one: a
    /// split recording's last part that has it (each part has the dataflow, and the drops so
    /// far).
    ///
    /// # Errors
    /// A malformed file.
    pub fn metadata(&self, name: &str) -> Result<Option<BTreeMap<String, String>>, ReadError> {
        for part in self.parts.iter().rev() {
            if let Some(found) = part.metadata(name)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// The messages of the channels `wanted`, in log-time order (messages with equal log times
    /// keep the files' order). A file with uncompressed chunks (as nerve writes them by
    /// default) is read through its indexes, each message's data borrowed from the mapped
    /// file, so a recording larger than memory replays; any other (compressed chunks, no
    /// indexes) is read linearly, its messages decompressed into memory.
    ///
    /// # Errors
    /// A malformed file, or a wanted channel whose messages are neither nerve's encoding nor
    /// CDR with a readable `ros2msg` schema.
    pub fn messages<'a>(&'a self, wanted: &'a BTreeSet<String>) -> Result<Vec<Recorded<'a>>, ReadError> {
        let mut out = Vec::new();
        for part in &self.parts {
            out.extend(part.messages(wanted)?);
        }
        out.sort_by_key(|m| m.log_time);
        Ok(out)
    }
}

impl Part {
    fn open(path: &Path) -> Result<Self, ReadError> {
        let open = |source| ReadError::Open { path: path.to_owned(), source };
        let file = File::open(path).map_err(open)?;
        // SAFETY: the map is read-only and private to this process; a recording is not written
        // while it is replayed (a file truncated meanwhile would fault, as for any mapped file).
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(open)?;
        if !map.starts_with(mcap::MAGIC) {
            return Err(ReadError::NotMcap { path: path.to_owned() });
        }
        // A recording cut short (its recorder killed) has no summary: it is then read linearly,
        // up to where it ends.
        let summary = mcap::Summary::read(&map).unwrap_or_else(|e| {
            tracing::warn!(path = %path.display(), error = %e, "the recording has no readable summary (cut short?): reading it linearly");
            None
        });
        Ok(Self { map, path: path.to_owned(), summary })
    }

    fn mcap_error(&self) -> impl Fn(mcap::McapError) -> ReadError + '_ {
        |source| ReadError::Mcap { path: self.path.clone(), source }
    }

    /// How `channel`'s messages are decoded: `None` for Arrow IPC, the codec of its type for
    /// CDR (read from the recording's own `ros2msg` schema, so no definition file is needed).
    fn codec_of(&self, channel: &mcap::Channel<'_>) -> Result<Option<Arc<Codec>>, ReadError> {
        let error = |why: String| ReadError::Schema { path: self.path.clone(), channel: channel.topic.clone(), why };
        match channel.message_encoding.as_str() {
            MESSAGE_ENCODING => Ok(None),
            CDR_ENCODING => {
                let schema = channel.schema.as_ref().ok_or_else(|| error("a CDR channel without a schema".into()))?;
                if schema.encoding != ROS2_SCHEMA_ENCODING {
                    return Err(error(format!("encoding `{}`, not `{ROS2_SCHEMA_ENCODING}`", schema.encoding)));
                }
                let name = TypeName::parse(&schema.name).map_err(|e| error(e.to_string()))?;
                let text = std::str::from_utf8(&schema.data).map_err(|e| error(format!("not UTF-8: {e}")))?;
                let registry = registry_of(&name, text).map_err(|e| error(e.to_string()))?;
                Ok(Some(Arc::new(Codec::new(&registry, &name).map_err(|e| error(e.to_string()))?)))
            }
            other => Err(ReadError::Encoding {
                path: self.path.clone(),
                channel: channel.topic.clone(),
                encoding: other.to_owned(),
            }),
        }
    }

    /// [`Recording::codec_of`] once per MCAP channel.
    fn cached_codec(
        &self,
        codecs: &mut HashMap<u16, Option<Arc<Codec>>>,
        channel: &mcap::Channel<'_>,
    ) -> Result<Option<Arc<Codec>>, ReadError> {
        if let Some(codec) = codecs.get(&channel.id) {
            return Ok(codec.clone());
        }
        let codec = self.codec_of(channel)?;
        codecs.insert(channel.id, codec.clone());
        Ok(codec)
    }

    /// The wanted messages through the summary's chunk and message indexes, borrowing their
    /// data from the map; `None` when the file lacks indexes or has compressed chunks.
    fn indexed<'a>(
        &'a self,
        wanted: &'a BTreeSet<String>,
        codecs: &mut HashMap<u16, Option<Arc<Codec>>>,
    ) -> Result<Option<Vec<Recorded<'a>>>, ReadError> {
        let Some(summary) = &self.summary else { return Ok(None) };
        let error = self.mcap_error();
        if summary.chunk_indexes.iter().any(|c| !c.compression.is_empty() || c.message_index_offsets.is_empty()) {
            return Ok(None);
        }
        let mut out = Vec::new();
        for index in &summary.chunk_indexes {
            let chunk = record(&self.map, index.chunk_start_offset, index.chunk_length).map_err(&error)?;
            let mcap::records::Record::Chunk { data: Cow::Borrowed(data), .. } = chunk else {
                return Err(error(mcap::McapError::BadIndex));
            };
            // Chunks are listed in file order; within one, messages go back to file order too.
            let mut in_chunk = Vec::new();
            for (channel, entries) in summary.read_message_indexes(&self.map, index).map_err(&error)? {
                let Some(name) = wanted.get(&channel.topic) else { continue };
                let cdr = self.cached_codec(codecs, &channel)?;
                for entry in entries {
                    let Ok(offset) = usize::try_from(entry.offset) else {
                        return Err(error(mcap::McapError::BadIndex));
                    };
                    let length =
                        data.get(offset + 1..offset + 9).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes);
                    let Some(length) = length else { return Err(error(mcap::McapError::BadIndex)) };
                    match record(data, entry.offset, length + 9).map_err(&error)? {
                        mcap::records::Record::Message { header, data } => in_chunk.push((
                            entry.offset,
                            Recorded {
                                channel: name.as_str(),
                                log_time: header.log_time,
                                publish_time: header.publish_time,
                                data,
                                cdr: cdr.clone(),
                            },
                        )),
                        _ => return Err(error(mcap::McapError::BadIndex)),
                    }
                }
            }
            in_chunk.sort_by_key(|(offset, _)| *offset);
            out.extend(in_chunk.into_iter().map(|(_, m)| m));
        }
        Ok(Some(out))
    }

    /// The messages in file order. A file with a summary must be whole; one without (cut short)
    /// yields what precedes its first unreadable record, with a warning.
    fn stream(&self) -> Result<Vec<mcap::Message<'_>>, ReadError> {
        let mut out = Vec::new();
        for message in mcap::MessageStream::new(&self.map).map_err(self.mcap_error())? {
            match message {
                Ok(m) => out.push(m),
                Err(e) if self.summary.is_none() => {
                    tracing::warn!(path = %self.path.display(), error = %e, "the recording ends early; reading what precedes");
                    break;
                }
                Err(e) => return Err(self.mcap_error()(e)),
            }
        }
        Ok(out)
    }

    fn channels(&self) -> Result<BTreeSet<String>, ReadError> {
        if let Some(summary) = &self.summary {
            return Ok(summary.channels.values().map(|c| c.topic.clone()).collect());
        }
        let mut channels = BTreeSet::new();
        for message in self.stream()? {
            channels.insert(message.channel.topic.clone());
        }
        Ok(channels)
    }

    fn message_counts(&self) -> Result<BTreeMap<String, u64>, ReadError> {
        let mut counts = BTreeMap::new();
        match self.summary.as_ref().and_then(|s| s.stats.as_ref().map(|stats| (s, stats))) {
            Some((summary, stats)) => {
                // Channels of one name but different Arrow types add up.
                for (id, n) in &stats.channel_message_counts {
                    if let Some(channel) = summary.channels.get(id) {
                        *counts.entry(channel.topic.clone()).or_default() += n;
                    }
                }
            }
            None => {
                for message in self.stream()? {
                    *counts.entry(message.channel.topic.clone()).or_default() += 1;
                }
            }
        }
        Ok(counts)
    }

    fn metadata(&self, name: &str) -> Result<Option<BTreeMap<String, String>>, ReadError> {
        if let Some(summary) = &self.summary {
            return match summary.metadata_indexes.iter().find(|i| i.name == name) {
                Some(index) => Ok(Some(mcap::read::metadata(&self.map, index).map_err(self.mcap_error())?.metadata)),
                None => Ok(None),
            };
        }
        for record in mcap::read::LinearReader::new(&self.map).map_err(self.mcap_error())? {
            if let mcap::records::Record::Metadata(m) = record.map_err(self.mcap_error())?
                && m.name == name
            {
                return Ok(Some(m.metadata));
            }
        }
        Ok(None)
    }

    /// The messages of the channels `wanted`, in file order.
    fn messages<'a>(&'a self, wanted: &'a BTreeSet<String>) -> Result<Vec<Recorded<'a>>, ReadError> {
        let mut codecs = HashMap::new();
        if let Some(summary) = &self.summary {
            for channel in summary.channels.values().filter(|c| wanted.contains(&c.topic)) {
                self.cached_codec(&mut codecs, channel)?;
            }
        }
        Ok(match self.indexed(wanted, &mut codecs)? {
            Some(indexed) => indexed,
            None => {
                let mut out = Vec::new();
                for message in self.stream()? {
                    let Some(channel) = wanted.get(&message.channel.topic) else { continue };
                    let cdr = self.cached_codec(&mut codecs, &message.channel)?;
                    out.push(Recorded {
                        channel: channel.as_str(),
                        log_time: message.log_time,
                        publish_time: message.publish_time,
                        data: message.data,
                        cdr,
                    });
                }
                out
            }
        })
    }
}

//! Reading a recording back: its channels, its metadata, and its messages in log-time order.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::ArrayRef;
use nerve_shm::codec::Parameters;

use crate::MESSAGE_ENCODING;
use crate::error::ReadError;
use crate::payload;

/// A recording opened for reading, mapped in memory (however large, it is read in place).
pub struct Recording {
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
    /// The payload: one Arrow IPC stream.
    pub data: Cow<'a, [u8]>,
}

impl Recorded<'_> {
    /// The array and the sender's parameters.
    ///
    /// # Errors
    /// A payload that is not nerve's Arrow IPC encoding.
    pub fn decode(&self) -> Result<(ArrayRef, Parameters), ReadError> {
        payload::decode(&self.data).map_err(|why| ReadError::Payload {
            channel: self.channel.to_owned(),
            log_time: self.log_time,
            why,
        })
    }
}

impl Recording {
    /// Opens the recording at `path`.
    ///
    /// # Errors
    /// A file that cannot be read, or is not MCAP.
    pub fn open(path: &Path) -> Result<Self, ReadError> {
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

    /// The file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The names of its channels, sorted.
    ///
    /// # Errors
    /// A malformed file (read linearly when it has no summary).
    pub fn channels(&self) -> Result<BTreeSet<String>, ReadError> {
        if let Some(summary) = &self.summary {
            return Ok(summary.channels.values().map(|c| c.topic.clone()).collect());
        }
        let mut channels = BTreeSet::new();
        for message in self.stream()? {
            channels.insert(message.channel.topic.clone());
        }
        Ok(channels)
    }

    /// Messages per channel (from the summary's statistics, or counted when there is none).
    ///
    /// # Errors
    /// A malformed file.
    pub fn message_counts(&self) -> Result<BTreeMap<String, u64>, ReadError> {
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

    /// The metadata record called `name` (e.g. [`crate::DROPS_METADATA`]), if there is one.
    ///
    /// # Errors
    /// A malformed file.
    pub fn metadata(&self, name: &str) -> Result<Option<BTreeMap<String, String>>, ReadError> {
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

    /// The messages of the channels `wanted`, in log-time order (messages with equal log times
    /// keep the file's order).
    ///
    /// # Errors
    /// A malformed file, or a wanted channel whose messages are not nerve's encoding.
    pub fn messages<'a>(&'a self, wanted: &'a BTreeSet<String>) -> Result<Vec<Recorded<'a>>, ReadError> {
        let mut out = Vec::new();
        for message in self.stream()? {
            let Some(channel) = wanted.get(&message.channel.topic) else { continue };
            if message.channel.message_encoding != MESSAGE_ENCODING {
                return Err(ReadError::Encoding {
                    path: self.path.clone(),
                    channel: channel.clone(),
                    encoding: message.channel.message_encoding.clone(),
                });
            }
            out.push(Recorded {
                channel: channel.as_str(),
                log_time: message.log_time,
                publish_time: message.publish_time,
                data: message.data,
            });
        }
        out.sort_by_key(|m| m.log_time);
        Ok(out)
    }
}

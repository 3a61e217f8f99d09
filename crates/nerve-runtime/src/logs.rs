//! Node output: every line a node prints and every record it logs
//! ([`nerve_message::log_record`]) is kept or dropped by the node's `min_log_level`, then goes
//! to the terminal prefixed by the node id, to the node's log file in the run's folder (rotated
//! at `max_log_size`), and to the run's [`LogTap`].

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

use nerve_message::log_record::Record;
use nerve_shm::sync::lock;
use nerve_spec::logs::{LogLevel, NodeLogs};

use crate::error::RuntimeError;

/// Where a node's line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// The node's standard output.
    Stdout,
    /// The node's standard error.
    Stderr,
    /// nerve itself, about the node (a restart).
    Nerve,
}

impl Stream {
    /// How it is written: `stdout`, `stderr`, `nerve`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stdout => "stdout",
            Self::Stderr => "stderr",
            Self::Nerve => "nerve",
        }
    }
}

/// One entry of a node's log: a record it logged, or a line it printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// The node's id.
    pub node: String,
    /// The record's level; [`LogLevel::Stdout`] for a printed line.
    pub level: LogLevel,
    /// Where it came from.
    pub stream: Stream,
    /// The record's message, or the line.
    pub message: String,
    /// The record's target.
    pub target: Option<String>,
    /// The record's fields.
    pub fields: BTreeMap<String, String>,
    /// When, in nanoseconds since the Unix epoch: the record's own time, or when the line was read.
    pub time_ns: u64,
}

impl LogEntry {
    /// A line of `node` read from `stream`: a record if it carries one, else printed text.
    #[must_use]
    pub fn read(node: &str, stream: Stream, line: &str) -> Self {
        match Record::from_line(line) {
            Some(r) => Self {
                node: node.to_owned(),
                level: r.level,
                stream,
                message: r.message,
                target: r.target,
                fields: r.fields,
                time_ns: r.time_ns,
            },
            None => Self {
                node: node.to_owned(),
                level: LogLevel::Stdout,
                stream,
                message: line.to_owned(),
                target: None,
                fields: BTreeMap::new(),
                time_ns: now_ns(),
            },
        }
    }

    /// Whether it is a record the node logged (not a line it printed).
    #[must_use]
    pub fn is_record(&self) -> bool {
        self.level != LogLevel::Stdout
    }

    /// As the log file and the terminal show it: a printed line as it was printed, a record as
    /// `LEVEL target: message key=value`.
    #[must_use]
    pub fn text(&self) -> String {
        if !self.is_record() {
            return self.message.clone();
        }
        let mut text = self.level.label().to_owned();
        if let Some(target) = &self.target {
            text.push(' ');
            text.push_str(target);
            text.push(':');
        }
        text.push(' ');
        text.push_str(&self.message);
        for (k, v) in &self.fields {
            text.push_str(&format!(" {k}={v}"));
        }
        text
    }

    /// As the nodes reading logs receive it (dora-rs's `LogMessage`): JSON with `timestamp`
    /// (RFC 3339), `level`, `node_id`, `dataflow_id`, `message`, `target`, `fields` and `stream`.
    #[must_use]
    pub fn to_json(&self, dataflow_id: &str) -> String {
        serde_json::json!({
            "timestamp": stamp(self.time_ns),
            "level": self.level.as_str(),
            "node_id": self.node,
            "dataflow_id": dataflow_id,
            "message": self.message,
            "target": self.target,
            "fields": if self.fields.is_empty() { None } else { Some(&self.fields) },
            "stream": self.stream.as_str(),
        })
        .to_string()
    }
}

fn now_ns() -> u64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    u64::try_from(since).unwrap_or(u64::MAX)
}

/// Whether a node whose log settings are `logs` keeps `entry`: `min_log_level` if set, else
/// records from `info` up and every printed line; standard error always (a crash's last words
/// must not vanish).
#[must_use]
pub fn keeps(logs: &NodeLogs, entry: &LogEntry) -> bool {
    if entry.stream != Stream::Stdout && !entry.is_record() {
        return true;
    }
    match logs.min_level {
        Some(min) => entry.level >= min,
        None => !entry.is_record() || entry.level >= LogLevel::Info,
    }
}

/// Receives every entry a node's log keeps, besides its log file: a host daemon forwards them
/// to whoever follows the dataflow from another machine, and the run publishes those some node
/// reads (`dora/logs`, `send_logs_as`, `send_stdout_as`).
#[derive(Clone)]
pub struct LogTap(Arc<EntryFn>);

type EntryFn = dyn Fn(&LogEntry) + Send + Sync;

impl LogTap {
    /// A tap calling `f` with each entry.
    pub fn new(f: impl Fn(&LogEntry) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// Both `self` and `other`, in that order.
    #[must_use]
    pub fn and(self, other: LogTap) -> Self {
        Self::new(move |entry| {
            (self.0)(entry);
            (other.0)(entry);
        })
    }
}

impl std::fmt::Debug for LogTap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LogTap")
    }
}

/// When an entry was logged, as a line of a log file starts and as dora's JSON log message
/// says it: RFC 3339 in UTC, to the millisecond (`2026-11-28T15:20:01.123Z`).
fn stamp(time_ns: u64) -> String {
    humantime::format_rfc3339_millis(UNIX_EPOCH + std::time::Duration::from_nanos(time_ns)).to_string()
}

/// A line of a log file split into when it was logged and what was logged (as the terminal
/// showed it); no time for a line that starts with none.
#[must_use]
pub fn unstamp(line: &[u8]) -> (Option<SystemTime>, &[u8]) {
    let Some(space) = line.iter().position(|b| *b == b' ') else { return (None, line) };
    let time = std::str::from_utf8(&line[..space]).ok().and_then(|t| humantime::parse_rfc3339(t).ok());
    match time {
        Some(time) => (Some(time), &line[space + 1..]),
        None => (None, line),
    }
}

/// A node's log file, rotated at its size limit: `<node>.log` the current one, `<node>.log.1`
/// the newest rotated one, up to `<node>.log.<max_files>`.
#[derive(Debug)]
struct LogFile {
    path: PathBuf,
    file: File,
    written: u64,
}

impl LogFile {
    fn write(&mut self, time_ns: u64, text: &str, logs: &NodeLogs) {
        let line = format!("{} {text}\n", stamp(time_ns));
        if let Err(e) = self.file.write_all(line.as_bytes()) {
            tracing::warn!(error = %e, path = %self.path.display(), "cannot write node log");
            return;
        }
        self.written += line.len() as u64;
        if logs.max_size.is_some_and(|max| self.written >= max)
            && let Err(e) = self.rotate(logs.max_files)
        {
            tracing::warn!(error = %e, path = %self.path.display(), "cannot rotate node log");
        }
    }

    fn rotate(&mut self, max_files: u32) -> std::io::Result<()> {
        let rotated = |n: u32| PathBuf::from(format!("{}.{n}", self.path.display()));
        match std::fs::remove_file(rotated(max_files)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        for n in (1..max_files).rev() {
            match std::fs::rename(rotated(n), rotated(n + 1)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        std::fs::rename(&self.path, rotated(1))?;
        self.file = File::create(&self.path)?;
        self.written = 0;
        Ok(())
    }
}

/// Where one node's lines go.
#[derive(Debug, Clone)]
pub struct LogSink {
    node: String,
    logs: Arc<NodeLogs>,
    file: Arc<Mutex<LogFile>>,
    echo: bool,
    tap: Option<LogTap>,
}

impl LogSink {
    /// A sink writing `<dir>/<node>.log` as `logs` says, echoing to stdout when `echo`, and
    /// handing each entry kept to `tap`.
    ///
    /// # Errors
    /// When the file cannot be created.
    pub fn create(
        dir: &Path,
        node: &str,
        logs: &NodeLogs,
        echo: bool,
        tap: Option<LogTap>,
    ) -> Result<Self, RuntimeError> {
        let path = dir.join(format!("{node}.log"));
        let file = File::create(&path).map_err(|source| RuntimeError::Logs { path: path.clone(), source })?;
        Ok(Self {
            node: node.to_owned(),
            logs: Arc::new(logs.clone()),
            file: Arc::new(Mutex::new(LogFile { path, file, written: 0 })),
            echo,
            tap,
        })
    }

    /// Writes a note of nerve's about the node (a restart).
    pub fn note(&self, text: &str) {
        self.entry(&LogEntry::read(&self.node, Stream::Nerve, text));
    }

    fn entry(&self, entry: &LogEntry) {
        if !keeps(&self.logs, entry) {
            return;
        }
        let text = entry.text();
        if self.echo {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "[{}] {text}", self.node);
        }
        if let Some(tap) = &self.tap {
            (tap.0)(entry);
        }
        lock(&self.file).write(entry.time_ns, &text, &self.logs);
    }

    /// Copies `stream`, the node's `which`, line by line into the sink on a thread of its own.
    pub fn pump(&self, stream: impl Read + Send + 'static, which: Stream) -> JoinHandle<()> {
        let sink = self.clone();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stream);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let text = String::from_utf8_lossy(&buf);
                        sink.entry(&LogEntry::read(&sink.node, which, text.trim_end_matches(['\n', '\r'])));
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(level: LogLevel) -> LogEntry {
        let line = Record {
            level,
            message: "m".to_owned(),
            target: Some("t".to_owned()),
            fields: BTreeMap::new(),
            time_ns: 0,
        }
        .to_line();
        LogEntry::read("n", Stream::Stderr, &line)
    }

    #[test]
    fn min_log_level_keeps_what_dora_keeps_and_every_line_on_stderr() {
        let printed = |stream| LogEntry::read("n", stream, "hello");
        let default = NodeLogs::default();
        assert!(keeps(&default, &printed(Stream::Stdout)) && keeps(&default, &record(LogLevel::Info)));
        assert!(!keeps(&default, &record(LogLevel::Debug)));
        let info = NodeLogs { min_level: Some(LogLevel::Info), ..NodeLogs::default() };
        assert!(!keeps(&info, &printed(Stream::Stdout)) && keeps(&info, &printed(Stream::Stderr)));
        assert!(keeps(&info, &record(LogLevel::Warn)) && !keeps(&info, &record(LogLevel::Debug)));
        let all = NodeLogs { min_level: Some(LogLevel::Stdout), ..NodeLogs::default() };
        assert!(keeps(&all, &record(LogLevel::Trace)));
    }

    #[test]
    fn a_record_reads_as_text_and_as_dora_json() {
        let entry = record(LogLevel::Warn);
        assert_eq!(entry.text(), "WARN t: m");
        let json: serde_json::Value = serde_json::from_str(&entry.to_json("run-1")).expect("json");
        assert_eq!(json["level"], "warn");
        assert_eq!(json["node_id"], "n");
        assert_eq!(json["timestamp"], "1970-01-01T00:00:00.000Z");
        assert!(json["fields"].is_null());
    }

    #[test]
    fn a_line_keeps_its_time_to_the_millisecond() {
        let time_ns = 1_795_000_000_123_456_789;
        let line = format!("{} WARN t: m\n", stamp(time_ns));
        let (time, rest) = unstamp(line.as_bytes());
        let since_epoch = time.and_then(|t| t.duration_since(UNIX_EPOCH).ok()).expect("a time");
        assert_eq!(since_epoch.as_millis(), u128::from(time_ns / 1_000_000));
        assert_eq!(rest, b"WARN t: m\n");
        assert_eq!(unstamp(b"printed text\n"), (None, &b"printed text\n"[..]));
    }

    #[test]
    fn a_log_rotates_at_its_size_and_keeps_its_newest_files() {
        let dir = std::env::temp_dir().join(format!("nerve-rotate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        // Each line is 25 bytes of time, then the text.
        let logs = NodeLogs { max_size: Some(35), max_files: 2, ..NodeLogs::default() };
        let sink = LogSink::create(&dir, "n", &logs, false, None).expect("sink");
        for line in ["first line", "second line", "third line", "fourth"] {
            sink.entry(&LogEntry::read("n", Stream::Stdout, line));
        }
        let read = |name: &str| {
            let text = std::fs::read(dir.join(name)).unwrap_or_default();
            let lines = text.split_inclusive(|b| *b == b'\n').map(|line| {
                let (time, rest) = unstamp(line);
                assert!(time.is_some(), "a line without its time");
                String::from_utf8_lossy(rest).into_owned()
            });
            lines.collect::<String>()
        };
        assert_eq!(
            (read("n.log"), read("n.log.1"), read("n.log.2")),
            ("fourth\n".into(), "third line\n".into(), "second line\n".into())
        );
        assert!(!dir.join("n.log.3").exists());
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}

//! Node output: every line goes to the terminal prefixed by the node id, and to the node's log
//! file in the run's folder.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use nerve_shm::sync::lock;

use crate::error::RuntimeError;

/// Receives every line a node writes, with the node's id, besides its log file (a host daemon
/// forwards them to whoever follows the dataflow from another machine).
#[derive(Clone)]
pub struct LogTap(Arc<LineFn>);

type LineFn = dyn Fn(&str, &str) + Send + Sync;

impl LogTap {
    /// A tap calling `f` with the node id and the line.
    pub fn new(f: impl Fn(&str, &str) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }
}

impl std::fmt::Debug for LogTap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LogTap")
    }
}

/// Where one node's lines go.
#[derive(Debug, Clone)]
pub struct LogSink {
    node: String,
    file: Arc<Mutex<File>>,
    echo: bool,
    tap: Option<LogTap>,
}

impl LogSink {
    /// A sink writing `<dir>/<node>.log`, echoing to stdout when `echo`, and handing each line
    /// to `tap`.
    ///
    /// # Errors
    /// When the file cannot be created.
    pub fn create(dir: &Path, node: &str, echo: bool, tap: Option<LogTap>) -> Result<Self, RuntimeError> {
        let path = dir.join(format!("{node}.log"));
        let file = File::create(&path).map_err(|source| RuntimeError::Logs { path, source })?;
        Ok(Self { node: node.to_owned(), file: Arc::new(Mutex::new(file)), echo, tap })
    }

    /// Writes one line.
    pub fn line(&self, line: &str) {
        if self.echo {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "[{}] {line}", self.node);
        }
        if let Some(tap) = &self.tap {
            (tap.0)(&self.node, line);
        }
        let mut f = lock(&self.file);
        if let Err(e) = writeln!(f, "{line}") {
            tracing::warn!(error = %e, "cannot write node log");
        }
    }

    /// Copies `stream` line by line into the sink on a thread of its own.
    pub fn pump(&self, stream: impl Read + Send + 'static) -> JoinHandle<()> {
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
                        sink.line(text.trim_end_matches(['\n', '\r']));
                    }
                }
            }
        })
    }
}

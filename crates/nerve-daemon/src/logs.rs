//! Node output: every line goes to the terminal prefixed by the node id, and to the node's log
//! file in the run's folder.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use crate::error::DaemonError;

/// Where one node's lines go.
#[derive(Debug, Clone)]
pub struct LogSink {
    prefix: String,
    file: Arc<Mutex<File>>,
    echo: bool,
}

impl LogSink {
    /// A sink writing `<dir>/<node>.log`, echoing to stdout when `echo`.
    ///
    /// # Errors
    /// When the file cannot be created.
    pub fn create(dir: &Path, node: &str, echo: bool) -> Result<Self, DaemonError> {
        let path = dir.join(format!("{node}.log"));
        let file = File::create(&path).map_err(|source| DaemonError::Logs { path, source })?;
        Ok(Self { prefix: format!("[{node}] "), file: Arc::new(Mutex::new(file)), echo })
    }

    /// Writes one line.
    pub fn line(&self, line: &str) {
        if self.echo {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}{line}", self.prefix);
        }
        let mut f = self.file.lock().unwrap_or_else(PoisonError::into_inner);
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

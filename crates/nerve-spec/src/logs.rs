//! What a node's log keeps and where it goes (`min_log_level`, `max_log_size`,
//! `max_rotated_files`, `send_logs_as`, `send_stdout_as`, the `dora/logs` input), with the
//! meaning dora-rs gives these keys.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::spec::{InputSource, NodeSpec, QueuePolicy};

/// How much a log entry matters, from the least to the most: [`LogLevel::Stdout`] is a line the
/// node printed (not a log record), below even `trace`, as in dora-rs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// A line the node printed.
    Stdout,
    /// `trace`.
    Trace,
    /// `debug`.
    Debug,
    /// `info`.
    Info,
    /// `warn` (also read from `warning`).
    #[serde(alias = "warning")]
    Warn,
    /// `error`.
    Error,
}

impl LogLevel {
    /// Every level, the least first.
    pub const ALL: [LogLevel; 6] = [Self::Stdout, Self::Trace, Self::Debug, Self::Info, Self::Warn, Self::Error];

    /// How it is written: `stdout`, `trace`, `debug`, `info`, `warn`, `error`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stdout => "stdout",
            Self::Trace => "trace",
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Warn => "warn",
            Self::Error => "error",
        }
    }

    /// How a node's log file writes a record of this level, as the first word of its line:
    /// `ERROR`, `WARN`, `INFO`, `DEBUG`, `TRACE` (and `STDOUT`, which no record has).
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::Stdout => "STDOUT",
            Self::Trace => "TRACE",
            Self::Debug => "DEBUG",
            Self::Info => "INFO",
            Self::Warn => "WARN",
            Self::Error => "ERROR",
        }
    }

    /// The level of the record a line of a node's log file holds, read from its first word
    /// ([`LogLevel::label`]); `None` for a line the node printed.
    #[must_use]
    pub fn of_line(line: &[u8]) -> Option<Self> {
        let word = line.split(|b| *b == b' ').next().unwrap_or_default();
        Self::ALL.into_iter().filter(|l| *l != Self::Stdout).find(|l| l.label().as_bytes() == word)
    }

    /// The level written `text` (any case; `warning` is `warn`).
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.to_ascii_lowercase();
        let text = if text == "warning" { "warn" } else { text.as_str() };
        Self::ALL.into_iter().find(|l| l.as_str() == text)
    }
}

impl std::fmt::Display for LogLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How many rotated files of a node's log are kept when `max_rotated_files` is not given
/// (dora-rs's default).
pub const DEFAULT_MAX_ROTATED_FILES: u32 = 5;

/// A node's log settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeLogs {
    /// `min_log_level`: entries below it are dropped before the log file, the terminal and
    /// every log input. Lines on standard error are kept whatever it says (a crash's last
    /// words must not vanish). `None`: everything is kept.
    pub min_level: Option<LogLevel>,
    /// `max_log_size`, in bytes: the log file is rotated once it grows past it.
    pub max_size: Option<u64>,
    /// `max_rotated_files`: how many rotated files are kept (`<node>.log.1` the newest).
    pub max_files: u32,
    /// `send_logs_as`: the output that carries the node's log records (not its printed lines)
    /// as JSON text, one per message. Its readers drop their oldest entries when full.
    pub send_logs_as: Option<String>,
    /// `send_stdout_as`: the output that carries every line the node prints, one per message.
    pub send_stdout_as: Option<String>,
}

impl Default for NodeLogs {
    fn default() -> Self {
        Self {
            min_level: None,
            max_size: None,
            max_files: DEFAULT_MAX_ROTATED_FILES,
            send_logs_as: None,
            send_stdout_as: None,
        }
    }
}

impl NodeLogs {
    /// Whether `output` is one of the node's outputs that nerve writes from its log.
    #[must_use]
    pub fn carries(&self, output: &str) -> bool {
        self.send_logs_as.as_deref() == Some(output) || self.send_stdout_as.as_deref() == Some(output)
    }
}

/// The inputs reading an output that carries a node's log drop their oldest entries when full,
/// as `dora/logs` inputs do: a node's log never waits for its readers.
pub(crate) fn settle_log_readers(nodes: &mut [NodeSpec]) {
    let carried: HashSet<(String, String)> = nodes
        .iter()
        .flat_map(|n| {
            [&n.logs.send_logs_as, &n.logs.send_stdout_as].into_iter().flatten().map(|o| (n.id.clone(), o.clone()))
        })
        .collect();
    for input in nodes.iter_mut().flat_map(|n| n.inputs.iter_mut()) {
        if let InputSource::Output { node, output } = &input.source
            && carried.contains(&(node.clone(), output.clone()))
        {
            input.policy = QueuePolicy::DropOldest;
        }
    }
}

/// A size written `1048576`, `"512"`, `"1KB"`, `"50MB"`, `"1GB"`, `"4KiB"` (KB, MB, GB are powers
/// of 1000 and KiB, MiB, GiB of 1024, as dora-rs reads them); the error says what was expected.
///
/// # Errors
/// A text that is not such a size, or zero.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed.find(|c: char| !c.is_ascii_digit()).unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let expected = || format!("expected a size like `1048576`, `\"1KB\"` or `\"50MB\"`, found `{text}`");
    let number: u64 = number.parse().map_err(|_| expected())?;
    let scale: u64 = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "KB" | "K" => 1_000,
        "MB" | "M" => 1_000_000,
        "GB" | "G" => 1_000_000_000,
        "KIB" => 1 << 10,
        "MIB" => 1 << 20,
        "GIB" => 1 << 30,
        _ => return Err(expected()),
    };
    match number.checked_mul(scale) {
        Some(0) => Err(format!("a log cannot rotate at 0 bytes, found `{text}`")),
        Some(bytes) => Ok(bytes),
        None => Err(format!("`{text}` is too large")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_order_from_printed_lines_to_errors() {
        assert!(
            LogLevel::Stdout < LogLevel::Trace && LogLevel::Info < LogLevel::Warn && LogLevel::Warn < LogLevel::Error
        );
        assert_eq!(LogLevel::parse("WARNING"), Some(LogLevel::Warn));
        assert_eq!(LogLevel::parse("stdout"), Some(LogLevel::Stdout));
        assert_eq!(LogLevel::parse("loud"), None);
        assert_eq!(LogLevel::of_line(b"WARN t: hot"), Some(LogLevel::Warn));
        assert_eq!(LogLevel::of_line(b"WARNING is printed text"), None);
        assert_eq!(LogLevel::of_line(b"STDOUT is printed text"), None);
    }

    #[test]
    fn sizes_read_as_dora_reads_them() {
        assert_eq!(parse_size("1KB"), Ok(1000));
        assert_eq!(parse_size("50MB"), Ok(50_000_000));
        assert_eq!(parse_size("4 KiB"), Ok(4096));
        assert_eq!(parse_size("512"), Ok(512));
        assert!(parse_size("0").is_err());
        assert!(parse_size("1XB").expect_err("no unit XB").contains("`1XB`"));
        assert!(parse_size("99999999999999999999GB").is_err());
    }
}

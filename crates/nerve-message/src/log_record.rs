//! A node's log records, from the node to the runtime that started it, and from the runtime to
//! the nodes that read logs.
//!
//! Under `nerve run` ([`crate::env::LOG_RECORDS`] set), a node writes each record it logs as
//! one line of its standard error: [`MARK`], then the record as JSON. The runtime reads its
//! node's standard error anyway, so a record keeps its place among the lines around it; a line
//! without the mark is text the node printed. The runtime then publishes the entries some node
//! reads (`dora/logs`, `send_logs_as`, `send_stdout_as`) on the run's topics named here.

use std::collections::BTreeMap;

use nerve_spec::logs::LogLevel;
use serde::{Deserialize, Serialize};

/// What starts a record's line: ASCII's record separator, which no text a node prints starts
/// with by chance.
pub const MARK: char = '\u{1e}';

/// One record a node logged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Its level (never [`LogLevel::Stdout`], which is for printed lines).
    pub level: LogLevel,
    /// What happened.
    pub message: String,
    /// Where in the code: a Rust module path, a Python logger's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Structured context, as text.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, String>,
    /// When, in nanoseconds since the Unix epoch.
    pub time_ns: u64,
}

impl Record {
    /// The line that carries it (without the newline).
    #[must_use]
    pub fn to_line(&self) -> String {
        // A record is plain data: serializing it cannot fail.
        format!("{MARK}{}", serde_json::to_string(self).unwrap_or_default())
    }

    /// The record a line carries; `None` for a line the node printed (or a record too broken
    /// to read, which then stays as text the node printed).
    #[must_use]
    pub fn from_line(line: &str) -> Option<Self> {
        serde_json::from_str(line.strip_prefix(MARK)?).ok()
    }
}

/// The topic (in the run's scope) that feeds input `input` of node `reader` its `dora/logs`
/// entries: one per input, since each has its own filter and never sees its own node.
#[must_use]
pub fn input_feed(reader: &str, input: &str) -> String {
    format!("nerve/logs/input/{reader}/{input}")
}

/// The topic (in the run's scope) that carries output `output` of node `node` when nerve writes
/// it from the node's log (`send_logs_as`, `send_stdout_as`); every reader of the output reads it.
#[must_use]
pub fn output_feed(node: &str, output: &str) -> String {
    format!("nerve/logs/output/{node}/{output}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_survives_its_line_and_printed_text_is_no_record() {
        let record = Record {
            level: LogLevel::Warn,
            message: "hot: {\"t\": 31}\nsecond line".to_owned(),
            target: Some("sensor".to_owned()),
            fields: BTreeMap::from([("t".to_owned(), "31".to_owned())]),
            time_ns: 1_700_000_000_123_456_789,
        };
        let line = record.to_line();
        assert!(!line.contains('\n'), "a record is one line: {line:?}");
        assert_eq!(Record::from_line(&line), Some(record));
        assert_eq!(Record::from_line("{\"level\":\"warn\",\"message\":\"x\",\"time_ns\":1}"), None);
        assert_eq!(Record::from_line("\u{1e}not json"), None);
    }
}

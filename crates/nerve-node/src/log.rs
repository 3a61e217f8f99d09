//! What [`crate::Node::log`] does with a record: under `nerve run`, a record line on standard
//! error for the runtime ([`nerve_message::log_record`]), which filters, files and forwards it;
//! elsewhere, a `tracing` event.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use nerve_message::env;
use nerve_message::log_record::Record;
use nerve_spec::logs::LogLevel;

use crate::node::LOG_TARGET;

/// Whether the runtime that started this process reads its records.
fn to_runtime() -> bool {
    static RECORDS: OnceLock<bool> = OnceLock::new();
    *RECORDS.get_or_init(|| std::env::var_os(env::LOG_RECORDS).is_some_and(|v| v == "1"))
}

/// The level of a `tracing` level.
#[must_use]
pub(crate) fn level_of(level: tracing::Level) -> LogLevel {
    match level {
        tracing::Level::ERROR => LogLevel::Error,
        tracing::Level::WARN => LogLevel::Warn,
        tracing::Level::INFO => LogLevel::Info,
        tracing::Level::DEBUG => LogLevel::Debug,
        tracing::Level::TRACE => LogLevel::Trace,
    }
}

/// Logs one record of node `node`.
pub(crate) fn emit(
    node: &str,
    level: tracing::Level,
    message: &str,
    target: Option<&str>,
    fields: &BTreeMap<String, String>,
) {
    if to_runtime() {
        let time_ns = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let record = Record {
            level: level_of(level),
            message: message.to_owned(),
            target: target.map(str::to_owned),
            fields: fields.clone(),
            time_ns: u64::try_from(time_ns).unwrap_or(u64::MAX),
        };
        // One write of one line, so that lines of other threads never cut into it.
        let line = format!("{}\n", record.to_line());
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
        return;
    }
    if !tracing::dispatcher::has_been_set() {
        if level <= tracing::Level::INFO {
            let target = target.map(|t| format!(" {t}:")).unwrap_or_default();
            let fields: String = fields.iter().map(|(k, v)| format!(" {k}={v}")).collect();
            eprintln!("{level:>5}{target} {message}{fields} node={node}");
        }
        return;
    }
    let target = target.unwrap_or_default();
    // `tracing`'s macros take the level and the target as constants.
    macro_rules! event {
        ($level:expr) => {
            if fields.is_empty() {
                tracing::event!(target: LOG_TARGET, $level, node = %node, target, "{message}")
            } else {
                tracing::event!(target: LOG_TARGET, $level, node = %node, target, ?fields, "{message}")
            }
        };
    }
    match level {
        tracing::Level::ERROR => event!(tracing::Level::ERROR),
        tracing::Level::WARN => event!(tracing::Level::WARN),
        tracing::Level::INFO => event!(tracing::Level::INFO),
        tracing::Level::DEBUG => event!(tracing::Level::DEBUG),
        tracing::Level::TRACE => event!(tracing::Level::TRACE),
    }
}

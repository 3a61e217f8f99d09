//! The keys of a node's log (`min_log_level`, `max_log_size`, `max_rotated_files`,
//! `send_logs_as`, `send_stdout_as`) and the `dora/logs` input.

use crate::fields::{shown, string_field};
use crate::logs::{self, LogLevel};
use crate::parse::check_id;
use crate::spec::InputSource;
use crate::tree::{Node, Problems, ScalarKind};

pub(crate) fn parse_log_level(p: &mut Problems, value: &Node, field: &str) -> Option<LogLevel> {
    const LEVELS: &str = "stdout, trace, debug, info, warn or error";
    match value.text() {
        Some(text) => LogLevel::parse(text).or_else(|| {
            p.push(value.mark, field, format!("unknown log level `{text}` (expected {LEVELS})"));
            None
        }),
        None => {
            p.push(value.mark, field, format!("expected a log level ({LEVELS}), found {}", value.describe()));
            None
        }
    }
}

pub(crate) fn parse_log_size(p: &mut Problems, value: &Node, field: &str) -> Option<u64> {
    let parsed = match value.as_scalar() {
        Some(s) if matches!(s.kind, ScalarKind::Int(_) | ScalarKind::Str) => logs::parse_size(&s.text),
        _ => Err(format!("expected a size like `1048576`, `\"1KB\"` or `\"50MB\"`, found {}", value.describe())),
    };
    parsed.map_err(|message| p.push(value.mark, field, message)).ok()
}

pub(crate) fn parse_rotated_files(p: &mut Problems, value: &Node, field: &str) -> Option<u32> {
    match value.as_scalar().map(|s| s.kind) {
        Some(ScalarKind::Int(n)) if n >= 1 => u32::try_from(n).ok().or_else(|| {
            p.push(value.mark, field, format!("max_rotated_files must be at most {}, found {n}", u32::MAX));
            None
        }),
        _ => {
            p.push(value.mark, field, format!("max_rotated_files must be a positive integer, found {}", shown(value)));
            None
        }
    }
}

/// `send_logs_as: OUTPUT` and `send_stdout_as: OUTPUT` name one of the node's outputs, as in
/// dora-rs: readers connect to it like to any output.
pub(crate) fn parse_log_output(p: &mut Problems, value: &Node, field: &str, outputs: &[String]) -> Option<String> {
    let output = string_field(p, value, field)?;
    if outputs.contains(&output) {
        return Some(output);
    }
    p.push(
        value.mark,
        field,
        format!("`{output}` is not one of the node's outputs: add it to `outputs:` so that readers can connect to it"),
    );
    None
}

/// `""`, `/LEVEL` or `/LEVEL/NODE`, after `dora/logs`.
pub(crate) fn parse_logs_source(rest: &str, whole: &str) -> Result<InputSource, String> {
    let mut parts = rest.strip_prefix('/').map(|r| r.split('/'));
    let level = match parts.as_mut().and_then(Iterator::next) {
        None => LogLevel::Stdout,
        Some(text) => LogLevel::parse(text).ok_or_else(|| {
            format!(
                "bad log source `{whole}`: unknown level `{text}` (expected stdout, trace, debug, info, warn or error)"
            )
        })?,
    };
    let node = parts.as_mut().and_then(Iterator::next).map(str::to_owned);
    if let Some(node) = &node
        && let Err(why) = check_id(node)
    {
        return Err(format!("bad log source `{whole}`: {why}"));
    }
    if parts.as_mut().and_then(Iterator::next).is_some() {
        return Err(format!(
            "bad log source `{whole}`: expected `dora/logs`, `dora/logs/LEVEL` or `dora/logs/LEVEL/NODE`"
        ));
    }
    Ok(InputSource::Logs { level, node })
}

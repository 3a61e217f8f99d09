//! Reading the fields of the marked YAML tree: each helper reports what is wrong where it is,
//! and the parsers of nodes, their processes and their parameters share them.

use crate::tree::{Node, Problems, ScalarKind, Value};

fn expected_one_of(keys: &[&str]) -> String {
    keys.join(", ")
}

pub(crate) fn unknown_key(p: &mut Problems, key: &Node, field: &str, keys: &[&str]) {
    let written = key_str(key);
    let hint = nearest(written, keys).map(|k| format!("did you mean `{k}`? ")).unwrap_or_default();
    p.push(key.mark, field, format!("unknown key `{written}` ({hint}expected one of: {})", expected_one_of(keys)));
}

/// The known key closest to `written`, if one is close enough to be a typo of it: a few
/// letters wrong, missing, extra or swapped.
fn nearest<'a>(written: &str, keys: &[&'a str]) -> Option<&'a str> {
    let tolerated = (written.chars().count() / 3).max(1);
    keys.iter()
        .map(|k| (strsim::osa_distance(written, k), *k))
        .filter(|&(distance, _)| distance <= tolerated)
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, k)| k)
}

/// A value as a message shows what was found: its text in backquotes, or what it is ("a list").
pub(crate) fn shown(value: &Node) -> String {
    value.text().map_or_else(|| value.describe().to_owned(), |t| format!("`{t}`"))
}

pub(crate) fn key_str(key: &Node) -> &str {
    key.as_scalar().map_or("", |s| s.text.as_str())
}

pub(crate) fn join_field(parent: &str, key: &str) -> String {
    if parent.is_empty() { key.to_owned() } else { format!("{parent}.{key}") }
}

/// A string field: any non-null scalar, as written.
pub(crate) fn string_field(p: &mut Problems, value: &Node, field: &str) -> Option<String> {
    match value.text() {
        Some(t) => Some(t.to_owned()),
        None => {
            p.push(value.mark, field, format!("expected a string, found {}", value.describe()));
            None
        }
    }
}

/// The entries of a mapping; `None` for null (not set) and, reporting `expected`, for anything
/// else.
pub(crate) fn mapping<'a>(
    p: &mut Problems,
    value: &'a Node,
    field: &str,
    expected: &str,
) -> Option<&'a [(Node, Node)]> {
    match &value.value {
        _ if value.is_null() => None,
        Value::Map(entries) => Some(entries),
        _ => {
            p.push(value.mark, field, format!("expected {expected}, found {}", value.describe()));
            None
        }
    }
}

/// A boolean field; anything else is reported, and read as `false`.
pub(crate) fn boolean(p: &mut Problems, value: &Node, field: &str) -> bool {
    match value.as_scalar().map(|s| s.kind) {
        Some(ScalarKind::Bool(b)) => b,
        _ => {
            p.push(value.mark, field, format!("expected true or false, found {}", value.describe()));
            false
        }
    }
}

/// Like [`string_field`], but null means "not set".
pub(crate) fn optional_string(p: &mut Problems, value: &Node, field: &str) -> Option<String> {
    if value.is_null() { None } else { string_field(p, value, field) }
}

//! dora-rs's older `custom:` form of a node: its program's keys in a mapping of their own,
//! `source` for `path` and `envs` for `env`. nerve reads it as the same keys on the node.

use crate::fields::{join_field, key_str, mapping, unknown_key};
use crate::tree::{Node, Problems, Value};

const CUSTOM_KEYS: &[&str] = &["source", "args", "envs", "build", "inputs", "outputs", "send_stdout_as"];

/// The node's entries with `custom:`'s moved onto the node; `None` when it has no `custom:`.
pub(crate) fn flatten(p: &mut Problems, entries: &[(Node, Node)], field: &str) -> Option<Vec<(Node, Node)>> {
    let (key, value) = entries.iter().find(|(k, _)| key_str(k) == "custom")?;
    let cfield = join_field(field, "custom");
    let mut flat: Vec<(Node, Node)> = entries.iter().filter(|(k, _)| key_str(k) != "custom").cloned().collect();
    let Some(inner) = mapping(p, value, &cfield, "a mapping with `source:` (the program)") else {
        return Some(flat);
    };
    if !inner.iter().any(|(k, _)| key_str(k) == "source") {
        p.push(key.mark, &cfield, "missing `source:`: the program the node runs");
    }
    for (k, v) in inner {
        let written = key_str(k);
        let kfield = join_field(&cfield, written);
        if !CUSTOM_KEYS.contains(&written) {
            unknown_key(p, k, &kfield, CUSTOM_KEYS);
            continue;
        }
        let name = match written {
            "source" => "path",
            "envs" => "env",
            other => other,
        };
        if flat.iter().any(|(fk, _)| key_str(fk) == name) {
            p.push(k.mark, kfield, format!("`{name}` is set both in `custom:` and on the node: keep one"));
            continue;
        }
        let mut renamed = k.clone();
        if let Value::Scalar(s) = &mut renamed.value {
            name.clone_into(&mut s.text);
        }
        flat.push((renamed, v.clone()));
    }
    Some(flat)
}

//! A node's `params:`: a mapping of keys to typed values, or the name of a YAML file holding one.

use std::collections::BTreeMap;
use std::path::Path;

use crate::fields::{join_field, key_str};
use crate::param::{ParamValue, check_key, from_yaml};
use crate::tree::{self, Node, Problems, Value};

const EXPECTED: &str = "a mapping of parameter keys to values (`{speed: 1.5}`), or the name of a YAML file holding one";

/// Parses `params:`; a file is read relative to `base_dir`, and a problem inside it is reported
/// at the `params:` line with the file's own line and column.
pub(crate) fn parse_params(
    p: &mut Problems,
    value: &Node,
    field: &str,
    base_dir: &Path,
) -> BTreeMap<String, ParamValue> {
    let mut params = BTreeMap::new();
    match &value.value {
        _ if value.is_null() => {}
        Value::Map(entries) => walk(p, entries, "", field, &mut params),
        Value::Scalar(s) => {
            let file = base_dir.join(&s.text);
            let text = match std::fs::read_to_string(&file) {
                Ok(text) => text,
                Err(e) => {
                    p.push(value.mark, field, format!("cannot read the parameters file {}: {e}", file.display()));
                    return params;
                }
            };
            let mut inner = Problems::default();
            match tree::parse(&text) {
                Ok(Some(root)) => match &root.value {
                    Value::Map(entries) => walk(&mut inner, entries, "", "", &mut params),
                    _ => inner.push(root.mark, "(document)", format!("expected {EXPECTED}, found {}", root.describe())),
                },
                // An empty file declares no parameters.
                Ok(None) => {}
                Err(problems) => inner.extend(problems),
            }
            for problem in inner.into_sorted() {
                p.push(value.mark, field, format!("{}:{problem}", file.display()));
            }
        }
        Value::Seq(_) => p.push(value.mark, field, format!("expected {EXPECTED}, found a list")),
    }
    params
}

/// Adds the parameters of a mapping; a nested mapping groups keys (`pid: {kp: 1}` is `pid.kp`).
fn walk(
    p: &mut Problems,
    entries: &[(Node, Node)],
    prefix: &str,
    field: &str,
    params: &mut BTreeMap<String, ParamValue>,
) {
    for (key, value) in entries {
        let name = key_str(key);
        let full = if prefix.is_empty() { name.to_owned() } else { format!("{prefix}.{name}") };
        let kfield = join_field(field, name);
        if let Err(message) = check_key(&full) {
            p.push(key.mark, &kfield, message.to_string());
            continue;
        }
        if let Value::Map(inner) = &value.value {
            walk(p, inner, &full, &kfield, params);
            continue;
        }
        match from_yaml(value) {
            Ok(_) if params.contains_key(&full) => {
                p.push(key.mark, &kfield, format!("parameter `{full}` is declared twice"));
            }
            Ok(v) => {
                params.insert(full, v);
            }
            Err(message) => p.push(value.mark, &kfield, message.to_string()),
        }
    }
}

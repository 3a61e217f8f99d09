//! Types declared on ports (`output_types:`, `input_types:`) and the dataflow's `types:`
//! folders: every declared type must exist, and both ends of an edge must agree.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use nerve_types::{PortKind, PortType, Registry};

use crate::fields::{join_field, key_str, mapping, string_field};
use crate::parse::ParsedNode;
use crate::spec::InputSource;
use crate::tree::{Mark, Node, Problems, Value};

/// One `PORT: TYPE` entry of a node's `output_types:` or `input_types:`.
#[derive(Debug)]
pub(crate) struct PortDecl {
    pub(crate) port: String,
    pub(crate) output: bool,
    pub(crate) text: String,
    pub(crate) mark: Mark,
    pub(crate) field: String,
}

/// `output_types:` (`output` true) or `input_types:`: a mapping of port ids to type names.
pub(crate) fn parse_port_types(p: &mut Problems, value: &Node, field: &str, output: bool) -> Vec<PortDecl> {
    let Some(entries) = mapping(p, value, field, "a mapping of port ids to type names") else {
        return Vec::new();
    };
    entries
        .iter()
        .filter_map(|(key, v)| {
            let port = key_str(key).to_owned();
            let field = join_field(field, &port);
            let text = string_field(p, v, &field)?;
            Some(PortDecl { port, output, text, mark: v.mark, field })
        })
        .collect()
}

/// `types:`: folders of interface packages, relative to the dataflow's folder.
pub(crate) fn parse_type_folders(p: &mut Problems, value: &Node, base_dir: &Path) -> Vec<PathBuf> {
    let items = match &value.value {
        _ if value.is_null() => return Vec::new(),
        Value::Seq(items) => items.iter().collect::<Vec<_>>(),
        Value::Scalar(_) => vec![value],
        Value::Map(_) => {
            p.push(value.mark, "types", "expected a list of folders of message definitions, found a mapping");
            return Vec::new();
        }
    };
    let mut folders = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let field = format!("types[{i}]");
        let Some(dir) = string_field(p, item, &field) else { continue };
        let folder = base_dir.join(&dir);
        if folder.is_dir() {
            folders.push(folder);
        } else {
            p.push(item.mark, field, format!("`{dir}` is not a folder (looked for {})", folder.display()));
        }
    }
    folders
}

/// Checks every declared type, then every edge whose two ends declare one.
pub(crate) fn check(nodes: &[ParsedNode], folders: &[PathBuf], p: &mut Problems) {
    let registry = Registry::new(folders);
    let mut declared: HashMap<(&str, &str, bool), (PortType, &PortDecl)> = HashMap::new();
    for node in nodes {
        for decl in &node.port_types {
            let exists = if decl.output {
                node.spec.outputs.contains(&decl.port)
            } else {
                node.spec.inputs.iter().any(|i| i.id == decl.port)
            };
            if !exists {
                let (kind, list) = if decl.output { ("outputs", "output_types") } else { ("inputs", "input_types") };
                p.push(
                    decl.mark,
                    &decl.field,
                    format!("`{list}` names `{}`, which is not one of the node's {kind}", decl.port),
                );
                continue;
            }
            let ty = match PortType::parse(&decl.text) {
                Ok(ty) => ty,
                Err(e) => {
                    p.push(decl.mark, &decl.field, e.to_string());
                    continue;
                }
            };
            if let PortKind::Message(name) = &ty.kind
                && let Err(e) = registry.resolve(name)
            {
                p.push(decl.mark, &decl.field, e.to_string());
                continue;
            }
            declared.insert((node.spec.id.as_str(), decl.port.as_str(), decl.output), (ty, decl));
        }
    }
    for reader in nodes {
        for input in &reader.spec.inputs {
            let InputSource::Output { node, output } = &input.source else { continue };
            let (Some((sent, out_decl)), Some((taken, in_decl))) = (
                declared.get(&(node.as_str(), output.as_str(), true)),
                declared.get(&(reader.spec.id.as_str(), input.id.as_str(), false)),
            ) else {
                continue;
            };
            if !taken.accepts(sent) {
                p.push(
                    in_decl.mark,
                    &in_decl.field,
                    format!(
                        "type mismatch: node `{}` reads `{node}/{output}` as `{taken}`, but node `{node}` declares \
                         it `{sent}` (line {})",
                        reader.spec.id, out_decl.mark.line
                    ),
                );
            }
        }
    }
}

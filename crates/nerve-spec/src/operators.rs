//! dora-rs operators (`operator:`, `operators:`): Python classes that nerve's operator host
//! (`python -m nerve.operators`) runs in one process per node.
//!
//! The node's ports are its operators': with one `operator:` they keep their ids; with a list of
//! `operators:` each is `<operator>/<port>`, so other nodes read `node/<operator>/<output>` as
//! in dora-rs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::fields::{join_field, key_str, mapping, string_field, unknown_key};
use crate::parse::{InputPlace, check_id, parse_inputs, parse_outputs};
use crate::paths;
use crate::spec::{InputSource, InputSpec, NodePath, NodeSpec};
use crate::tree::{Mark, Node, Problems, Value};

const OPERATOR_KEYS: &[&str] =
    &["id", "name", "description", "python", "shared-library", "inputs", "outputs", "build", "send_stdout_as"];

/// One operator of a node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperatorSpec {
    /// Its id: what prefixes its ports in a list of `operators:`; `op` for a lone `operator:`.
    pub id: String,
    /// Its code.
    pub source: OperatorSource,
    /// What its ports' ids start with on the node: `<id>/` in a list of `operators:`, nothing
    /// for a lone `operator:`.
    pub prefix: String,
}

/// An operator's code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OperatorSource {
    /// `python:`: the Python file defining its `Operator` class, absolute.
    Python(PathBuf),
    /// `shared-library:`: the library implementing dora-rs's C operator API, absolute (`lib` and
    /// `.so` added when the path has no extension, as dora-rs does).
    SharedLibrary(PathBuf),
}

impl OperatorSource {
    /// The operator's file.
    #[must_use]
    pub fn file(&self) -> &Path {
        match self {
            Self::Python(file) | Self::SharedLibrary(file) => file,
        }
    }
}

/// What nerve's operator host needs to run a node's operators, given to it as JSON in
/// [`HOST_PLAN_VAR`]: the resolved operators, wherever the node came from (a module's folder
/// included), and which of the node's inputs it feeds itself.
#[derive(Debug, Serialize)]
pub struct HostPlan<'a> {
    /// The node's operators, in the dataflow's order.
    pub operators: &'a [OperatorSpec],
    /// The node's inputs read from its own outputs (input id → output id), handed over inside
    /// the process.
    pub in_process: BTreeMap<&'a str, &'a str>,
}

/// The environment variable holding a node's [`HostPlan`].
pub const HOST_PLAN_VAR: &str = "NERVE_OPERATORS";

impl<'a> HostPlan<'a> {
    /// The plan of `node`, if it is made of operators.
    #[must_use]
    pub fn of(node: &'a NodeSpec) -> Option<Self> {
        let NodePath::Operators(operators) = &node.path else { return None };
        let in_process = node
            .inputs
            .iter()
            .filter(|input| node.in_process(input))
            .filter_map(|input| match &input.source {
                InputSource::Output { output, .. } => Some((input.id.as_str(), output.as_str())),
                _ => None,
            })
            .collect();
        Some(Self { operators, in_process })
    }
}

/// A node's operators, and the ports and build they give the node.
pub(crate) struct Parsed {
    pub(crate) operators: Vec<OperatorSpec>,
    pub(crate) inputs: Vec<InputSpec>,
    pub(crate) places: Vec<InputPlace>,
    pub(crate) outputs: Vec<String>,
    pub(crate) output_marks: Vec<Mark>,
    pub(crate) build: Vec<String>,
}

/// `operator:` (`single`) or `operators:` of a node, under `field`.
pub(crate) fn parse<'a>(
    p: &mut Problems,
    value: &'a Node,
    field: &str,
    single: bool,
    base_dir: &Path,
    fetched: bool,
    stdout_as: &mut Option<&'a Node>,
) -> Parsed {
    let mut parsed = Parsed {
        operators: Vec::new(),
        inputs: Vec::new(),
        places: Vec::new(),
        outputs: Vec::new(),
        output_marks: Vec::new(),
        build: Vec::new(),
    };
    let items: Vec<(String, &Node)> = match (&value.value, single) {
        (Value::Map(_), true) => vec![(field.to_owned(), value)],
        (Value::Seq(items), false) if !items.is_empty() => {
            items.iter().enumerate().map(|(i, item)| (format!("{field}[{i}]"), item)).collect()
        }
        _ => {
            let expected =
                if single { "a mapping with `python:`" } else { "a list of operators, each with `id` and `python`" };
            p.push(value.mark, field, format!("expected {expected}, found {}", value.describe()));
            return parsed;
        }
    };
    for (ofield, item) in items {
        let Some(entries) = mapping(p, item, &ofield, "an operator mapping with `python:`") else { continue };
        let id = match entries.iter().find(|(k, _)| key_str(k) == "id") {
            Some((_, v)) => string_field(p, v, &join_field(&ofield, "id")),
            None if single => Some("op".to_owned()),
            None => {
                p.push(item.mark, &ofield, "missing required key `id`: each of a node's `operators` has one");
                None
            }
        };
        let Some(id) = id else { continue };
        if let Err(e) = check_id(&id) {
            p.push(item.mark, join_field(&ofield, "id"), e.to_string());
            continue;
        }
        if parsed.operators.iter().any(|o| o.id == id) {
            p.push(item.mark, join_field(&ofield, "id"), format!("operator id `{id}` is used twice in this node"));
            continue;
        }
        let port = |local: &str| if single { local.to_owned() } else { format!("{id}/{local}") };
        let mut sources = Vec::new();
        let mut has_build = fetched;
        for (key, v) in entries {
            let k = key_str(key);
            let kfield = join_field(&ofield, k);
            match k {
                "id" | "name" | "description" => {}
                "python" => {
                    // dora-rs also takes `{source: FILE, conda_env: ENV}`.
                    let source = match &v.value {
                        Value::Map(inner) => {
                            if let Some((conda, _)) = inner.iter().find(|(k, _)| key_str(k) == "conda_env") {
                                p.push(
                                    conda.mark,
                                    join_field(&kfield, "conda_env"),
                                    "`conda_env` is not supported by nerve: run nerve in that environment instead",
                                );
                            }
                            inner.iter().find(|(k, _)| key_str(k) == "source").map(|(_, s)| s)
                        }
                        _ => Some(v),
                    };
                    sources.extend(source.and_then(|s| string_field(p, s, &kfield)).map(|s| (true, s, v.mark, kfield)));
                }
                "shared-library" => sources.extend(string_field(p, v, &kfield).map(|s| (false, s, v.mark, kfield))),
                "inputs" => {
                    let (inputs, places) = parse_inputs(p, v, &kfield);
                    parsed.inputs.extend(inputs.into_iter().map(|i| InputSpec { id: port(&i.id), ..i }));
                    parsed.places.extend(places);
                }
                "outputs" => {
                    let (outputs, _topics, marks) = parse_outputs(p, v, &kfield);
                    parsed.outputs.extend(outputs.iter().map(|o| port(o)));
                    parsed.output_marks.extend(marks);
                }
                "build" => {
                    has_build = true;
                    parsed.build.extend(string_field(p, v, &kfield));
                }
                "send_stdout_as" if single => *stdout_as = Some(v),
                "send_stdout_as" => p.push(
                    key.mark,
                    kfield,
                    "in a list of `operators`, write `send_stdout_as: <operator>/<output>` on the node",
                ),
                _ => unknown_key(p, key, &kfield, OPERATOR_KEYS),
            }
        }
        let (python, source, mark, sfield) = match sources.len() {
            1 => sources.remove(0),
            0 => {
                p.push(
                    item.mark,
                    &ofield,
                    "missing `python:` (a Python file) or `shared-library:`: the operator's code",
                );
                continue;
            }
            _ => {
                p.push(item.mark, &ofield, "an operator is `python:` or `shared-library:`, not both");
                continue;
            }
        };
        let resolved =
            if python { python_file(&source, base_dir, has_build) } else { library(&source, base_dir, has_build) };
        match resolved {
            Ok(source) => {
                let prefix = port("");
                parsed.operators.push(OperatorSpec { id, source, prefix });
            }
            Err(message) => p.push(mark, sfield, message),
        }
    }
    parsed
}

/// The operator's Python file, `raw` under `base_dir`.
fn python_file(raw: &str, base_dir: &Path, has_build: bool) -> Result<OperatorSource, String> {
    if !raw.ends_with(".py") {
        return Err(format!("`{raw}` is not a Python file (`.py`)"));
    }
    match paths::resolve(raw, base_dir, has_build) {
        Ok(NodePath::Python(file)) => Ok(OperatorSource::Python(file)),
        Ok(_) => Err(format!("`{raw}` is not a Python file (`.py`)")),
        Err(message) => Err(message),
    }
}

/// The operator's shared library, `raw` under `base_dir`: `dir/name` is `dir/libname.so`, as
/// dora-rs names it on Linux; a path with an extension is taken as it is.
fn library(raw: &str, base_dir: &Path, has_build: bool) -> Result<OperatorSource, String> {
    if raw.is_empty() || raw.contains('\0') {
        return Err("`shared-library` is empty or holds a NUL character".to_owned());
    }
    let given = Path::new(raw);
    let named = match (given.extension(), given.file_name()) {
        (None, Some(name)) => given.with_file_name(format!("lib{}.so", name.to_string_lossy())),
        _ => given.to_owned(),
    };
    let file: PathBuf = base_dir.join(named).components().collect();
    if file.is_file() || (has_build && !file.exists()) {
        Ok(OperatorSource::SharedLibrary(file))
    } else if file.exists() {
        Err(format!("{} is not a file", file.display()))
    } else {
        Err(format!("shared library not found: {} (build it first, or give the operator a `build:`)", file.display()))
    }
}

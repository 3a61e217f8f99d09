//! From the marked YAML tree to [`NodeSpec`]s, one field at a time.
//!
//! Parsing never stops at the first mistake: each field is checked on its own
//! and a node whose id is known is kept even when other fields are wrong, so
//! that the cross-node checks that follow do not invent problems about it.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::fetch::{self, Fetch};
use crate::fields::{boolean, join_field, key_str, mapping, optional_string, shown, string_field, unknown_key};
use crate::modules;
use crate::parse_logs::{parse_log_level, parse_log_output, parse_log_size, parse_logs_source, parse_rotated_files};
use crate::parse_params::parse_params;
use crate::parse_process::{
    DORA_RESTART_KEYS, duration, parse_cpus, parse_dora_restart, parse_realtime, parse_restart,
};
use crate::paths;
use crate::port_types::{PortDecl, parse_port_types, parse_type_folders};
use crate::ros2::parse_ros2;
use crate::spec::{
    DEFAULT_QUEUE_SIZE, DiscoveryRange, FailurePolicy, HostLossPolicy, InputSource, InputSpec, MAX_QUEUE_SIZE,
    NetworkSpec, NodePath, NodeSpec, QueuePolicy, RestartPolicy, ServicesSpec,
};
use crate::topic_name;
use crate::tree::{Mark, Node, Problems, ScalarKind, Value};

const TOP_KEYS: &[&str] = &[
    "nodes",
    "deploy",
    "_unstable_deploy",
    "communication",
    "version",
    "types",
    "network",
    "on_failure",
    "share",
    "env",
    "exit_when_nodes_finish",
    "debug",
    "strict_types",
];

const NETWORK_KEYS: &[&str] = &["discovery_range", "connect"];

const NODE_KEYS: &[&str] = &[
    "id",
    "name",
    "description",
    "path",
    "args",
    "env",
    "build",
    "git",
    "branch",
    "tag",
    "rev",
    "inputs",
    "outputs",
    "deploy",
    "_unstable_deploy",
    "restart",
    "realtime",
    "services",
    "params",
    "actions",
    "on_host_lost",
    "on_failure",
    "output_types",
    "input_types",
    "ros2",
    "min_log_level",
    "max_log_size",
    "max_rotated_files",
    "send_logs_as",
    "send_stdout_as",
    "finish_grace_secs",
    "health_check_timeout",
];

/// The longest `finish_grace_secs` or `health_check_timeout`: a week outlasts any computation a
/// node finishes with, and any silence of a node that is not hung.
const MAX_NODE_WAIT: Duration = Duration::from_secs(7 * 24 * 3600);

const INPUT_KEYS: &[&str] = &["source", "queue_size", "queue_policy", "input_timeout"];

const OUTPUT_KEYS: &[&str] = &["id", "topic"];

const DEPLOY_KEYS: &[&str] = &["machine", "labels", "working_dir"];

const SERVICES_KEYS: &[&str] = &["serve", "call"];

/// A parsed node and the positions the cross-node checks point at.
#[derive(Debug)]
pub(crate) struct ParsedNode {
    pub(crate) spec: NodeSpec,
    /// `nodes[<id>]`, or `nodes[<index>]` while the id is unknown or invalid.
    pub(crate) field: String,
    pub(crate) id_mark: Mark,
    /// Parallel to `spec.outputs`.
    pub(crate) output_marks: Vec<Mark>,
    /// Parallel to `spec.inputs`.
    pub(crate) inputs: Vec<InputPlace>,
    /// `output_types:` and `input_types:`, as written.
    pub(crate) port_types: Vec<PortDecl>,
}

/// The parsed document: its nodes and its top-level settings.
#[derive(Debug, Default)]
pub(crate) struct ParsedDocument {
    pub(crate) nodes: Vec<ParsedNode>,
    /// Folders of message definitions, absolute.
    pub(crate) types: Vec<std::path::PathBuf>,
    pub(crate) network: NetworkSpec,
    /// Names the run uses in the global scope (`share:`), canonical.
    pub(crate) share: Vec<String>,
    /// `exit_when_nodes_finish:` (see [`crate::Dataflow::exit_when_nodes_finish`]).
    pub(crate) exit_when_nodes_finish: bool,
}

/// Where an input's source was written.
#[derive(Debug)]
pub(crate) struct InputPlace {
    pub(crate) source_mark: Mark,
    pub(crate) field: String,
}

/// What is wrong with an id of a node, input, output or machine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// The id is empty.
    #[error("an id cannot be empty")]
    Empty,
    /// `.` or `..`: ids name files and directories (logs, sockets), and these two would escape.
    #[error("`{0}` is not a valid id")]
    Dots(String),
    /// A character outside the id alphabet.
    #[error("invalid character {bad:?} in `{id}`: ids use only letters, digits, `_`, `.` and `-`")]
    BadCharacter {
        /// The id.
        id: String,
        /// Its first character that is not allowed.
        bad: char,
    },
}

/// Checks the id rule shared by nodes, inputs, outputs and machines; the error is the message.
///
/// # Errors
/// [`IdError`]: what is wrong with `id`.
pub fn check_id(id: &str) -> Result<(), IdError> {
    if id.is_empty() {
        return Err(IdError::Empty);
    }
    if id == "." || id == ".." {
        return Err(IdError::Dots(id.to_owned()));
    }
    if let Some(bad) = id.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))) {
        return Err(IdError::BadCharacter { id: id.to_owned(), bad });
    }
    Ok(())
}

/// Inputs spelled `timer/...`, `dora/timer/...` and `topic/...` are timers and
/// topics; a node with one of these ids could never be read from.
const RESERVED_IDS: &[&str] = &["timer", "dora", "topic"];

/// dora-rs's `debug: {enable_debug_inspection: BOOL}`, which makes every output visible to its
/// `topic echo`. nerve's outputs always are (as `<node>/<output>` on their machine), so the key
/// only has to be well formed.
fn check_debug(p: &mut Problems, value: &Node) {
    let Some(entries) = mapping(p, value, "debug", "a mapping (`enable_debug_inspection: true`)") else {
        return;
    };
    for (key, value) in entries {
        let field = join_field("debug", key_str(key));
        match key_str(key) {
            "enable_debug_inspection" => {
                boolean(p, value, &field);
            }
            _ => unknown_key(p, key, &field, &["enable_debug_inspection"]),
        }
    }
}

/// The nodes of a document, and the dataflow-level default machine applied.
pub(crate) fn parse_document(root: &Node, base_dir: &Path, p: &mut Problems) -> ParsedDocument {
    let mut doc = ParsedDocument::default();
    let nodes = parse_nodes(root, base_dir, &mut doc, p);
    ParsedDocument { nodes, ..doc }
}

fn parse_nodes(root: &Node, base_dir: &Path, doc: &mut ParsedDocument, p: &mut Problems) -> Vec<ParsedNode> {
    let Value::Map(entries) = &root.value else {
        p.push(root.mark, "(document)", format!("expected a mapping with a `nodes:` list, found {}", root.describe()));
        return Vec::new();
    };
    let mut nodes_value = None;
    let mut default_deploy = None;
    let mut default_on_failure = None;
    let mut default_env = BTreeMap::new();
    for (key, value) in entries {
        match key_str(key) {
            "nodes" => nodes_value = Some(value),
            "env" => default_env = parse_env(p, value, "env"),
            "types" => doc.types = parse_type_folders(p, value, base_dir),
            "network" => doc.network = parse_network(p, value),
            "share" => doc.share = parse_names(p, value, "share", "topic, service or action"),
            k @ "exit_when_nodes_finish" => doc.exit_when_nodes_finish = boolean(p, value, k),
            "debug" => check_debug(p, value),
            k @ "strict_types" => {
                if !boolean(p, value, k) {
                    p.push(
                        value.mark,
                        k,
                        "nerve always refuses an edge whose ends declare different types: \
                         `strict_types: false` cannot loosen that; remove the key",
                    );
                }
            }
            k @ "type_rules" => p.push(
                key.mark,
                k,
                "nerve converts no type into another: declare the same type on both ends of an edge \
                 (`output_types` / `input_types`) and remove `type_rules`",
            ),
            "on_failure" => default_on_failure = parse_failure(p, value, "on_failure"),
            k @ "health_check_interval" => p.push(
                key.mark,
                k,
                "`health_check_interval` is not used by nerve: it looks at a node four times per its own \
                 `health_check_timeout`; remove the key",
            ),
            k @ ("deploy" | "_unstable_deploy") => {
                default_deploy = Some(parse_deploy(p, value, k, base_dir));
            }
            k @ ("communication" | "version") => {
                tracing::warn!(
                    key = k,
                    line = key.mark.line,
                    "dataflow key `{k}` is accepted for dora compatibility but ignored by nerve"
                );
            }
            k => unknown_key(p, key, k, TOP_KEYS),
        }
    }
    let Some(nodes_value) = nodes_value else {
        p.push(root.mark, "nodes", "missing required key `nodes`");
        return Vec::new();
    };
    let Value::Seq(items) = &nodes_value.value else {
        p.push(nodes_value.mark, "nodes", format!("expected a list of nodes, found {}", nodes_value.describe()));
        return Vec::new();
    };
    if items.is_empty() {
        p.push(nodes_value.mark, "nodes", "the dataflow has no nodes: `nodes` must list at least one");
    }
    let placed = modules::expand(items, base_dir, p);
    let mut nodes: Vec<ParsedNode> = placed
        .iter()
        .enumerate()
        .filter_map(|(index, node)| parse_node(p, index, &node.item, &node.base_dir))
        .collect();
    if let Some(deploy) = default_deploy {
        for node in &mut nodes {
            deploy.apply_default(&mut node.spec);
        }
    }
    if let Some(policy) = default_on_failure {
        for node in &mut nodes {
            node.spec.on_failure.get_or_insert(policy);
        }
    }
    // Every node's, under its own (a node's `env` wins), as dora-rs does.
    for node in &mut nodes {
        for (name, value) in &default_env {
            node.spec.env.entry(name.clone()).or_insert_with(|| value.clone());
        }
    }
    nodes
}

/// A `deploy:` block: where the node runs.
#[derive(Debug, Default, Clone)]
struct Deploy {
    machine: Option<String>,
    labels: BTreeMap<String, String>,
    working_dir: Option<PathBuf>,
}

impl Deploy {
    /// Gives `node` what it does not set itself.
    fn apply_default(&self, node: &mut NodeSpec) {
        // A node that says where it runs (a machine, or labels) says it whole.
        if node.machine.is_none() && node.labels.is_empty() {
            node.machine.clone_from(&self.machine);
            node.labels.clone_from(&self.labels);
        }
        if node.working_dir.is_none() {
            node.working_dir.clone_from(&self.working_dir);
        }
    }
}

fn parse_deploy(p: &mut Problems, value: &Node, field: &str, base_dir: &Path) -> Deploy {
    let mut deploy = Deploy::default();
    for (key, v) in mapping(p, value, field, "a mapping like `{machine: ID}`").unwrap_or_default() {
        let kfield = join_field(field, key_str(key));
        match key_str(key) {
            "machine" => {
                deploy.machine = optional_string(p, v, &kfield);
                // A machine id names its daemon on the network and its folders.
                if let Some(Err(message)) = deploy.machine.as_deref().map(check_id) {
                    p.push(v.mark, kfield, message.to_string().replace("ids use", "machine ids use"));
                }
            }
            "labels" => deploy.labels = parse_labels(p, v, &kfield),
            "working_dir" => {
                deploy.working_dir =
                    optional_string(p, v, &kfield).map(|dir| base_dir.join(dir).components().collect());
            }
            "distribute" => p.push(
                key.mark,
                kfield,
                "nerve copies no programs between machines: each machine runs the dataflow's folder at the same \
                 path (copy or mount it there); remove `distribute`",
            ),
            _ => unknown_key(p, key, &kfield, DEPLOY_KEYS),
        }
    }
    deploy
}

/// `labels: {KEY: VALUE, ...}`, written as a daemon's `--label KEY=VALUE`.
fn parse_labels(p: &mut Problems, value: &Node, field: &str) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    for (key, v) in
        mapping(p, value, field, "a mapping of labels to values, like `{gpu: \"true\"}`").unwrap_or_default()
    {
        let name = key_str(key);
        let lfield = join_field(field, name);
        match v.text() {
            _ if name.is_empty() || name.contains('=') => {
                p.push(key.mark, lfield, format!("`{name}` is not a label name: it is empty or contains `=`"));
            }
            Some(text) => {
                labels.insert(name.to_owned(), text.to_owned());
            }
            None => p.push(v.mark, lfield, format!("expected a string, number or boolean, found {}", v.describe())),
        }
    }
    labels
}

/// `network: {discovery_range: host | subnet, connect: [ENDPOINT, ...]}`.
fn parse_network(p: &mut Problems, value: &Node) -> NetworkSpec {
    let mut spec = NetworkSpec::default();
    let example = "a mapping like `{discovery_range: subnet, connect: [tcp/10.0.0.2:7447]}`";
    for (key, v) in mapping(p, value, "network", example).unwrap_or_default() {
        let field = join_field("network", key_str(key));
        match key_str(key) {
            "discovery_range" => {
                spec.discovery_range =
                    choice(p, v, &field, &[("host", DiscoveryRange::Host), ("subnet", DiscoveryRange::Subnet)]);
            }
            "connect" => match &v.value {
                Value::Seq(items) => {
                    for (i, item) in items.iter().enumerate() {
                        let item_field = format!("{field}[{i}]");
                        match string_field(p, item, &item_field) {
                            // A Zenoh endpoint: `tcp/10.0.0.2:7447`, `tls/robot.local:7447`.
                            Some(e)
                                if e.split_once('/')
                                    .is_some_and(|(proto, addr)| !proto.is_empty() && !addr.is_empty()) =>
                            {
                                spec.connect.push(e);
                            }
                            Some(e) => p.push(
                                item.mark,
                                item_field,
                                format!("`{e}` is not an endpoint like `tcp/10.0.0.2:7447`"),
                            ),
                            None => {}
                        }
                    }
                }
                _ => p.push(v.mark, field, format!("expected a list of endpoints, found {}", v.describe())),
            },
            _ => unknown_key(p, key, &field, NETWORK_KEYS),
        }
    }
    spec
}

/// One of the words of `choices`, or a problem naming them.
fn choice<T: Copy>(p: &mut Problems, value: &Node, field: &str, choices: &[(&str, T)]) -> Option<T> {
    let written = value.text();
    if let Some(&(_, v)) = choices.iter().find(|(word, _)| Some(*word) == written) {
        return Some(v);
    }
    let found = shown(value);
    let words: Vec<&str> = choices.iter().map(|(w, _)| *w).collect();
    p.push(value.mark, field, format!("expected {}, found {found}", words.join(" or ")));
    None
}

/// `on_failure: continue | stop_all`.
fn parse_failure(p: &mut Problems, value: &Node, field: &str) -> Option<FailurePolicy> {
    choice(p, value, field, &[("continue", FailurePolicy::Continue), ("stop_all", FailurePolicy::StopAll)])
}

/// `on_host_lost: close | wait`.
fn parse_host_loss(p: &mut Problems, value: &Node, field: &str) -> Option<HostLossPolicy> {
    choice(p, value, field, &[("close", HostLossPolicy::Close), ("wait", HostLossPolicy::Wait)])
}

/// `services:` or `actions:` (`kind` names which): `{serve: [names], call: [names]}`, names
/// checked like topic names.
fn parse_served(p: &mut Problems, value: &Node, field: &str, kind: &str) -> ServicesSpec {
    let mut spec = ServicesSpec::default();
    let example = match kind {
        "action" => "a mapping like `{serve: [navigate], call: [arm/move]}`",
        _ => "a mapping like `{serve: [plan], call: [gripper/set]}`",
    };
    let Some(entries) = mapping(p, value, field, example) else {
        return spec;
    };
    for (key, v) in entries {
        let k = key_str(key);
        let kfield = join_field(field, k);
        let list = match k {
            "serve" => &mut spec.serve,
            "call" => &mut spec.call,
            _ => {
                unknown_key(p, key, &kfield, SERVICES_KEYS);
                continue;
            }
        };
        *list = parse_names(p, v, &kfield, kind);
    }
    spec
}

/// A list of topic, service or action names (or one name), each checked like a topic name and
/// listed once; `kind` is what the errors call one name (`service`, `action`, …).
fn parse_names(p: &mut Problems, value: &Node, field: &str, kind: &str) -> Vec<String> {
    let items: &[Node] = match &value.value {
        Value::Seq(items) => items,
        _ if value.text().is_some() => std::slice::from_ref(value),
        _ => {
            p.push(value.mark, field, format!("expected a list of {kind} names, found {}", value.describe()));
            return Vec::new();
        }
    };
    let mut names = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item.text().map(topic_name::canonical) {
            Some(Ok(name)) if !names.contains(&name) => names.push(name),
            Some(Ok(name)) => p.push(item.mark, format!("{field}[{i}]"), format!("{kind} `{name}` is listed twice")),
            Some(Err(why)) => p.push(item.mark, format!("{field}[{i}]"), format!("bad {kind} name: {why}")),
            None => p.push(
                item.mark,
                format!("{field}[{i}]"),
                format!("expected a{} {kind} name, found {}", if kind == "action" { "n" } else { "" }, item.describe()),
            ),
        }
    }
    names
}

fn unsupported(key: &str) -> Option<&'static str> {
    Some(match key {
        "hub" => "install the node and point `path:` at it",
        _ => return None,
    })
}

pub(crate) fn parse_node(p: &mut Problems, index: usize, item: &Node, base_dir: &Path) -> Option<ParsedNode> {
    let index_field = format!("nodes[{index}]");
    let Value::Map(entries) = &item.value else {
        p.push(
            item.mark,
            &index_field,
            format!("expected a node mapping (with `id:` and `path:`), found {}", item.describe()),
        );
        return None;
    };

    // The id comes first so that every other problem can name the node.
    let Some((_, id_node)) = entries.iter().find(|(k, _)| key_str(k) == "id") else {
        p.push(item.mark, &index_field, "missing required key `id`");
        return None;
    };
    let id_field = format!("{index_field}.id");
    let id = string_field(p, id_node, &id_field)?;
    let field = match check_id(&id) {
        Ok(()) if RESERVED_IDS.contains(&id.as_str()) => {
            let what = if id == "topic" { "topics" } else { "timers" };
            p.push(id_node.mark, &id_field, format!("node id `{id}` is reserved: `{id}/...` inputs are {what}"));
            index_field
        }
        Ok(()) => format!("nodes[{id}]"),
        Err(message) => {
            p.push(id_node.mark, &id_field, message.to_string());
            index_field
        }
    };
    let f = |key: &str| join_field(&field, key);
    let flattened = crate::custom::flatten(p, entries, &field);
    let keys = flattened.as_deref().unwrap_or(entries);

    let mut spec = NodeSpec { config: item.to_json(), line: item.mark.line, ..NodeSpec::new(&id, NodePath::Dynamic) };
    let mut raw_path = None;
    // Where `restart:` and `realtime:` were written: both act on a process nerve starts.
    let mut process_marks = Vec::new();
    let mut output_marks = Vec::new();
    let mut inputs = Vec::new();
    let mut port_types = Vec::new();
    let mut dora_restart = Vec::new();
    let mut affinity = None;
    let mut ros2 = None;
    let mut log_outputs = Vec::new();
    let mut operators = None;
    let mut git = fetch::GitKeys::default();

    for (key, value) in keys {
        let k = key_str(key);
        match k {
            "id" => {}
            "name" => spec.name = optional_string(p, value, &f(k)),
            "description" => spec.description = optional_string(p, value, &f(k)),
            "build" => spec.build = optional_string(p, value, &f(k)),
            "path" => raw_path = string_field(p, value, &f(k)).map(|raw| (raw, value.mark)),
            "args" => spec.args = parse_args(p, value, &f(k)),
            "env" => spec.env = parse_env(p, value, &f(k)),
            "outputs" => {
                (spec.outputs, spec.output_topics, output_marks) = parse_outputs(p, value, &f(k));
            }
            "inputs" => {
                (spec.inputs, inputs) = parse_inputs(p, value, &f(k));
            }
            "deploy" | "_unstable_deploy" => {
                let deploy = parse_deploy(p, value, &f(k), base_dir);
                (spec.machine, spec.labels, spec.working_dir) = (deploy.machine, deploy.labels, deploy.working_dir);
            }
            "restart" => {
                spec.restart = parse_restart(p, value, &f(k));
                process_marks.push((key.mark, k));
            }
            "realtime" => {
                spec.realtime = parse_realtime(p, value, &f(k));
                process_marks.push((key.mark, k));
            }
            "services" => spec.services = parse_served(p, value, &f(k), "service"),
            "actions" => spec.actions = parse_served(p, value, &f(k), "action"),
            "params" => spec.params = parse_params(p, value, &f(k), base_dir),
            "on_host_lost" => spec.on_host_lost = parse_host_loss(p, value, &f(k)).unwrap_or_default(),
            "on_failure" => spec.on_failure = parse_failure(p, value, &f(k)),
            "output_types" => port_types.extend(parse_port_types(p, value, &f(k), true)),
            "input_types" => port_types.extend(parse_port_types(p, value, &f(k), false)),
            "ros2" => ros2 = Some(value),
            "min_log_level" => spec.logs.min_level = parse_log_level(p, value, &f(k)),
            "max_log_size" => spec.logs.max_size = parse_log_size(p, value, &f(k)),
            "max_rotated_files" => {
                if let Some(n) = parse_rotated_files(p, value, &f(k)) {
                    spec.logs.max_files = n;
                }
            }
            "send_logs_as" => log_outputs.push((k, value)),
            "send_stdout_as" => log_outputs.push((k, value)),
            "operator" | "operators" => operators = Some((key, value)),
            "finish_grace_secs" => {
                spec.finish_grace = duration(p, value, &f(k), MAX_NODE_WAIT);
                process_marks.push((key.mark, k));
            }
            "health_check_timeout" => {
                spec.health_check = duration(p, value, &f(k), MAX_NODE_WAIT);
                if spec.health_check == Some(Duration::ZERO) {
                    p.push(value.mark, f(k), "`health_check_timeout` must be more than 0: a node needs time to call");
                    spec.health_check = None;
                }
                process_marks.push((key.mark, k));
            }
            "cpu_affinity" => {
                affinity = Some((key, parse_cpus(p, value, &f(k))));
                process_marks.push((key.mark, k));
            }
            _ if fetch::GIT_KEYS.contains(&k) => git.push(key, value),
            _ if DORA_RESTART_KEYS.contains(&k) => {
                dora_restart.push((key, value));
                process_marks.push((key.mark, k));
            }
            _ => match unsupported(k) {
                Some(instead) => {
                    p.push(key.mark, f(k), format!("`{k}` is not supported by nerve: {instead}"));
                }
                None => unknown_key(p, key, &f(k), NODE_KEYS),
            },
        }
    }

    spec.fetch = git.resolve(p, &field, base_dir);
    // A `git:` node's files are in its clone, which may not exist before `nerve build`.
    let node_dir = spec.fetch.as_ref().and_then(Fetch::work_dir).unwrap_or(base_dir).to_path_buf();
    // A `git:` written wrong is reported already: its files are not missing too.
    let fetched = git.any_repository();

    if let Some((key, value)) = operators {
        let k = key_str(key);
        let mut stdout_as = None;
        let parsed = crate::operators::parse(p, value, &f(k), k == "operator", &node_dir, fetched, &mut stdout_as);
        if raw_path.take().is_some() || spec.path != NodePath::Dynamic {
            p.push(key.mark, f(k), "a node runs a program (`path:`) or operators, not both");
        }
        if !spec.inputs.is_empty() || !spec.outputs.is_empty() {
            p.push(key.mark, f(k), "an operators node's inputs and outputs are its operators': declare them there");
        }
        spec.path = NodePath::Operators(parsed.operators);
        spec.inputs = parsed.inputs;
        inputs = parsed.places;
        spec.outputs = parsed.outputs;
        output_marks = parsed.output_marks;
        let builds: Vec<String> = spec.build.take().into_iter().chain(parsed.build).collect();
        spec.build = (!builds.is_empty()).then(|| builds.join(" && "));
        if let Some(v) = stdout_as {
            log_outputs.push(("send_stdout_as", v));
        }
    }

    for (k, value) in log_outputs {
        let output = parse_log_output(p, value, &f(k), &spec.outputs);
        if k == "send_logs_as" { spec.logs.send_logs_as = output } else { spec.logs.send_stdout_as = output }
    }
    if let (Some(records), Some(lines)) = (&spec.logs.send_logs_as, &spec.logs.send_stdout_as)
        && records == lines
    {
        p.push(
            item.mark,
            &field,
            format!("`send_logs_as` and `send_stdout_as` both name output `{records}`: give each its own output"),
        );
    }

    if let Some(value) = ros2 {
        let inputs: Vec<String> = spec.inputs.iter().map(|i| i.id.clone()).collect();
        spec.ros2 = parse_ros2(p, value, &f("ros2"), (&id, &spec.outputs, &inputs), &mut port_types);
        if let Some((_, mark)) = &raw_path {
            p.push(*mark, f("path"), "a `ros2:` node is a bridge nerve runs itself: remove `path:`");
        }
        // Only a bridge that parsed stands for the missing `path:`.
        if spec.ros2.is_none() && raw_path.is_none() {
            return None;
        }
    }

    match raw_path {
        Some((raw, mark)) => match fetch::url_path(&raw, base_dir) {
            Some(_) if fetched => p.push(
                mark,
                f("path"),
                "a `git:` node's `path:` is a file of its repository, relative to the clone, not a URL",
            ),
            Some(Ok(file)) => {
                spec.path = paths::downloaded(&file);
                spec.fetch = Some(Fetch::Url { url: raw, file });
            }
            Some(Err(message)) => p.push(mark, f("path"), message),
            None => match paths::resolve(&raw, &node_dir, spec.build.is_some() || fetched) {
                Ok(path) => spec.path = path,
                Err(message) => p.push(mark, f("path"), message),
            },
        },
        // A node written as dora operators already has its problem reported;
        // "missing `path`" would only repeat it.
        None if !entries
            .iter()
            .any(|(k, _)| matches!(key_str(k), "path" | "operator" | "operators" | "custom" | "ros2")) =>
        {
            p.push(item.mark, &field, "missing required key `path` (a program, a `.py` file, or `dynamic`)");
        }
        // `path:` was there but not a string; already reported.
        None => {}
    }

    if spec.path == NodePath::Dynamic && spec.fetch.is_some() {
        p.push(item.mark, &field, "nerve does not start a `path: dynamic` node, so it has no use for a `git:` clone");
    }

    // dora-rs's `cpu_affinity: [0, 1]` is nerve's `realtime: {cpus: [0, 1]}`.
    if let Some((key, cpus)) = affinity {
        let realtime = spec.realtime.get_or_insert_with(Default::default);
        if realtime.cpus.is_empty() {
            realtime.cpus = cpus;
        } else {
            p.push(key.mark, f("cpu_affinity"), "`cpu_affinity` and `realtime: {cpus}` both pin the node: keep one");
        }
    }

    if let Some((first, _)) = dora_restart.first() {
        if process_marks.iter().any(|(_, k)| *k == "restart") {
            let k = key_str(first);
            p.push(
                first.mark,
                f(k),
                format!("`{k}` (dora-rs's form) and `restart:` both say how the node restarts: keep one"),
            );
        } else {
            spec.restart = parse_dora_restart(p, &dora_restart, &field);
        }
    }

    if spec.path == NodePath::Dynamic && spec.ros2.is_none() {
        for (mark, key) in process_marks {
            let applies = match key {
                _ if key == "restart" || DORA_RESTART_KEYS.contains(&key) => {
                    spec.restart.policy != RestartPolicy::Never
                }
                "finish_grace_secs" | "health_check_timeout" => true,
                _ => spec.realtime.as_ref().is_some_and(|rt| rt.priority.is_some() || !rt.cpus.is_empty()),
            };
            if applies {
                p.push(
                    mark,
                    f(key),
                    format!(
                        "nerve does not start a `path: dynamic` node, so it cannot apply `{key}:` to it \
                         (start it under a supervisor, `chrt` or `taskset` yourself)"
                    ),
                );
            }
        }
    }

    for decl in &port_types {
        let types = if decl.output { &mut spec.output_types } else { &mut spec.input_types };
        types.insert(decl.port.clone(), decl.text.clone());
    }
    Some(ParsedNode { spec, field, id_mark: id_node.mark, output_marks, inputs, port_types })
}

fn parse_args(p: &mut Problems, value: &Node, field: &str) -> Vec<String> {
    match &value.value {
        _ if value.is_null() => Vec::new(),
        Value::Scalar(s) => match shell_words::split(&s.text) {
            Ok(words) => words,
            Err(e) => {
                p.push(value.mark, field, format!("cannot split `args` the way a shell would: {e}"));
                Vec::new()
            }
        },
        Value::Seq(items) => items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| match item.text() {
                Some(t) => Some(t.to_owned()),
                None => {
                    p.push(
                        item.mark,
                        format!("{field}[{i}]"),
                        format!("expected a string, number or boolean, found {}", item.describe()),
                    );
                    None
                }
            })
            .collect(),
        Value::Map(_) => {
            p.push(value.mark, field, "expected a string or a list of arguments, found a mapping");
            Vec::new()
        }
    }
}

fn parse_env(p: &mut Problems, value: &Node, field: &str) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    let Some(entries) = mapping(p, value, field, "a mapping of variable names to values") else {
        return env;
    };
    for (key, v) in entries {
        let name = key_str(key);
        let vfield = join_field(field, name);
        if name.is_empty() {
            p.push(key.mark, &vfield, "an environment variable name cannot be empty");
            continue;
        }
        if name.contains(['=', '\0']) {
            p.push(
                key.mark,
                &vfield,
                format!("`{name}` is not a valid environment variable name (it contains `=` or NUL)"),
            );
            continue;
        }
        match v.text() {
            Some(text) if text.contains('\0') => {
                p.push(v.mark, &vfield, "an environment value cannot contain NUL");
            }
            Some(text) => {
                env.insert(name.to_owned(), text.to_owned());
            }
            None => p.push(v.mark, &vfield, format!("expected a string, number or boolean, found {}", v.describe())),
        }
    }
    env
}

/// The outputs' ids in order, their topics (output id → canonical name), and
/// where each id was written.
pub(crate) fn parse_outputs(
    p: &mut Problems,
    value: &Node,
    field: &str,
) -> (Vec<String>, BTreeMap<String, String>, Vec<Mark>) {
    let mut outputs = Vec::new();
    let mut topics = BTreeMap::new();
    let mut marks: Vec<Mark> = Vec::new();
    let items = match &value.value {
        _ if value.is_null() => return (outputs, topics, marks),
        Value::Seq(items) => items,
        _ => {
            p.push(value.mark, field, format!("expected a list of output ids, found {}", value.describe()));
            return (outputs, topics, marks);
        }
    };
    let mut first_lines: HashMap<String, usize> = HashMap::new();
    // Canonical topic → (output id, line) of the first output of this node publishing it.
    let mut topic_owners: HashMap<String, (String, usize)> = HashMap::new();
    for (i, item) in items.iter().enumerate() {
        let ifield = format!("{field}[{i}]");
        let Some(OutputEntry { id, id_mark, topic }) = parse_output(p, item, &ifield) else {
            continue;
        };
        if let Err(message) = check_id(&id) {
            p.push(id_mark, &ifield, message.to_string());
        }
        if let Some(first_line) = first_lines.get(&id) {
            p.push(id_mark, &ifield, format!("duplicate output `{id}` (first at line {first_line})"));
            continue;
        }
        first_lines.insert(id.clone(), id_mark.line);
        if let Some((topic, topic_mark)) = topic {
            match topic_owners.get(&topic) {
                // Two outputs of one node on one topic would interleave their
                // messages under a single publisher: almost surely a copy-paste slip.
                Some((owner, line)) => {
                    let message = format!(
                        "output `{owner}` (line {line}) already publishes topic `{topic}`: \
                         give each output its own topic"
                    );
                    p.push(topic_mark, format!("{ifield}.topic"), message);
                }
                None => {
                    topic_owners.insert(topic.clone(), (id.clone(), id_mark.line));
                    topics.insert(id.clone(), topic);
                }
            }
        }
        // Kept even when the id is invalid: readers of it should not also be
        // told that the output does not exist.
        outputs.push(id);
        marks.push(id_mark);
    }
    (outputs, topics, marks)
}

/// One entry of `outputs:`, in either form.
struct OutputEntry {
    id: String,
    id_mark: Mark,
    /// The canonical topic name and where it was written.
    topic: Option<(String, Mark)>,
}

/// Parses `image` or `{id: image, topic: camera/image}`; `None` when there is
/// no usable id (the problem is reported).
fn parse_output(p: &mut Problems, item: &Node, field: &str) -> Option<OutputEntry> {
    let Value::Map(entries) = &item.value else {
        return match item.text() {
            Some(id) => Some(OutputEntry { id: id.to_owned(), id_mark: item.mark, topic: None }),
            None => {
                p.push(
                    item.mark,
                    field,
                    format!(
                        "expected an output id or a mapping like `{{id: image, topic: camera/image}}`, found {}",
                        item.describe()
                    ),
                );
                None
            }
        };
    };
    let mut id = None;
    let mut topic = None;
    let mut has_id = false;
    for (key, v) in entries {
        let k = key_str(key);
        let kfield = join_field(field, k);
        match k {
            "id" => {
                has_id = true;
                id = string_field(p, v, &kfield).map(|id| (id, v.mark));
            }
            "topic" => {
                topic = string_field(p, v, &kfield).and_then(|raw| match topic_name::canonical(&raw) {
                    Ok(name) => Some((name, v.mark)),
                    // "bad topic ``" would read as a typo in the message itself.
                    Err(_) if raw.is_empty() => {
                        p.push(v.mark, &kfield, "a topic name cannot be empty");
                        None
                    }
                    Err(why) => {
                        p.push(v.mark, &kfield, format!("bad topic `{raw}`: {why}"));
                        None
                    }
                });
            }
            _ => unknown_key(p, key, &kfield, OUTPUT_KEYS),
        }
    }
    if !has_id {
        p.push(item.mark, field, "missing required key `id`");
    }
    let (id, id_mark) = id?;
    Some(OutputEntry { id, id_mark, topic })
}

pub(crate) fn parse_inputs(p: &mut Problems, value: &Node, field: &str) -> (Vec<InputSpec>, Vec<InputPlace>) {
    let entries = match &value.value {
        _ if value.is_null() => return (Vec::new(), Vec::new()),
        Value::Map(entries) => entries,
        _ => {
            p.push(
                value.mark,
                field,
                format!("expected a mapping of input ids to sources, found {}", value.describe()),
            );
            return (Vec::new(), Vec::new());
        }
    };
    let mut specs = Vec::new();
    let mut places = Vec::new();
    for (key, v) in entries {
        let id = key_str(key).to_owned();
        let ifield = join_field(field, &id);
        if let Err(message) = check_id(&id) {
            p.push(key.mark, &ifield, message.to_string());
        }
        if let Some((spec, place)) = parse_input(p, id, key.mark, v, ifield) {
            specs.push(spec);
            places.push(place);
        }
    }
    (specs, places)
}

fn parse_input(
    p: &mut Problems,
    id: String,
    key_mark: Mark,
    value: &Node,
    field: String,
) -> Option<(InputSpec, InputPlace)> {
    const FORMS: &str =
        "`node/output`, `topic/<name>`, a timer like `dora/timer/millis/100`, or a mapping with `source:`";
    let mut queue_size = DEFAULT_QUEUE_SIZE;
    // Set explicitly, with where: the default depends on the source, which may come later.
    let mut policy: Option<(QueuePolicy, Mark, String)> = None;
    let mut timeout: Option<(Duration, Mark, String)> = None;
    let (source_node, source_field) = match &value.value {
        Value::Scalar(s) if s.kind == ScalarKind::Str => (value, field),
        Value::Map(entries) => {
            let mut source = None;
            for (key, v) in entries {
                let k = key_str(key);
                let kfield = join_field(&field, k);
                match k {
                    "source" => source = Some((v, kfield)),
                    "queue_size" => {
                        if let Some(n) = parse_queue_size(p, v, &kfield) {
                            queue_size = n;
                        }
                    }
                    "queue_policy" => {
                        if let Some(q) = parse_policy(p, v, &kfield) {
                            policy = Some((q, v.mark, kfield));
                        }
                    }
                    "input_timeout" => {
                        timeout = parse_input_timeout(p, v, &kfield).map(|t| (t, v.mark, kfield));
                    }
                    _ => unknown_key(p, key, &kfield, INPUT_KEYS),
                }
            }
            let Some(source) = source else {
                p.push(value.mark, &field, "missing required key `source`");
                return None;
            };
            source
        }
        _ => {
            p.push(value.mark, &field, format!("expected {FORMS}, found {}", value.describe()));
            return None;
        }
    };
    let Some(text) = source_node.text() else {
        p.push(source_node.mark, &source_field, format!("expected {FORMS}, found {}", source_node.describe()));
        return None;
    };
    let source = match parse_source(text) {
        Ok(source) => source,
        Err(message) => {
            p.push(source_node.mark, &source_field, message);
            return None;
        }
    };
    let policy = match (&source, policy) {
        // A topic's publishers never wait for their subscribers (one slow
        // reader must not stall the others), so a topic input can only drop.
        (InputSource::Topic { .. } | InputSource::Logs { .. }, Some((QueuePolicy::Backpressure, mark, kfield))) => {
            p.push(
                mark,
                kfield,
                "a topic or log input cannot push back on what it reads; use drop_oldest (their default)",
            );
            QueuePolicy::DropOldest
        }
        (_, Some((policy, _, _))) => policy,
        (InputSource::Topic { .. } | InputSource::Logs { .. }, None) => QueuePolicy::DropOldest,
        (_, None) => QueuePolicy::default(),
    };
    // A timer never falls silent: a timeout on one could never act.
    if let (InputSource::Timer { .. }, Some((_, mark, kfield))) = (&source, &timeout) {
        p.push(*mark, kfield, "a timer input always ticks: `input_timeout` is for inputs fed by nodes and topics");
    }
    let timeout = timeout.map(|(t, _, _)| t);
    Some((
        InputSpec { id, source, queue_size, policy, timeout, line: key_mark.line },
        InputPlace { source_mark: source_node.mark, field: source_field },
    ))
}

/// `input_timeout: SECS`, a positive number of seconds (fractions too), as dora-rs writes it.
fn parse_input_timeout(p: &mut Problems, value: &Node, field: &str) -> Option<Duration> {
    #[allow(clippy::cast_precision_loss)] // A timeout in seconds needs no 53 bits.
    let secs = match value.as_scalar().map(|s| s.kind) {
        Some(ScalarKind::Int(n)) => Some(n as f64),
        Some(ScalarKind::Float(f)) => Some(f),
        _ => None,
    };
    match secs.map(Duration::try_from_secs_f64) {
        Some(Ok(timeout)) if !timeout.is_zero() => Some(timeout),
        _ => {
            p.push(
                value.mark,
                field,
                format!("input_timeout must be a positive number of seconds, found {}", shown(value)),
            );
            None
        }
    }
}

fn parse_queue_size(p: &mut Problems, value: &Node, field: &str) -> Option<usize> {
    let text = value.as_scalar().map_or("", |s| s.text.as_str());
    let n = match value.as_scalar().map(|s| s.kind) {
        Some(ScalarKind::Int(n)) => n,
        _ => {
            let kind = value.as_scalar().map(|s| s.kind);
            let found = match kind {
                None | Some(ScalarKind::Null) => value.describe().to_owned(),
                // `"3"` reads as `3` in the message, which would be puzzling.
                Some(ScalarKind::Str) if text.parse::<i128>().is_ok() => {
                    format!("the string `{text}` (write the number without quotes)")
                }
                Some(_) => format!("`{text}`"),
            };
            p.push(value.mark, field, format!("queue_size must be a positive integer, found {found}"));
            return None;
        }
    };
    if n < 1 {
        p.push(
            value.mark,
            field,
            format!("queue_size must be at least 1, found `{text}`: a queue that holds nothing would never deliver"),
        );
        return None;
    }
    match usize::try_from(n) {
        Ok(n) if n <= MAX_QUEUE_SIZE => Some(n),
        _ => {
            p.push(value.mark, field, format!("queue_size must be at most {MAX_QUEUE_SIZE}, found `{text}`"));
            None
        }
    }
}

fn parse_policy(p: &mut Problems, value: &Node, field: &str) -> Option<QueuePolicy> {
    match value.text() {
        Some("drop_oldest") => Some(QueuePolicy::DropOldest),
        Some("backpressure") => Some(QueuePolicy::Backpressure),
        Some(other) => {
            p.push(value.mark, field, format!("unknown queue_policy `{other}` (expected drop_oldest or backpressure)"));
            None
        }
        None => {
            p.push(value.mark, field, format!("expected drop_oldest or backpressure, found {}", value.describe()));
            None
        }
    }
}

/// Parses the short form of an input source; the error is the whole message.
pub(crate) fn parse_source(text: &str) -> Result<InputSource, String> {
    if let Some(name) = text.strip_prefix("topic/") {
        // `topic//tf` reads as an empty segment, not as the absolute name `/tf`.
        let checked = if name.starts_with('/') {
            Err(topic_name::TopicNameError::BadSegment)
        } else {
            topic_name::canonical(name)
        };
        return checked.map(|topic| InputSource::Topic { topic }).map_err(|why| format!("bad topic `{text}`: {why}"));
    }
    if let Some(rest) = text.strip_prefix("dora/") {
        if let Some(timer) = rest.strip_prefix("timer/") {
            return parse_timer(timer, text);
        }
        if rest == "logs" || rest.starts_with("logs/") {
            return parse_logs_source(rest.strip_prefix("logs").unwrap_or_default(), text);
        }
        return Err(format!(
            "unknown source `{text}`: the `dora/` sources are timers (`dora/timer/millis/N`, `dora/timer/secs/N`, `dora/timer/hz/N`) and logs (`dora/logs[/LEVEL[/NODE]]`)"
        ));
    }
    if let Some(timer) = text.strip_prefix("timer/") {
        return parse_timer(timer, text);
    }
    match text.split_once('/') {
        Some((node, output)) if !node.is_empty() && !output.is_empty() => {
            Ok(InputSource::Output { node: node.to_owned(), output: output.to_owned() })
        }
        _ => Err(format!(
            "`{text}` is not a source: expected `node/output`, `topic/<name>` or a timer like `timer/millis/100`"
        )),
    }
}

fn parse_timer(spec: &str, whole: &str) -> Result<InputSource, String> {
    const MAX_HZ: f64 = 1e9;
    let bad = |why: String| Err(format!("bad timer `{whole}`: {why}"));
    let Some((unit, number)) = spec.split_once('/') else {
        return bad("expected `timer/millis/N`, `timer/secs/N` or `timer/hz/N`".to_owned());
    };
    // Fractions too, as dora-rs takes them (`dora/timer/hz/0.5`: every two seconds).
    let n = match number.parse::<f64>() {
        Ok(n) if n.is_finite() && n > 0.0 => n,
        _ => return bad(format!("N must be a positive number, found `{number}`")),
    };
    // In whole nanoseconds, rounded: `millis/300` is 0.3 s, which a float holds a hair short.
    let nanos = match unit {
        "millis" => n * 1e6,
        "secs" => n * 1e9,
        "hz" if n > MAX_HZ => return bad(format!("at most {MAX_HZ} Hz, found {number}")),
        "hz" => 1e9 / n,
        _ => {
            return bad(format!("unknown unit `{unit}` (expected millis, secs or hz)"));
        }
    }
    .round();
    // `u64::MAX as f64` rounds up to 2^64, so the bound excludes it.
    if !(1.0..u64::MAX as f64).contains(&nanos) {
        return bad(format!("{number} {unit} is not a period a timer can keep (1 ns to 584 years)"));
    }
    // In range and integral (checked and rounded above): the cast is exact.
    Ok(InputSource::Timer { interval: Duration::from_nanos(nanos as u64) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dataflows_env_reaches_every_node_under_its_own() {
        let yaml = "env: {RUST_LOG: info, SHARED: 1}\nnodes:\n  - id: a\n    path: dynamic\n    env: {RUST_LOG: debug}\n  - id: b\n    path: dynamic\n";
        let df = crate::parse_str(yaml, std::path::Path::new("df.yml")).expect("valid");
        let env = |i: usize| df.nodes[i].env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>();
        assert_eq!(env(0), ["RUST_LOG=debug", "SHARED=1"]);
        assert_eq!(env(1), ["RUST_LOG=info", "SHARED=1"]);
        let bad = crate::parse_str("env: [A]\nnodes:\n  - id: a\n    path: dynamic\n", std::path::Path::new("df.yml"));
        assert!(bad.expect_err("invalid").to_string().contains("df.yml:1:6: env: expected a mapping"));
    }

    #[test]
    fn sources() {
        assert_eq!(parse_source("cam/image"), Ok(InputSource::Output { node: "cam".into(), output: "image".into() }));
        let ms = |n| Ok(InputSource::Timer { interval: Duration::from_millis(n) });
        assert_eq!(parse_source("timer/millis/10"), ms(10));
        assert_eq!(parse_source("dora/timer/millis/10"), ms(10));
        assert_eq!(parse_source("dora/timer/secs/2"), ms(2000));
        assert_eq!(parse_source("timer/hz/4"), ms(250));
        assert_eq!(parse_source("dora/timer/hz/100"), ms(10));
        assert!(parse_source("timer/millis/0").is_err());
        assert!(parse_source("timer/millis/-3").is_err());
        assert!(parse_source("timer/minutes/3").is_err());
        assert!(parse_source("timer/hz/2000000000").is_err());
        // Fractions, as dora-rs takes them.
        assert_eq!(parse_source("dora/timer/hz/0.5"), ms(2000));
        assert_eq!(parse_source("dora/timer/secs/1.5"), ms(1500));
        assert_eq!(parse_source("timer/millis/2.5"), Ok(InputSource::Timer { interval: Duration::from_micros(2500) }));
        assert_eq!(parse_source("timer/millis/300"), ms(300));
        assert_eq!(parse_source("timer/hz/3"), Ok(InputSource::Timer { interval: Duration::from_nanos(333_333_333) }));
        for bad in
            ["timer/hz/0", "timer/hz/-0.5", "timer/secs/nan", "timer/secs/inf", "timer/millis/1e-9", "timer/secs/1e300"]
        {
            assert!(parse_source(bad).is_err(), "{bad}");
        }
        assert!(parse_source("dora/camera").is_err());
        assert!(parse_source("camera").is_err());
        assert!(parse_source("/image").is_err());
        assert!(parse_source("camera/").is_err());
    }

    #[test]
    fn topic_sources() {
        let topic = |t: &str| Ok(InputSource::Topic { topic: t.to_owned() });
        assert_eq!(parse_source("topic/tf"), topic("tf"));
        assert_eq!(parse_source("topic/robot/pose"), topic("robot/pose"));
        assert_eq!(parse_source("topic/a.b/c-d_e/1"), topic("a.b/c-d_e/1"));
        assert_eq!(parse_source("topic/robot/pose").map(|s| s.to_string()), Ok("topic/robot/pose".to_owned()));
        let segments = "segments between `/` must be non-empty and not `.` or `..`";
        for (text, why) in [
            ("topic/", "it is empty"),
            ("topic//tf", segments),
            ("topic/a//b", segments),
            ("topic/a/", segments),
            ("topic/../x", segments),
            ("topic/a b", "` ` is not allowed (use letters, digits, `_`, `-`, `.` and `/`)"),
        ] {
            assert_eq!(parse_source(text), Err(format!("bad topic `{text}`: {why}")), "{text}");
        }
        let long = format!("topic/{}", "x".repeat(topic_name::MAX_TOPIC_LEN + 1));
        assert!(parse_source(&long).is_err());
        // Only the exact `topic/` prefix makes a topic; these are node outputs.
        assert_eq!(parse_source("topics/x"), Ok(InputSource::Output { node: "topics".into(), output: "x".into() }));
        assert!(parse_source("topic").is_err());
    }

    #[test]
    fn ids() {
        assert!(check_id("camera_1.left-x").is_ok());
        for bad in ["", ".", "..", "a/b", "a b", "ç"] {
            assert!(check_id(bad).is_err(), "{bad:?}");
        }
    }
}

//! The nerve dataflow file: a YAML list of nodes, their programs, and which
//! outputs feed which inputs. The format is a superset of dora-rs 1.x dataflows.
//!
//! [`load`] reads a file, [`parse_str`] parses text. Either returns a validated
//! [`Dataflow`] or a [`SpecError`] listing *every* problem found, each with its
//! line, column and field, one per line:
//!
//! ```text
//! dataflow.yml:12:14: nodes[sink].inputs.image: unknown source node `camra` (known nodes: camera, sink)
//! ```
//!
//! # Example
//!
//! ```
//! use std::path::Path;
//! use std::time::Duration;
//! use nerve_spec::{InputSource, NodePath, QueuePolicy};
//!
//! let yaml = r#"
//! nodes:
//!   - id: camera
//!     path: dynamic
//!     inputs:
//!       tick: dora/timer/millis/20
//!     outputs: [image]
//!   - id: viewer
//!     path: dynamic
//!     inputs:
//!       image:
//!         source: camera/image
//!         queue_size: 2
//!         queue_policy: drop_oldest
//! "#;
//! let dataflow = nerve_spec::parse_str(yaml, Path::new("dataflow.yml"))?;
//! let camera = dataflow.node("camera").expect("declared above");
//! assert_eq!(camera.path, NodePath::Dynamic);
//! assert_eq!(
//!     camera.inputs[0].source,
//!     InputSource::Timer { interval: Duration::from_millis(20) }
//! );
//! let viewer = dataflow.node("viewer").expect("declared above");
//! assert_eq!(viewer.inputs[0].queue_size, 2);
//! assert_eq!(viewer.inputs[0].policy, QueuePolicy::DropOldest);
//! assert_eq!(
//!     dataflow.readers_of("camera", "image"),
//!     vec![("viewer".to_string(), "image".to_string())]
//! );
//!
//! let broken = "nodes:\n  - id: viewer\n    path: dynamic\n    inputs:\n      image: camra/image\n";
//! let err = nerve_spec::parse_str(broken, Path::new("dataflow.yml")).expect_err("camra is a typo");
//! assert_eq!(
//!     err.to_string(),
//!     "dataflow.yml:5:14: nodes[viewer].inputs.image: unknown source node `camra` (known nodes: viewer)"
//! );
//! # Ok::<(), nerve_spec::SpecError>(())
//! ```
//!
//! # Format
//!
//! Top level: `nodes:` (required, a non-empty list), `deploy: {machine: ID}`
//! (the default machine; dora's `_unstable_deploy` too), `types:` (folders of message
//! definitions), `network: {discovery_range: host | subnet, connect: [ENDPOINT, ...]}` (see
//! [`NetworkSpec`]), `on_failure: continue | stop_all` (every node's default, see
//! [`FailurePolicy`]), `share: [NAME, ...]` (topic, service and action names the run uses in
//! the global scope rather than its own, see [`Dataflow::share`]), and dora's
//! `communication` and `version`, which are ignored with a warning.
//!
//! A node: `id` (required; letters, digits, `_`, `.`, `-`), `path` (required:
//! `dynamic`, a `.py` file, a file relative to the dataflow's directory, a
//! program on `PATH`, or an `https://` URL `nerve build` downloads), `name`, `description`, `args` (a string split like a
//! shell would, or a list), `env` (a mapping of scalars), `build` (a shell
//! command run in the dataflow's directory), `git` with `branch`, `tag` or `rev` (a repository
//! `nerve build` clones, see [`fetch`]), `inputs`, `outputs`, `deploy`, and
//! `on_host_lost` (`close` or `wait`: what its inputs fed from another machine do when that
//! machine is lost; see [`HostLossPolicy`]), `on_failure`, and dora's log keys
//! (`min_log_level`, `max_log_size`, `max_rotated_files`, `send_logs_as`, `send_stdout_as`; see
//! [`logs::NodeLogs`]).
//! The ids `timer`, `dora` and `topic` are reserved.
//!
//! An input is `node/output`, a topic (`topic/<name>`, any process's
//! publications on that [topic name](topic_name::canonical)), a timer
//! (`timer/millis/N`, `timer/secs/N`, `timer/hz/N`, each also with a `dora/`
//! prefix), the run's logs (`dora/logs[/LEVEL[/NODE]]`, see [`InputSource::Logs`]), or a mapping
//! `{source: …, queue_size: N, queue_policy: drop_oldest | backpressure}`.
//! A topic input drops its oldest messages when full (`drop_oldest`, its
//! default): it cannot make publishers wait. Topic inputs are not edges of the
//! dataflow; [`Dataflow::readers_of`] lists only node outputs' readers.
//!
//! A node's `params:` declares its [parameters](param): a mapping of keys (letters, digits, `_`;
//! `.` between groups) to a bool, int, float, string or a list of one of those, or the name of
//! a YAML file holding that mapping, relative to the dataflow's directory. Nested mappings group
//! keys: `pid: {kp: 1.0}` declares `pid.kp`.
//!
//! An output is an id, or a mapping `{id: image, topic: camera/image}` for an
//! output that is also published on a topic ([`NodeSpec::output_topics`]).
//!
//! Hostile input stays cheap: the YAML tree is built without recursion, with
//! nesting capped at [`MAX_DEPTH`] and alias expansion at [`MAX_NODES`].

#![warn(missing_docs)]

mod added;
mod custom;
mod error;
pub mod fetch;
mod fields;
pub mod logs;
mod modules;
pub mod operators;
pub mod param;
mod parse;
mod parse_logs;
mod parse_params;
mod parse_process;
mod paths;
mod port_types;
pub mod ros2;
mod spec;
pub mod topic_name;
mod tree;
mod validate;

use std::path::{Path, PathBuf};

pub use added::with_added_node;
pub use error::{Problem, SpecError};
pub use param::ParamValue;
pub use parse::{IdError, check_id};
pub use spec::{
    DEFAULT_QUEUE_SIZE, Dataflow, DiscoveryRange, FailurePolicy, HostLossPolicy, InputSource, InputSpec,
    MAX_QUEUE_SIZE, MAX_READERS_PER_OUTPUT, NetworkSpec, NodePath, NodeSpec, QueuePolicy, RealtimeSpec, RestartCount,
    RestartPolicy, RestartSpec, SchedPolicy, ServicesSpec,
};
pub use tree::{MAX_DEPTH, MAX_NODES};

use tree::Problems;

/// Reads and parses the dataflow file at `path`.
///
/// # Errors
/// [`SpecError::Io`] when the file cannot be read (or is not UTF-8),
/// [`SpecError::Invalid`] with every problem found otherwise.
pub fn load(path: &Path) -> Result<Dataflow, SpecError> {
    let text = std::fs::read_to_string(path).map_err(|source| SpecError::Io { file: path.to_path_buf(), source })?;
    parse_str(&text, path)
}

/// Parses dataflow text. `file` names the file in messages, and its directory
/// is the base for relative node paths; the file itself is not read.
///
/// # Errors
/// [`SpecError::Invalid`] with every problem found.
pub fn parse_str(text: &str, file: &Path) -> Result<Dataflow, SpecError> {
    let invalid = |problems| SpecError::Invalid { file: file.to_path_buf(), problems };
    // Editors on Windows may save a byte-order mark, which the YAML scanner
    // would otherwise read as part of the first key.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let root = match tree::parse(text) {
        Ok(Some(root)) => root,
        Ok(None) => {
            let mut p = Problems::default();
            p.push(tree::Mark::START, "(document)", "the file is empty: expected a mapping with a `nodes:` list");
            return Err(invalid(p.into_sorted()));
        }
        Err(problems) => return Err(invalid(problems)),
    };
    let base_dir = base_dir_of(file);
    let mut p = Problems::default();
    let parsed = parse::parse_document(&root, &base_dir, &mut p);
    validate::validate(&parsed.nodes, &mut p);
    port_types::check(&parsed.nodes, &parsed.types, &mut p);
    if !p.is_empty() {
        return Err(invalid(p.into_sorted()));
    }
    let mut nodes: Vec<NodeSpec> = parsed.nodes.into_iter().map(|n| n.spec).collect();
    logs::settle_log_readers(&mut nodes);
    Ok(Dataflow {
        file: file.to_path_buf(),
        base_dir,
        nodes,
        types: parsed.types,
        network: parsed.network,
        share: parsed.share,
        exit_when_nodes_finish: parsed.exit_when_nodes_finish,
        descriptor: root.to_json(),
    })
}

/// The directory of `file`, absolute, and canonical when it exists.
fn base_dir_of(file: &Path) -> PathBuf {
    let parent = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    parent.canonicalize().or_else(|_| std::path::absolute(parent)).unwrap_or_else(|_| parent.to_path_buf())
}

//! Which channels the bridge offers: every topic of this host that has a publisher, each
//! dataflow output among them, typed where the running dataflow declares a ROS 2 message type.
//!
//! A channel is named by its topic's key (see [`nerve_topic::run_scope`]): a global topic by its
//! name (`robot/pose`), a run's own topic, and so every dataflow output, as `~RUN/NAME`
//! (`~demo/camera/image`), the names `nerve topic list` shows in its TOPIC and RUN columns.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use nerve_runtime::inspect::RunStatus;
use nerve_spec::Dataflow;
use nerve_topic::Scope;
use nerve_topic::registry::Kind as EndpointKind;
use nerve_topic::run_scope::{self, RunScope};
use nerve_types::{Kind, PortKind, PortType, Registry, TypeName};

/// How a channel's messages go out.
#[derive(Debug, Clone)]
pub enum Encoding {
    /// CDR under the `ros2msg` schema of the ROS 2 message type the dataflow declares, read
    /// from the dataflow's own `types:` folders first.
    Cdr {
        /// The type.
        name: TypeName,
        /// Where its definition is found.
        registry: Arc<Registry>,
    },
    /// The transforms of nerve's `tf` and `tf_static` topics ([`nerve_tf::wire`]) as Foxglove's
    /// own `foxglove.FrameTransforms`, which its 3D panel draws as the frame tree.
    FrameTransforms,
    /// A JSON object per message ([`crate::json::message`]).
    Json,
}

impl Encoding {
    /// Whether two encodings send the same bytes (the same type, or both JSON).
    #[must_use]
    pub fn same(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Cdr { name: a, .. }, Self::Cdr { name: b, .. }) => a == b,
            (Self::FrameTransforms, Self::FrameTransforms) | (Self::Json, Self::Json) => true,
            _ => false,
        }
    }
}

/// The declared types of the dataflows that run on this host, by topic key; each run's dataflow
/// is read once, while it runs.
#[derive(Debug, Default)]
pub struct Types {
    runs: HashMap<String, BTreeMap<String, Encoding>>,
}

impl Types {
    /// The typed keys of `runs` (the dataflows running now); those of ended runs are forgotten.
    pub fn update(&mut self, runs: &[RunStatus]) {
        self.runs.retain(|id, _| runs.iter().any(|r| &r.run_id == id));
        for run in runs {
            if !self.runs.contains_key(&run.run_id) {
                self.runs.insert(run.run_id.clone(), typed_keys(run));
            }
        }
    }

    /// How the topic of `key` goes out: CDR when a running dataflow declares its type,
    /// Foxglove's transforms for the transform topics, else JSON.
    #[must_use]
    pub fn encoding(&self, key: &str) -> Encoding {
        if let Some(typed) = self.runs.values().find_map(|keys| keys.get(key)) {
            return typed.clone();
        }
        let (name, _) = scope_of(key);
        if name == nerve_tf::wire::TF_TOPIC || name == nerve_tf::wire::TF_STATIC_TOPIC {
            Encoding::FrameTransforms
        } else {
            Encoding::Json
        }
    }
}

/// The keys of `run`'s typed outputs with their types: an output's own `<node>/<output>`, or
/// the topic it names.
fn typed_keys(run: &RunStatus) -> BTreeMap<String, Encoding> {
    let mut keys = BTreeMap::new();
    // Without its file, its outputs still go out, as JSON.
    let Some(df) = dataflow_of(run) else { return keys };
    let registry = Arc::new(Registry::new(&df.types));
    let outputs = output_keys(&df, run);
    for node in &df.nodes {
        for (output, declared) in &node.output_types {
            let Some(name) = message_type(declared) else { continue };
            if let Some(key) = outputs.get(&(node.id.clone(), output.clone())) {
                keys.insert(key.clone(), Encoding::Cdr { name, registry: Arc::clone(&registry) });
            }
        }
    }
    keys
}

/// `run`'s dataflow as its file says now; `None`, logged, when the file cannot be read.
#[must_use]
pub fn dataflow_of(run: &RunStatus) -> Option<Dataflow> {
    nerve_spec::load(&run.dataflow)
        .inspect_err(|e| tracing::warn!(dataflow = %run.dataflow.display(), "cannot read a running dataflow: {e}"))
        .ok()
}

/// The topic key of each output of `df` run as `run`, by node and output: the output's own
/// `~RUN/<node>/<output>`, or the topic it names (`{id: …, topic: …}`), which is the run's own
/// unless the dataflow shares it.
#[must_use]
pub fn output_keys(df: &Dataflow, run: &RunStatus) -> BTreeMap<(String, String), String> {
    let scope_name = run.name.clone().unwrap_or_else(|| run.run_id.clone());
    let mut keys = BTreeMap::new();
    for node in &df.nodes {
        for output in &node.outputs {
            let (topic, scope) = match node.output_topics.get(output) {
                Some(topic) if df.share.iter().any(|s| s == topic) => (topic.clone(), RunScope::Shared),
                Some(topic) => (topic.clone(), RunScope::Run(scope_name.clone())),
                None => (format!("{}/{output}", node.id), RunScope::Run(scope_name.clone())),
            };
            if let Ok(resolved) = run_scope::resolve(&topic, &scope) {
                keys.insert((node.id.clone(), output.clone()), resolved.key);
            }
        }
    }
    keys
}

/// The ROS 2 message a port's declared type stands for, if it is one (not a part of a service
/// or action, nor a dora-rs type without a ROS 2 counterpart).
fn message_type(declared: &str) -> Option<TypeName> {
    match PortType::parse(declared).ok()?.kind {
        PortKind::Message(t) if t.kind == Kind::Msg => Some(t),
        _ => None,
    }
}

/// The keys of the topics of `domain` on this host that a process other than this one
/// publishes: the bridge's own publishers (client publish) are not offered back.
#[must_use]
pub fn published(domain: u32) -> Vec<String> {
    let me = std::process::id();
    nerve_topic::registry::topics(domain)
        .into_iter()
        .filter(|(_, entries)| entries.iter().any(|e| e.kind == EndpointKind::Pub && e.pid != me))
        .map(|(key, _)| key)
        .collect()
}

/// How far the bridge's subscriber to topic `key` must reach: the network when a publisher of
/// this host publishes there (then publishers of other hosts may too), else this host, which
/// needs no network session (every dataflow output's own topic is of this host).
#[must_use]
pub fn reach(domain: u32, key: &str) -> Scope {
    let endpoints = nerve_topic::registry::endpoints(domain, key);
    if endpoints.iter().any(|e| e.kind == EndpointKind::Pub && e.scope == Scope::Network) {
        Scope::Network
    } else {
        Scope::Host
    }
}

/// What a topic key names: the topic and whose it is.
#[must_use]
pub fn scope_of(key: &str) -> (String, RunScope) {
    match run_scope::split_key(key) {
        (Some(run), name) => (name.to_owned(), RunScope::Run(run.to_owned())),
        (None, name) => (name.to_owned(), RunScope::Shared),
    }
}

/// What changes between the channels offered and those found: the keys to withdraw (gone, or
/// now sent another way) and those to advertise (new, or sent another way).
#[must_use]
pub fn changes(offered: &BTreeMap<String, Encoding>, found: &BTreeMap<String, Encoding>) -> (Vec<String>, Vec<String>) {
    let differs = |key: &String, encoding: &Encoding, other: &BTreeMap<String, Encoding>| {
        other.get(key).is_none_or(|e| !e.same(encoding))
    };
    let withdraw = offered.iter().filter(|(k, e)| differs(k, e, found)).map(|(k, _)| k.clone()).collect();
    let advertise = found.iter().filter(|(k, e)| differs(k, e, offered)).map(|(k, _)| k.clone()).collect();
    (withdraw, advertise)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cdr(name: &str) -> Encoding {
        let name = TypeName::parse(name).unwrap_or_else(|e| panic!("{e}"));
        Encoding::Cdr { name, registry: Arc::new(Registry::new(&[])) }
    }

    #[test]
    fn new_topics_are_advertised_and_gone_ones_withdrawn() {
        let offered = BTreeMap::from([("a".to_owned(), Encoding::Json), ("b".to_owned(), Encoding::Json)]);
        let found = BTreeMap::from([("b".to_owned(), Encoding::Json), ("c".to_owned(), Encoding::Json)]);
        assert_eq!(changes(&offered, &found), (vec!["a".to_owned()], vec!["c".to_owned()]));
        assert_eq!(changes(&found, &found), (vec![], vec![]));
    }

    #[test]
    fn a_topic_whose_type_changes_is_advertised_again() {
        let offered = BTreeMap::from([("~r/cam/image".to_owned(), Encoding::Json)]);
        let found = BTreeMap::from([("~r/cam/image".to_owned(), cdr("sensor_msgs/Image"))]);
        let key = vec!["~r/cam/image".to_owned()];
        assert_eq!(changes(&offered, &found), (key.clone(), key));
        let same = BTreeMap::from([("~r/cam/image".to_owned(), cdr("sensor_msgs/msg/Image"))]);
        assert_eq!(changes(&found, &same), (vec![], vec![]));
    }

    #[test]
    fn the_transform_topics_go_out_as_foxglove_transforms() {
        let types = Types::default();
        for key in ["tf", "tf_static", "~demo/tf"] {
            assert!(matches!(types.encoding(key), Encoding::FrameTransforms), "{key}");
        }
        assert!(matches!(types.encoding("robot/tf"), Encoding::Json));
    }

    #[test]
    fn a_key_names_its_run_or_none() {
        assert_eq!(scope_of("~demo/camera/image"), ("camera/image".to_owned(), RunScope::Run("demo".to_owned())));
        assert_eq!(scope_of("robot/pose"), ("robot/pose".to_owned(), RunScope::Shared));
    }

    #[test]
    fn only_messages_are_sent_as_cdr() {
        assert!(message_type("sensor_msgs/Image").is_some());
        assert!(message_type("std_srvs/srv/SetBool_Request").is_none());
        assert!(message_type("std/core/v1/Float64").is_none());
    }
}

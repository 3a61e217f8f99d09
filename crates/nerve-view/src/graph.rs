//! The graph the page draws: each run of this host with its nodes and edges as the last look
//! measured them ([`crate::stats`]), and the channels that can be opened.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use nerve_foxglove::channels;
use nerve_message::run_status::RunStatus;
use nerve_topic::run_scope::{self, RunScope};
use serde_json::{Value, json};

use crate::stats::NodeStats;

/// The graph before the first look.
pub(crate) const EMPTY: &str = r#"{"runs":null,"channels":[]}"#;

/// The topic key each output of each running dataflow publishes on, read from the dataflow's
/// file once per run: an output may name a topic (`{id: …, topic: …}`) in place of its own.
#[derive(Debug, Default)]
pub(crate) struct OutputKeys {
    runs: HashMap<String, BTreeMap<(String, String), String>>,
}

impl OutputKeys {
    /// Reads the dataflows of `runs` not read yet, and forgets those of ended runs.
    pub(crate) fn update(&mut self, runs: &[RunStatus]) {
        self.runs.retain(|id, _| runs.iter().any(|r| &r.run_id == id));
        for run in runs {
            self.runs.entry(run.run_id.clone()).or_insert_with(|| {
                channels::dataflow_of(run).map(|df| channels::output_keys(&df, run)).unwrap_or_default()
            });
        }
    }
}

/// The graph JSON of `runs`, whose nodes `stats` measured, with the channels of `domain`.
pub(crate) fn json(
    runs: &[RunStatus],
    stats: &[Vec<NodeStats>],
    keys: &OutputKeys,
    domain: u32,
    interval: Duration,
) -> String {
    let channels: BTreeSet<String> = channels::published(domain).into_iter().collect();
    let none = BTreeMap::new();
    let runs: Vec<Value> = runs
        .iter()
        .zip(stats)
        .map(|(run, nodes)| run_json(run, nodes, keys.runs.get(&run.run_id).unwrap_or(&none), &channels))
        .collect();
    json!({ "interval_s": interval.as_secs_f64(), "runs": runs, "channels": channels }).to_string()
}

fn run_json(
    run: &RunStatus,
    nodes: &[NodeStats],
    keys: &BTreeMap<(String, String), String>,
    channels: &BTreeSet<String>,
) -> Value {
    let scope = run.name.clone().unwrap_or_else(|| run.run_id.clone());
    // The channel of a node's output, while it has a publisher: the topic the dataflow gives it,
    // else its own, `~RUN/node/output` (when the file could not be read).
    let channel = |node: &str, output: &str| {
        keys.get(&(node.to_owned(), output.to_owned()))
            .cloned()
            .or_else(|| {
                run_scope::resolve(&format!("{node}/{output}"), &RunScope::Run(scope.clone())).ok().map(|r| r.key)
            })
            .filter(|key| channels.contains(key))
    };
    let mut edges = Vec::new();
    let nodes: Vec<Value> = nodes
        .iter()
        .zip(&run.nodes)
        .map(|(stats, status)| {
            for input in &stats.inputs {
                let Some((from, output)) = input.source.as_deref().and_then(|s| s.split_once('/')) else { continue };
                let mut edge = serde_json::to_value(input).unwrap_or_default();
                edge["from"] = from.into();
                edge["output"] = output.into();
                edge["to"] = stats.id.clone().into();
                edge["input"] = input.id.clone().into();
                edge["channel"] = channel(from, output).into();
                edges.push(edge);
            }
            let outputs: Vec<Value> = status
                .config
                .get("outputs")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                // An output is its id, or `{id: …, topic: …}`.
                .filter_map(|output| output.as_str().or_else(|| output.get("id")?.as_str()))
                .map(|output| json!({ "id": output, "channel": channel(&stats.id, output) }))
                .collect();
            let mut node = serde_json::to_value(stats).unwrap_or_default();
            node["outputs"] = outputs.into();
            if let Some(object) = node.as_object_mut() {
                object.remove("inputs");
            }
            node
        })
        .collect();
    json!({
        "run_id": run.run_id,
        "name": run.name,
        "dataflow": run.dataflow,
        "state": run.state.as_str(),
        "nodes": nodes,
        "edges": edges,
    })
}

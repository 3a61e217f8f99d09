//! `nerve node list|info`: the nodes of the dataflows running on this host, like `ros2 node`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use clap::Subcommand;
use nerve_runtime::inspect::{self, NodeStatus, RunStatus};
use nerve_runtime::param::{ParamOp, ParamValue};
use serde_json::Value;

/// `nerve node`.
#[derive(Debug, clap::Args)]
pub struct NodeArgs {
    #[command(subcommand)]
    command: NodeCommand,
}

#[derive(Debug, Subcommand)]
enum NodeCommand {
    /// List every node of the running dataflows, with its state, pid and restarts.
    List {
        /// Print JSON (one array of nodes) instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show one node: its state, program, inputs (with their queues), outputs, services and
    /// actions as the run declared them, and its parameters' current values.
    Info {
        /// The node's id.
        node: String,
        /// The dataflow's name or run id (needed when several running dataflows have the node).
        #[arg(long, value_name = "NAME|ID")]
        dataflow: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `nerve node …`.
pub fn run(args: &NodeArgs) -> anyhow::Result<i32> {
    match &args.command {
        NodeCommand::List { json } => {
            let runs = inspect::running();
            if *json {
                let nodes: Vec<Value> =
                    runs.iter().flat_map(|r| r.nodes.iter().map(move |n| node_json(r, n))).collect();
                println!("{}", serde_json::to_string_pretty(&nodes)?);
            } else {
                print!("{}", list_table(&runs));
            }
            Ok(0)
        }
        NodeCommand::Info { node, dataflow, json } => {
            let (run, i) = inspect::find_node(node, dataflow.as_deref())?;
            // The node itself answers with its parameters' current values.
            let params = inspect::param(&run, node, ParamOp::List)
                .map_err(|e| e.to_string())
                .and_then(|answer| answer.map_err(|e| e.to_string()));
            if *json {
                let mut value = node_json(&run, &run.nodes[i]);
                value["params"] = match &params {
                    Ok(params) => serde_json::to_value(params)?,
                    Err(why) => serde_json::json!({ "error": why }),
                };
                println!("{}", serde_json::to_string_pretty(&value)?);
            } else {
                print!("{}{}", info(&run, &run.nodes[i]), params_text(&params));
            }
            Ok(0)
        }
    }
}

fn params_text(params: &Result<BTreeMap<String, ParamValue>, String>) -> String {
    match params {
        Ok(params) if params.is_empty() => String::new(),
        Ok(params) => {
            let mut s = "params:\n".to_owned();
            for (key, value) in params {
                let _ = writeln!(s, "  {key} = {value} ({})", value.type_name());
            }
            s
        }
        Err(why) => format!("params: unavailable ({why})\n"),
    }
}

fn node_json(run: &RunStatus, node: &NodeStatus) -> Value {
    serde_json::json!({ "dataflow": run.name, "run_id": run.run_id, "node": node })
}

fn list_table(runs: &[RunStatus]) -> String {
    if runs.iter().all(|r| r.nodes.is_empty()) {
        return "no dataflow is running\n".to_owned();
    }
    let mut s = format!("{:<40} {:<28} {:>8} {:>8}\n", "dataflow/node", "state", "pid", "restarts");
    for run in runs {
        let dataflow = run.name.as_deref().unwrap_or(&run.run_id);
        for n in &run.nodes {
            let pid = n.pid.map_or_else(|| "-".to_owned(), |p| p.to_string());
            let _ = writeln!(s, "{:<40} {:<28} {:>8} {:>8}", format!("{dataflow}/{}", n.id), n.state, pid, n.restarts);
        }
    }
    s
}

fn info(run: &RunStatus, node: &NodeStatus) -> String {
    let config = &node.config;
    let mut s = String::new();
    let _ = writeln!(s, "node: {}", node.id);
    let _ = writeln!(s, "dataflow: {}", crate::runs::headline(run));
    let pid = node.pid.map_or_else(|| "-".to_owned(), |p| p.to_string());
    let _ = writeln!(s, "state: {}, pid {pid}, {} restart(s)", node.state, node.restarts);
    if let Some(path) = config.get("path").and_then(Value::as_str) {
        let _ = writeln!(s, "path: {path}");
    }
    let _ = writeln!(s, "inputs:");
    for (id, source) in config.get("inputs").and_then(Value::as_object).into_iter().flatten() {
        let source = source.as_str().or_else(|| source.get("source").and_then(Value::as_str)).unwrap_or("?");
        let queue = node
            .inputs
            .iter()
            .find(|q| q.id == *id)
            .map_or_else(String::new, |q| format!("  (queued {}/{}, {} dropped)", q.queued, q.capacity, q.dropped));
        let _ = writeln!(s, "  {id} <- {source}{queue}");
    }
    let _ = writeln!(s, "outputs:");
    for output in config.get("outputs").and_then(Value::as_array).into_iter().flatten() {
        let id = output.as_str().or_else(|| output.get("id").and_then(Value::as_str)).unwrap_or("?");
        match output.get("topic").and_then(Value::as_str) {
            Some(topic) => _ = writeln!(s, "  {id} -> topic {topic}"),
            None => _ = writeln!(s, "  {id}"),
        }
    }
    for kind in ["services", "actions"] {
        for role in ["serve", "call"] {
            let names: Vec<&str> = config
                .get(kind)
                .and_then(|k| k.get(role))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if !names.is_empty() {
                let _ = writeln!(s, "{kind} ({role}): {}", names.join(", "));
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use nerve_runtime::inspect::{InputStatus, RunState};

    fn run() -> RunStatus {
        let config = serde_json::json!({
            "id": "detector",
            "path": "detector.py",
            "inputs": {"image": {"source": "camera/image", "queue_size": 1}, "tick": "dora/timer/hz/30"},
            "outputs": ["boxes", {"id": "pose", "topic": "robot/pose"}],
            "services": {"serve": ["detect"]},
        });
        RunStatus {
            run_id: "0191-abc".into(),
            name: Some("demo".into()),
            dataflow: "/robot/dataflow.yml".into(),
            log_dir: "/robot/out".into(),
            pid: 10,
            state: RunState::Running,
            nodes: vec![NodeStatus {
                id: "detector".into(),
                pid: Some(42),
                state: "running".into(),
                restarts: 1,
                inputs: vec![InputStatus { id: "image".into(), queued: 1, capacity: 1, dropped: 7, received: 9 }],
                config,
                machine: None,
            }],
            coordinator: None,
            error: None,
        }
    }

    #[test]
    fn info_shows_sources_queues_outputs_and_services() {
        let r = run();
        let text = info(&r, &r.nodes[0]);
        assert_eq!(
            text,
            "node: detector\n\
             dataflow: demo (0191-abc): running, /robot/dataflow.yml\n\
             state: running, pid 42, 1 restart(s)\n\
             path: detector.py\n\
             inputs:\n  image <- camera/image  (queued 1/1, 7 dropped)\n  tick <- dora/timer/hz/30\n\
             outputs:\n  boxes\n  pose -> topic robot/pose\n\
             services (serve): detect\n"
        );
    }

    #[test]
    fn list_names_each_node_by_its_dataflow() {
        let text = list_table(&[run()]);
        assert!(
            text.lines().nth(1).is_some_and(|l| l.starts_with("demo/detector") && l.ends_with("42        1")),
            "{text}"
        );
        assert_eq!(list_table(&[]), "no dataflow is running\n");
    }
}

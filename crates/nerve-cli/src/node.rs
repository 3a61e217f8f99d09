//! `nerve node list|info`: the nodes of the dataflows running on this host, like `ros2 node`;
//! `nerve node add|remove|connect|disconnect`: changes to a running graph, like dora-rs's.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Subcommand;
use nerve_message::graph_edit::{GraphEdit, Port};

use crate::cluster::NetArgs;
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
    /// Add a node to a running dataflow: the node's YAML (one node mapping, as a dataflow's
    /// `nodes:` list holds) in a file of its own. Its inputs from other nodes' outputs are fed
    /// from their topics; give it more with `nerve node connect`.
    Add {
        /// The node's YAML file.
        file: Option<PathBuf>,
        /// The node's YAML file (dora-rs's spelling).
        #[arg(long = "from-yaml", value_name = "FILE", conflicts_with = "file")]
        from_yaml: Option<PathBuf>,
        /// The dataflow's name or run id [default: the only one running on this host].
        #[arg(long, short = 'd', value_name = "NAME|ID")]
        dataflow: Option<String>,
        #[command(flatten)]
        net: NetArgs,
    },
    /// Remove a node from a running dataflow: it gets a stop event, and is killed if it has not
    /// exited after the grace period. The inputs it fed close.
    #[command(override_usage = "nerve node remove [OPTIONS] [DATAFLOW] <NODE>")]
    Remove {
        /// `[DATAFLOW] NODE`: the node's id, after the dataflow's name or run id if `--dataflow`
        /// does not give it (dora-rs's examples write `dora node remove demo filter`).
        #[arg(num_args = 1..=2, value_name = "ARGS", required = true)]
        args: Vec<String>,
        /// The dataflow's name or run id [default: the only one running on this host].
        #[arg(long, short = 'd', value_name = "NAME|ID")]
        dataflow: Option<String>,
        /// Time between the stop event and the kill (e.g. `500ms`, `5s`) [default: the run's
        /// grace period].
        #[arg(long, value_parser = humantime::parse_duration)]
        grace: Option<std::time::Duration>,
        #[command(flatten)]
        net: NetArgs,
    },
    /// Feed an output to an input of a running node (`camera/image detector/image`); the input
    /// is created if the node does not declare it.
    #[command(override_usage = "nerve node connect [OPTIONS] [DATAFLOW] <SOURCE> <TARGET>")]
    Connect {
        #[command(flatten)]
        ends: Ends,
    },
    /// Stop feeding an output to an input: the input closes once what is queued is read.
    #[command(override_usage = "nerve node disconnect [OPTIONS] [DATAFLOW] <SOURCE> <TARGET>")]
    Disconnect {
        #[command(flatten)]
        ends: Ends,
    },
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

/// The two ends of an edge, and the dataflow.
#[derive(Debug, clap::Args)]
struct Ends {
    /// `[DATAFLOW] SOURCE TARGET`: the output as `node/output` and the input as `node/input`,
    /// after the dataflow's name or run id if `--dataflow` does not give it.
    #[arg(num_args = 2..=3, value_name = "ARGS", required = true)]
    args: Vec<String>,
    /// The dataflow's name or run id [default: the only one running on this host].
    #[arg(long, short = 'd', value_name = "NAME|ID")]
    dataflow: Option<String>,
    #[command(flatten)]
    net: NetArgs,
}

impl Ends {
    /// The dataflow, the output and the input.
    fn parse(&self) -> anyhow::Result<(Option<String>, Port, Port)> {
        let (dataflow, [source, target]) = split_dataflow(&self.args, self.dataflow.as_ref())?;
        Ok((
            dataflow,
            Port::parse(source).map_err(anyhow::Error::msg)?,
            Port::parse(target).map_err(anyhow::Error::msg)?,
        ))
    }
}

/// `args` as `[DATAFLOW] REST...`: the dataflow from `--dataflow`, or else the first argument
/// when there is one more than `N`.
fn split_dataflow<'a, const N: usize>(
    args: &'a [String],
    flag: Option<&String>,
) -> anyhow::Result<(Option<String>, [&'a String; N])> {
    let (first, rest) = if args.len() > N { (args.first(), &args[1..]) } else { (None, args) };
    let rest: [&String; N] = std::array::from_fn(|i| &rest[i]);
    match (first, flag) {
        (Some(a), Some(b)) if a != b => anyhow::bail!("the dataflow is named twice: `{a}` and `--dataflow {b}`"),
        (first, flag) => Ok((first.or(flag).cloned(), rest)),
    }
}

/// Runs `nerve node …`.
pub fn run(args: &NodeArgs) -> anyhow::Result<i32> {
    match &args.command {
        NodeCommand::Add { file, from_yaml, dataflow, net } => {
            let Some(file) = from_yaml.as_ref().or(file.as_ref()) else {
                anyhow::bail!("name the node's YAML file: `nerve node add FILE.yml` (or `--from-yaml FILE.yml`)");
            };
            let yaml = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
            let file = std::path::absolute(file).unwrap_or_else(|_| file.clone());
            edit(net, dataflow.as_deref(), GraphEdit::AddNode { yaml, file })
        }
        NodeCommand::Remove { args, dataflow, grace, net } => {
            let (dataflow, [node]) = split_dataflow(args, dataflow.as_ref())?;
            let grace_ms = grace.map(|g| u64::try_from(g.as_millis()).unwrap_or(u64::MAX));
            edit(net, dataflow.as_deref(), GraphEdit::RemoveNode { node: node.clone(), grace_ms })
        }
        NodeCommand::Connect { ends } => {
            let (dataflow, source, target) = ends.parse()?;
            edit(&ends.net, dataflow.as_deref(), GraphEdit::Connect { source, target })
        }
        NodeCommand::Disconnect { ends } => {
            let (dataflow, source, target) = ends.parse()?;
            edit(&ends.net, dataflow.as_deref(), GraphEdit::Disconnect { source, target })
        }
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

/// Sends `edit` to the dataflow `dataflow` names (one of the cluster's, through its
/// coordinator, or one of this host's), or the only one running on this host, and says what
/// it did.
fn edit(net: &NetArgs, dataflow: Option<&str>, edit: GraphEdit) -> anyhow::Result<i32> {
    let on_cluster = match dataflow {
        Some(which) => crate::runs::on_cluster(net, which, true)?,
        None => None,
    };
    let answer = match on_cluster {
        Some((cluster, uuid)) => match cluster.edit(&uuid, edit) {
            Ok(done) => Ok(done),
            Err(nerve_cluster::ClusterError::Refused(why)) => Err(why),
            Err(e) => return Err(e.into()),
        },
        None => inspect::edit(&inspect::find_or_only(dataflow)?, edit)?,
    };
    match answer {
        Ok(done) => {
            println!("{done}");
            Ok(0)
        }
        Err(why) => {
            eprintln!("nerve: {why}");
            Ok(1)
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

    #[test]
    fn the_dataflow_comes_first_or_by_flag() -> anyhow::Result<()> {
        let args = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let demo = "demo".to_owned();
        let (first, alone, ends) = (args(&["demo", "filter"]), args(&["filter"]), args(&["a/x", "b/y"]));
        let (df, [node]) = split_dataflow::<1>(&first, None)?;
        assert_eq!((df.as_deref(), node.as_str()), (Some("demo"), "filter"));
        let (df, [node]) = split_dataflow::<1>(&alone, Some(&demo))?;
        assert_eq!((df.as_deref(), node.as_str()), (Some("demo"), "filter"));
        let (df, [a, b]) = split_dataflow::<2>(&ends, None)?;
        assert_eq!((df, a.as_str(), b.as_str()), (None, "a/x", "b/y"));
        // The same name both ways is no contradiction.
        assert!(split_dataflow::<1>(&first, Some(&demo)).is_ok());
        assert!(split_dataflow::<1>(&first, Some(&"other".to_owned())).is_err());
        Ok(())
    }

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
                inputs: vec![InputStatus {
                    id: "image".into(),
                    queued: 1,
                    capacity: 1,
                    dropped: 7,
                    received: 9,
                    ..InputStatus::default()
                }],
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

//! `nerve param list|get|set`: a running node's parameters, read and set through its run.

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::Context;
use clap::Subcommand;
use nerve_runtime::inspect;
use nerve_runtime::param::{ParamOp, ParamValue};

use crate::cluster::NetArgs;

/// `nerve param`.
#[derive(Debug, clap::Args)]
pub struct ParamArgs {
    #[command(subcommand)]
    command: ParamCommand,
}

#[derive(Debug, Subcommand)]
enum ParamCommand {
    /// List a node's parameters, their types and values.
    List {
        #[command(flatten)]
        node: NodeArgs,
        /// Print a JSON object of key to `{"type": …, "value": …}`.
        #[arg(long)]
        json: bool,
    },
    /// Print one parameter's value.
    Get {
        #[command(flatten)]
        node: NodeArgs,
        /// The parameter.
        key: String,
        /// Print `{"type": …, "value": …}` as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Set a parameter; the node's on-change callbacks may refuse the value (the reason is printed).
    Set {
        #[command(flatten)]
        node: NodeArgs,
        /// The parameter.
        key: String,
        /// The value, written as YAML: `1.5`, `true`, `fast`, `"3"` (a string), `[1, 2]`.
        #[arg(allow_hyphen_values = true)]
        value: String,
    },
}

#[derive(Debug, clap::Args)]
struct NodeArgs {
    /// The node's id.
    node: String,
    /// The dataflow (its `--name` or run id) holding the node, when several running dataflows
    /// have a node of that id.
    #[arg(long, value_name = "NAME|ID")]
    dataflow: Option<String>,
    #[command(flatten)]
    net: NetArgs,
}

/// Runs `nerve param …`; a refusal (unknown node or key, wrong type, a callback's rejection)
/// is an error, so the exit code is not zero.
pub fn run(args: &ParamArgs) -> anyhow::Result<i32> {
    let (node, op) = match &args.command {
        ParamCommand::List { node, .. } => (node, ParamOp::List),
        ParamCommand::Get { node, key, .. } => (node, ParamOp::Get { key: key.clone() }),
        ParamCommand::Set { node, key, value } => {
            let value = nerve_spec::param::parse_value(value)
                .map_err(|why| anyhow::anyhow!("cannot read the value `{value}`: {why}"))?;
            (node, ParamOp::Set { key: key.clone(), value })
        }
    };
    // A node of a dataflow of the cluster is asked on its machine, wherever that is.
    let on_cluster = match crate::runs::cluster(&node.net)? {
        Some(cluster) => cluster.param(node.dataflow.as_deref(), &node.node, op.clone())?,
        None => None,
    };
    let params = match on_cluster {
        Some(answer) => answer?,
        None => {
            let (run, _) = inspect::find_node(&node.node, node.dataflow.as_deref())?;
            inspect::param(&run, &node.node, op)
                .with_context(|| format!("asking {} for node `{}`'s parameters", inspect::label(&run), node.node))??
        }
    };
    let mut out = std::io::stdout().lock();
    match &args.command {
        ParamCommand::List { json: true, .. } => writeln!(out, "{}", serde_json::to_string_pretty(&params)?)?,
        ParamCommand::List { json: false, .. } if params.is_empty() => {
            writeln!(out, "node `{}` has no parameters", node.node)?;
        }
        ParamCommand::List { json: false, .. } => {
            let width = params.keys().map(String::len).max().unwrap_or(0);
            for (key, value) in &params {
                writeln!(out, "{key:<width$}  {:<14}  {value}", value.type_name())?;
            }
        }
        ParamCommand::Get { key, json, .. } => {
            let value = only(&params, key)?;
            if *json {
                writeln!(out, "{}", serde_json::to_string(value)?)?;
            } else {
                writeln!(out, "{value}")?;
            }
        }
        ParamCommand::Set { key, .. } => writeln!(out, "{} {key} = {}", node.node, only(&params, key)?)?,
    }
    Ok(0)
}

fn only<'a>(params: &'a BTreeMap<String, ParamValue>, key: &str) -> anyhow::Result<&'a ParamValue> {
    params.get(key).with_context(|| format!("the node's answer lacks `{key}`"))
}

//! The parameters of the nodes running on this host, read and set from Foxglove's Parameters
//! panel as `nerve param` does.
//!
//! A parameter is named `NODE/KEY` (`controller/speed`), or `RUN/NODE/KEY` when two running
//! dataflows have a node of that id (RUN: the dataflow's `--name`, else its run id).

use foxglove::websocket::{
    AnyClient, GetParametersResponder, Parameter, ParameterHandler, ParameterType, ParameterValue,
    SetParametersResponder,
};
use nerve_runtime::inspect::{self, RunStatus};
use nerve_runtime::param::{ParamOp, ParamValue};

use crate::error::ParamSetError;

/// Answers Foxglove's parameter requests from the running nodes.
#[derive(Debug)]
pub struct Handler;

impl ParameterHandler for Handler {
    fn get(
        &self,
        _client: AnyClient,
        names: Vec<String>,
        _request_id: Option<String>,
        responder: GetParametersResponder,
    ) {
        // Each node is asked through its run, which may take a while: off the server's runtime.
        std::thread::spawn(move || responder.respond(get(&names)));
    }

    fn set(
        &self,
        client: AnyClient,
        parameters: Vec<Parameter>,
        _request_id: Option<String>,
        responder: SetParametersResponder,
    ) {
        std::thread::spawn(move || {
            let mut set = Vec::new();
            for parameter in parameters {
                match set_one(&parameter) {
                    Ok(p) => set.push(p),
                    Err(why) => client.send_error(format!("cannot set `{}`: {why}", parameter.name)),
                }
            }
            responder.respond(set);
        });
    }
}

/// The parameters named, or every parameter of every running node when none is.
fn get(names: &[String]) -> Vec<Parameter> {
    let runs = inspect::running();
    let mut all = Vec::new();
    for run in &runs {
        for node in &run.nodes {
            let prefix = node_name(&runs, run, &node.id);
            // Only the nodes asked about are asked.
            if !names.is_empty() && !names.iter().any(|n| n.strip_prefix(&prefix).is_some_and(|k| k.starts_with('/'))) {
                continue;
            }
            // A node that is not running has no parameters to read (they live in its process).
            let Ok(Ok(params)) = inspect::param(run, &node.id, ParamOp::List) else { continue };
            all.extend(params.iter().map(|(key, value)| parameter_of(format!("{prefix}/{key}"), value)));
        }
    }
    if !names.is_empty() {
        all.retain(|p| names.contains(&p.name));
    }
    all
}

/// How a node is named in its parameters' names: by its id, or `RUN/NODE` when several
/// running dataflows have a node of that id.
fn node_name(runs: &[RunStatus], run: &RunStatus, node: &str) -> String {
    let with_node = runs.iter().filter(|r| r.nodes.iter().any(|n| n.id == node)).count();
    if with_node > 1 { format!("{}/{node}", run.name.as_deref().unwrap_or(&run.run_id)) } else { node.to_owned() }
}

/// Sets one parameter; its value as the node stored it.
fn set_one(parameter: &Parameter) -> Result<Parameter, ParamSetError> {
    let (run, node, key) = split_name(&parameter.name)?;
    let json = parameter.value.as_ref().map(to_json).ok_or(ParamSetError::NoValue)?;
    let value = ParamValue::from_json(&json)?;
    let (status, _) = inspect::find_node(node, run)?;
    let stored = inspect::param(&status, node, ParamOp::Set { key: key.to_owned(), value })??;
    let value =
        stored.get(key).ok_or_else(|| ParamSetError::NoAnswer { node: node.to_owned(), key: key.to_owned() })?;
    Ok(parameter_of(parameter.name.clone(), value))
}

/// `NODE/KEY` or `RUN/NODE/KEY` as (run, node, key).
fn split_name(name: &str) -> Result<(Option<&str>, &str, &str), ParamSetError> {
    match name.split('/').collect::<Vec<_>>()[..] {
        [node, key] => Ok((None, node, key)),
        [run, node, key] => Ok((Some(run), node, key)),
        _ => Err(ParamSetError::Name(name.to_owned())),
    }
}

/// A nerve parameter as Foxglove's: floats keep a type hint, so `2.0` is not taken for an int.
fn parameter_of(name: String, value: &ParamValue) -> Parameter {
    let r#type = match value {
        ParamValue::Float(_) => Some(ParameterType::Float64),
        ParamValue::FloatList(_) => Some(ParameterType::Float64Array),
        _ => None,
    };
    Parameter { name, r#type, value: Some(from_json(&value.to_json())) }
}

fn from_json(json: &serde_json::Value) -> ParameterValue {
    match json {
        serde_json::Value::Bool(b) => ParameterValue::Bool(*b),
        serde_json::Value::Number(n) => {
            n.as_i64().map_or_else(|| ParameterValue::Float64(n.as_f64().unwrap_or(f64::NAN)), ParameterValue::Integer)
        }
        serde_json::Value::String(s) => ParameterValue::String(s.clone()),
        serde_json::Value::Array(items) => ParameterValue::Array(items.iter().map(from_json).collect()),
        serde_json::Value::Object(map) => {
            ParameterValue::Dict(map.iter().map(|(k, v)| (k.clone(), from_json(v))).collect())
        }
        serde_json::Value::Null => ParameterValue::String(String::new()),
    }
}

fn to_json(value: &ParameterValue) -> serde_json::Value {
    match value {
        ParameterValue::Integer(i) => (*i).into(),
        ParameterValue::Float64(f) => {
            serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, serde_json::Value::Number)
        }
        ParameterValue::Bool(b) => (*b).into(),
        ParameterValue::String(s) => s.clone().into(),
        ParameterValue::Array(items) => items.iter().map(to_json).collect(),
        ParameterValue::Dict(map) => {
            map.iter().map(|(k, v)| (k.clone(), to_json(v))).collect::<serde_json::Map<_, _>>().into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_give_the_node_and_the_key() {
        assert_eq!(split_name("controller/speed").ok(), Some((None, "controller", "speed")));
        assert_eq!(split_name("demo/controller/pid.kp").ok(), Some((Some("demo"), "controller", "pid.kp")));
        assert!(split_name("speed").is_err());
    }

    #[test]
    fn values_cross_both_ways_and_floats_stay_floats() {
        let p = parameter_of("n/k".into(), &ParamValue::Float(2.0));
        assert_eq!(p.r#type, Some(ParameterType::Float64));
        assert_eq!(p.value, Some(ParameterValue::Float64(2.0)));
        let list = parameter_of("n/l".into(), &ParamValue::IntList(vec![1, 2]));
        assert_eq!(
            list.value,
            Some(ParameterValue::Array(vec![ParameterValue::Integer(1), ParameterValue::Integer(2)]))
        );
        let back = list.value.as_ref().map(to_json).map(|j| ParamValue::from_json(&j));
        assert_eq!(back, Some(Ok(ParamValue::IntList(vec![1, 2]))));
    }
}

//! Reading and setting a node's parameters at runtime: what a tool (`nerve param`) asks, what the
//! node answers, and why it may refuse.
//!
//! A tool sends [`NodeRequest::Param`](crate::node_to_runtime::NodeRequest::Param) to the run's
//! runtime; the runtime forwards the [`ParamOp`] to the node as
//! [`RuntimeMessage::ParamRequest`](crate::runtime_to_node::RuntimeMessage::ParamRequest) with a
//! request id; the node answers with
//! [`NodeRequest::ParamReply`](crate::node_to_runtime::NodeRequest::ParamReply) carrying that id,
//! and the runtime relays the [`ParamAnswer`] to the tool.

use std::collections::BTreeMap;

pub use nerve_spec::param::ParamValue;
use serde::{Deserialize, Serialize};

/// What a tool asks of a node's parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ParamOp {
    /// Every parameter and its value.
    List,
    /// One parameter's value.
    Get {
        /// The parameter.
        key: String,
    },
    /// Sets a parameter, if its type fits and every on-change callback of the node accepts it.
    Set {
        /// The parameter.
        key: String,
        /// The new value.
        value: ParamValue,
    },
}

/// The answer: the parameters asked for (all of them for a list, the one read or set otherwise),
/// or why not.
pub type ParamAnswer = Result<BTreeMap<String, ParamValue>, ParamError>;

/// Why a parameter could not be read or set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "error", rename_all = "snake_case")]
pub enum ParamError {
    /// The node has no parameter of that name.
    #[error("node `{node}` has no parameter `{key}` (its parameters: {})", or_none(known))]
    UnknownKey {
        /// Node id.
        node: String,
        /// The key asked for.
        key: String,
        /// The keys the node has.
        known: Vec<String>,
    },
    /// The value is not of the parameter's declared type.
    #[error("node `{node}`: parameter `{key}` is {expected}, not {found}")]
    TypeMismatch {
        /// Node id.
        node: String,
        /// The parameter.
        key: String,
        /// Its declared type, with article (`a float`).
        expected: String,
        /// The type of the value given, with article (`a string`).
        found: String,
    },
    /// An on-change callback of the node refused the value.
    #[error("node `{node}` rejected {key} = {value}: {reason}")]
    Rejected {
        /// Node id.
        node: String,
        /// The parameter.
        key: String,
        /// The value refused, as `nerve param set` takes it.
        value: String,
        /// The callback's reason.
        reason: String,
    },
    /// The key is not a valid parameter key.
    #[error("node `{node}`: {reason}")]
    BadKey {
        /// Node id.
        node: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The run has no node of that name.
    #[error("the dataflow has no node `{node}` (its nodes: {})", or_none(known))]
    UnknownNode {
        /// The node asked for.
        node: String,
        /// The run's nodes.
        known: Vec<String>,
    },
    /// The node has no process connected to the runtime now.
    #[error("node `{node}` is not running ({state}): its parameters live in its process")]
    NotRunning {
        /// Node id.
        node: String,
        /// What it is doing instead (`finished`, `restarting`…).
        state: String,
    },
    /// The node did not answer in time (busy in a long callback, or stuck).
    #[error("node `{node}` did not answer within {waited_ms} ms")]
    NoAnswer {
        /// Node id.
        node: String,
        /// How long the runtime waited.
        waited_ms: u64,
    },
}

fn or_none(list: &[String]) -> String {
    if list.is_empty() { "none".to_owned() } else { list.join(", ") }
}

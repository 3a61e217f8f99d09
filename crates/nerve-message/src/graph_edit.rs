//! A tool's change to a running graph (`nerve node add|remove|connect|disconnect`), as dora-rs's
//! `dora node` commands make them: sent to the run's runtime, which answers with
//! [`RuntimeMessage::Edited`](crate::runtime_to_node::RuntimeMessage::Edited).

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One change to a running graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "edit", rename_all = "snake_case")]
pub enum GraphEdit {
    /// Adds the node `yaml` declares (one node mapping, as a dataflow's `nodes:` list holds),
    /// read from `file`: its relative paths are relative to the file's folder.
    AddNode {
        /// The node's YAML.
        yaml: String,
        /// Where it was read from, absolute.
        file: PathBuf,
    },
    /// Stops node `node` and takes it out of the graph; it is killed if it has not exited
    /// `grace_ms` after its stop event (the run's grace period without).
    RemoveNode {
        /// The node's id.
        node: String,
        /// Milliseconds between the stop event and the kill.
        grace_ms: Option<u64>,
    },
    /// Feeds output `source` to input `target` (created if the node does not declare it).
    Connect {
        /// The output.
        source: Port,
        /// The input.
        target: Port,
    },
    /// Stops feeding output `source` to input `target`: the input closes.
    Disconnect {
        /// The output.
        source: Port,
        /// The input.
        target: Port,
    },
}

/// An input or output of a node: `node/port`, as dora-rs writes them (an operator's ports are
/// `node/operator/port`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Port {
    /// The node's id.
    pub node: String,
    /// The port's id within the node.
    pub port: String,
}

impl Port {
    /// Reads `node/port`.
    ///
    /// # Errors
    /// The text, when it lacks a node or a port.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.split_once('/') {
            Some((node, port)) if !node.is_empty() && !port.is_empty() => {
                Ok(Self { node: node.to_owned(), port: port.to_owned() })
            }
            _ => Err(format!("`{text}` is not `node/port` (e.g. `camera/image`)")),
        }
    }
}

impl fmt::Display for Port {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.node, self.port)
    }
}

#[cfg(test)]
mod tests {
    use super::{GraphEdit, Port};

    #[test]
    fn ports_split_at_the_node() {
        assert_eq!(Port::parse("robot/arm/cmd"), Ok(Port { node: "robot".into(), port: "arm/cmd".into() }));
        assert!(Port::parse("robot").is_err());
        assert!(Port::parse("/cmd").is_err());
        assert!(Port::parse("robot/").is_err());
    }

    #[test]
    fn encoding_is_pinned() -> serde_json::Result<()> {
        // Tools of other builds send this: a change here is a protocol change.
        let port = |node: &str, port: &str| Port { node: node.into(), port: port.into() };
        let edit = GraphEdit::Connect { source: port("a", "x"), target: port("b", "y") };
        assert_eq!(
            serde_json::to_string(&edit)?,
            r#"{"edit":"connect","source":{"node":"a","port":"x"},"target":{"node":"b","port":"y"}}"#
        );
        Ok(())
    }
}

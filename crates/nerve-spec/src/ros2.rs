//! A node's `ros2:` key, dora-rs 1.x's schema: the node is a bridge to ROS 2 that nerve runs
//! itself. ROS 2 messages arrive as typed Arrow values on its outputs; what reaches its inputs
//! goes out to ROS 2.
//!
//! ```yaml
//! - id: pose_bridge
//!   ros2:
//!     topic: /turtle1/pose
//!     message_type: turtlesim/Pose
//!     direction: subscribe
//!     qos: {reliable: true, keep_last: 10}
//!   outputs: [pose]
//! ```

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::fields::{boolean, join_field, key_str, mapping, shown, string_field, unknown_key};
use crate::parse_process::{duration, integer};
use crate::port_types::PortDecl;
use crate::tree::{Mark, Node, Problems};

/// What a `ros2:` node bridges, resolved: every topic with its port, type and QoS.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ros2Bridge {
    /// The namespace of the ROS 2 node the bridge appears as (`/` unless set).
    pub namespace: String,
    /// The name of that ROS 2 node; the nerve node's id unless set (`-` becomes `_`).
    pub node_name: String,
    /// The topics, in the order written (none for a service bridge).
    pub topics: Vec<Ros2Topic>,
    /// The service (`service:`), when the bridge is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<Ros2Service>,
    /// The action (`action:`), when the bridge is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Ros2Action>,
}

/// A bridged action: a nerve node sends goals to a ROS 2 server (`role: client`), or ROS 2
/// clients send goals to a nerve node (`role: server`). The ports are dora-rs's: goals on one
/// port, then `feedback` and `result`; nerve adds an optional `cancel` port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ros2Action {
    /// The ROS 2 action name as written.
    pub action: String,
    /// The action type, as written (`example_interfaces/Fibonacci`).
    pub action_type: String,
    /// Which side of the goals the bridge is.
    pub role: Ros2Role,
    /// The port goals travel on: the node's input (client) or output (server) that is not
    /// `cancel`.
    pub goals: String,
    /// Whether the node has a `cancel` port: an input whose messages cancel the goal their
    /// `goal_id` parameter names (client), an output on which cancel requests arrive (server).
    pub cancel: bool,
    /// Quality of service of the action's services and feedback; ROS 2's service default
    /// unless `qos:` is written.
    pub qos: Ros2Qos,
}
/// A bridged service: a nerve node calls a ROS 2 server (`role: client`), or ROS 2 clients
/// call a nerve node (`role: server`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ros2Service {
    /// The ROS 2 service name as written.
    pub service: String,
    /// The service type, as written (`std_srvs/SetBool` or `std_srvs/srv/SetBool`).
    pub service_type: String,
    /// Which side of the calls the bridge is.
    pub role: Ros2Role,
    /// The port requests travel on: the node's one input (client) or one output (server).
    pub requests: String,
    /// The port responses travel on: the node's one output (client) or one input (server).
    pub responses: String,
    /// Quality of service of both DDS topics; ROS 2's service default (reliable, keep the
    /// last 10) unless `qos:` is written.
    pub qos: Ros2Qos,
}

/// `role:` of a service bridge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ros2Role {
    /// Requests come from the dataflow and go to a ROS 2 server.
    Client,
    /// Requests come from ROS 2 clients and go to the dataflow, which answers.
    Server,
}

/// One bridged topic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ros2Topic {
    /// The ROS 2 topic name as written (`/turtle1/pose`, or relative to the namespace).
    pub topic: String,
    /// The message type, as written (`sensor_msgs/Image` or `sensor_msgs/msg/Image`).
    pub message_type: String,
    /// Which way messages flow.
    pub direction: Ros2Direction,
    /// The nerve port: the output a subscribed topic's messages go out on, or the input whose
    /// messages are published.
    pub port: String,
    /// Quality of service on the ROS 2 side.
    pub qos: Ros2Qos,
}

/// Which way a bridged topic's messages flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ros2Direction {
    /// From ROS 2 to the node's output (dora-rs's default).
    #[default]
    Subscribe,
    /// From the node's input to ROS 2.
    Publish,
}

/// ROS 2 quality of service, dora-rs's `qos:` keys and defaults: best effort, volatile,
/// keep the last message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ros2Qos {
    /// Reliable delivery (`reliable: true`) or best effort.
    pub reliable: bool,
    /// Whether late joiners get what was already published.
    pub durability: Ros2Durability,
    /// How many messages are kept for readers.
    pub history: Ros2History,
    /// How the writer's liveliness is asserted.
    pub liveliness: Ros2Liveliness,
    /// How long a writer may stay silent before it is declared gone (`None`: forever).
    pub lease_duration: Option<Duration>,
    /// How long a reliable write may block on a full history (`None`: 100 ms).
    pub max_blocking_time: Option<Duration>,
}

impl Ros2Qos {
    /// ROS 2's QoS for services: reliable, volatile, the last 10 kept.
    #[must_use]
    pub fn service_default() -> Self {
        Self { reliable: true, history: Ros2History::KeepLast(10), ..Self::default() }
    }
}

impl Default for Ros2Qos {
    fn default() -> Self {
        Self {
            reliable: false,
            durability: Ros2Durability::Volatile,
            history: Ros2History::KeepLast(1),
            liveliness: Ros2Liveliness::Automatic,
            lease_duration: None,
            max_blocking_time: None,
        }
    }
}

/// `qos: {durability:}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ros2Durability {
    /// Only what is published after a reader joins.
    Volatile,
    /// The last messages are kept for readers that join later (`/tf_static`, maps).
    TransientLocal,
}

/// `qos: {keep_last: N}` or `qos: {keep_all: true}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ros2History {
    /// The last N messages.
    KeepLast(u32),
    /// Every message, up to the resource limits.
    KeepAll,
}

/// `qos: {liveliness:}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ros2Liveliness {
    /// Asserted by the middleware.
    Automatic,
    /// Asserted by the participant.
    ManualByParticipant,
    /// Asserted per topic.
    ManualByTopic,
}

const ROS2_KEYS: &[&str] = &[
    "transport",
    "topic",
    "message_type",
    "direction",
    "topics",
    "service",
    "service_type",
    "action",
    "action_type",
    "role",
    "qos",
    "namespace",
    "node_name",
];

const TOPIC_KEYS: &[&str] = &["topic", "message_type", "direction", "output", "input", "qos"];

const QOS_KEYS: &[&str] =
    &["reliable", "durability", "liveliness", "lease_duration", "max_blocking_time", "keep_last", "keep_all"];

/// dora-rs's limit on `topics:`, kept so a dataflow valid there is valid here and back.
const MAX_TOPICS: usize = 64;

/// Longest `lease_duration` or `max_blocking_time` accepted.
const MAX_QOS_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// One `topics:` entry (or the single `topic:`) as written, before its port is known.
struct Written<'a> {
    topic: String,
    message_type: Option<(String, &'a Node)>,
    direction: Ros2Direction,
    port: Option<String>,
    qos: Option<Ros2Qos>,
    field: String,
    mark: Mark,
}

/// Parses `ros2:`. `outputs` and `inputs` are the node's declared ports: each topic is given
/// one, and its message type is declared on it (pushed to `port_types`) so the usual checks
/// (the type exists, both ends of an edge agree) apply.
pub(crate) fn parse_ros2(
    p: &mut Problems,
    value: &Node,
    field: &str,
    node: (&str, &[String], &[String]),
    port_types: &mut Vec<PortDecl>,
) -> Option<Ros2Bridge> {
    let (id, outputs, inputs) = node;
    let entries = mapping(p, value, field, "a mapping (`topic:` or `topics:`, `message_type:`...)")?;
    let f = |k: &str| join_field(field, k);
    let mut single = Written {
        topic: String::new(),
        message_type: None,
        direction: Ros2Direction::Subscribe,
        port: None,
        qos: None,
        field: field.to_owned(),
        mark: value.mark,
    };
    let mut modes: Vec<(&str, Mark)> = Vec::new();
    let mut list = Vec::new();
    let mut qos = None;
    let mut service = None;
    let mut service_type = None;
    let mut action = None;
    let mut action_type = None;
    let mut role = None;
    let mut namespace = "/".to_owned();
    let mut node_name = id.replace('-', "_");
    for (key, v) in entries {
        let k = key_str(key);
        match k {
            "transport" => parse_transport(p, v, &f(k)),
            "topic" => {
                modes.push((k, key.mark));
                single.topic = string_field(p, v, &f(k)).unwrap_or_default();
                single.mark = v.mark;
            }
            "message_type" => single.message_type = string_field(p, v, &f(k)).map(|t| (t, v)),
            "direction" => single.direction = parse_direction(p, v, &f(k)),
            "topics" => {
                modes.push((k, key.mark));
                list = parse_topics(p, v, &f(k));
            }
            "service" => {
                modes.push((k, key.mark));
                service = string_field(p, v, &f(k)).map(|s| (s, v.mark));
            }
            "service_type" => service_type = string_field(p, v, &f(k)).map(|t| (t, v.mark)),
            "role" => role = parse_role(p, v, &f(k)),
            "action" => {
                modes.push((k, key.mark));
                action = string_field(p, v, &f(k)).map(|s| (s, v.mark));
            }
            "action_type" => action_type = string_field(p, v, &f(k)).map(|t| (t, v.mark)),
            "qos" => qos = parse_qos(p, v, &f(k)),
            "namespace" => namespace = string_field(p, v, &f(k)).unwrap_or(namespace),
            "node_name" => node_name = string_field(p, v, &f(k)).unwrap_or(node_name),
            _ => unknown_key(p, key, &f(k), ROS2_KEYS),
        }
    }
    check_namespace(p, value.mark, &f("namespace"), &namespace);
    if !is_ros_token(&node_name) {
        p.push(
            value.mark,
            f("node_name"),
            format!("`{node_name}` is not a ROS 2 node name (letters, digits and `_`, not starting with a digit)"),
        );
    }
    match modes.as_slice() {
        [] => {
            p.push(value.mark, field, "a ROS 2 bridge needs one of `topic`, `topics`, `service` or `action`");
            return None;
        }
        [_, (second, mark), ..] => {
            p.push(*mark, f(second), "only one of `topic`, `topics`, `service` and `action` may be set");
            return None;
        }
        [("topic", _)] => {
            single.port = Some(single_port(p, &single, outputs, inputs)?);
            list = vec![single];
        }
        [("topics", _)] => {}
        [("service", mark)] => {
            let ports = (outputs, inputs);
            let service = parse_service(p, (*mark, &f("service")), (service, service_type, role), ports, port_types);
            let qos = qos.unwrap_or_else(Ros2Qos::service_default);
            return Some(Ros2Bridge {
                namespace,
                node_name,
                topics: Vec::new(),
                service: service.map(|s| Ros2Service { qos, ..s }),
                action: None,
            });
        }
        [("action", mark)] => {
            let ports = (outputs, inputs);
            let action = parse_action(p, (*mark, &f("action")), (action, action_type, role), ports, port_types);
            let qos = qos.unwrap_or_else(Ros2Qos::service_default);
            return Some(Ros2Bridge {
                namespace,
                node_name,
                topics: Vec::new(),
                service: None,
                action: action.map(|a| Ros2Action { qos, ..a }),
            });
        }
        [_] => return None,
    }
    let qos = qos.unwrap_or_default();
    let topics = list
        .into_iter()
        .filter_map(|w| {
            let port = w.port.clone().unwrap_or_else(|| default_port(&w.topic));
            let ports = if w.direction == Ros2Direction::Subscribe { outputs } else { inputs };
            if !ports.contains(&port) {
                let (kind, key) = match w.direction {
                    Ros2Direction::Subscribe => ("output", "outputs"),
                    Ros2Direction::Publish => ("input", "inputs"),
                };
                p.push(
                    w.mark,
                    &w.field,
                    format!("the {kind} `{port}` for topic `{}` is not in the node's `{key}`", w.topic),
                );
            }
            check_topic_name(p, w.mark, &w.field, &w.topic);
            let Some((message_type, at)) = w.message_type else {
                p.push(w.mark, &w.field, format!("topic `{}` needs `message_type` (`std_msgs/String`...)", w.topic));
                return None;
            };
            port_types.push(PortDecl {
                port: port.clone(),
                output: w.direction == Ros2Direction::Subscribe,
                text: message_type.clone(),
                mark: at.mark,
                field: join_field(&w.field, "message_type"),
            });
            Some(Ros2Topic {
                topic: w.topic,
                message_type,
                direction: w.direction,
                port,
                qos: w.qos.unwrap_or_else(|| qos.clone()),
            })
        })
        .collect();
    Some(Ros2Bridge { namespace, node_name, topics, service: None, action: None })
}

/// The port of the single `topic:`: the node's one output (subscribe) or one input (publish).
fn single_port(p: &mut Problems, w: &Written<'_>, outputs: &[String], inputs: &[String]) -> Option<String> {
    let (ports, kind) = match w.direction {
        Ros2Direction::Subscribe => (outputs, "output"),
        Ros2Direction::Publish => (inputs, "input"),
    };
    match ports {
        [one] => Some(one.clone()),
        _ => {
            p.push(
                w.mark,
                &w.field,
                format!(
                    "a bridge of the single topic `{}` needs exactly one {kind}, the node declares {}{}",
                    w.topic,
                    ports.len(),
                    if ports.is_empty() { String::new() } else { format!(" ({})", ports.join(", ")) }
                ),
            );
            None
        }
    }
}

/// dora-rs's port id for a topic given without `output:`/`input:`: `/turtle1/pose` is `turtle1_pose`.
fn default_port(topic: &str) -> String {
    topic.trim_start_matches(['/', '~']).replace('/', "_")
}

fn parse_transport(p: &mut Problems, value: &Node, field: &str) {
    let Some(entries) = mapping(p, value, field, "a mapping (`kind: dds`)") else { return };
    for (key, v) in entries {
        match (key_str(key), v.text()) {
            ("kind", Some("dds")) => {}
            ("kind", _) => p.push(
                v.mark,
                join_field(field, "kind"),
                format!("only `dds` is supported (ROS 2's default middleware); found {}", shown(v)),
            ),
            (k, _) => p.push(
                key.mark,
                join_field(field, k),
                format!("`{k}` belongs to the zenoh transport, which nerve's bridge does not speak"),
            ),
        }
    }
}

fn parse_direction(p: &mut Problems, value: &Node, field: &str) -> Ros2Direction {
    match value.text() {
        Some("subscribe") => Ros2Direction::Subscribe,
        Some("publish") => Ros2Direction::Publish,
        _ => {
            p.push(
                value.mark,
                field,
                format!("expected `subscribe` (ROS 2 to nerve) or `publish` (nerve to ROS 2), found {}", shown(value)),
            );
            Ros2Direction::Subscribe
        }
    }
}

fn parse_role(p: &mut Problems, value: &Node, field: &str) -> Option<Ros2Role> {
    match value.text() {
        Some("client") => Some(Ros2Role::Client),
        Some("server") => Some(Ros2Role::Server),
        _ => {
            p.push(
                value.mark,
                field,
                format!(
                    "expected `client` (the dataflow calls ROS 2) or `server` (ROS 2 calls the dataflow), found {}",
                    shown(value)
                ),
            );
            None
        }
    }
}

type Located = Option<(String, Mark)>;

/// What a service or an action bridge starts with: its name, its type and its role.
struct Head {
    name: String,
    written: String,
    /// `package/srv/Name` or `package/action/Name`.
    type_name: String,
    type_mark: Mark,
    type_field: String,
    role: Ros2Role,
    /// The `ros2` field, where problems of the whole bridge are reported.
    parent: String,
}

/// The name, type (`<kind>_type`) and role of a `kind` (`service` or `action`) bridge.
fn head(
    p: &mut Problems,
    (mark, field): (Mark, &str),
    kind: &str,
    (name, type_name, role): (Located, Located, Option<Ros2Role>),
    example: &str,
) -> Option<Head> {
    let parent = field.trim_end_matches(&format!(".{kind}")).to_owned();
    let (name, at) = name?;
    check_topic_name(p, at, field, &name);
    let Some((written, type_mark)) = type_name else {
        p.push(mark, &parent, format!("{kind} `{name}` needs `{kind}_type` (`{example}`...)"));
        return None;
    };
    let type_field = join_field(&parent, &format!("{kind}_type"));
    let folder = if kind == "service" { "srv" } else { "action" };
    let type_name = match written.split('/').collect::<Vec<_>>()[..] {
        [package, name] => format!("{package}/{folder}/{name}"),
        [package, middle, name] if middle == folder => format!("{package}/{folder}/{name}"),
        _ => {
            let article = if kind == "action" { "an" } else { "a" };
            p.push(
                type_mark,
                type_field,
                format!("`{written}` is not {article} {kind} type (`package/Name` or `package/{folder}/Name`)"),
            );
            return None;
        }
    };
    let Some(role) = role else {
        p.push(mark, &parent, format!("{kind} `{name}` needs `role: client` or `role: server`"));
        return None;
    };
    Some(Head { name, written, type_name, type_mark, type_field, role, parent })
}

/// A service bridge: its type declared on both ports, requests and responses.
fn parse_service(
    p: &mut Problems,
    (mark, field): (Mark, &str),
    (service, service_type, role): (Located, Located, Option<Ros2Role>),
    (outputs, inputs): (&[String], &[String]),
    port_types: &mut Vec<PortDecl>,
) -> Option<Ros2Service> {
    let Head { name: service, written, type_name: name, type_mark, type_field, role, parent } =
        head(p, (mark, field), "service", (service, service_type, role), "std_srvs/SetBool")?;
    // A client takes requests on its input and answers on its output; a server the reverse.
    let (request_ports, response_ports, request_kind, response_kind) = match role {
        Ros2Role::Client => (inputs, outputs, "input", "output"),
        Ros2Role::Server => (outputs, inputs, "output", "input"),
    };
    let one = |p: &mut Problems, ports: &[String], kind: &str, what: &str| match ports {
        [port] => Some(port.clone()),
        _ => {
            p.push(
                mark,
                &parent,
                format!(
                    "a service {} needs exactly one {kind} ({what}), the node declares {}{}",
                    if role == Ros2Role::Client { "client" } else { "server" },
                    ports.len(),
                    if ports.is_empty() { String::new() } else { format!(" ({})", ports.join(", ")) }
                ),
            );
            None
        }
    };
    let requests = one(p, request_ports, request_kind, "the requests");
    let responses = one(p, response_ports, response_kind, "the responses");
    let (requests, responses) = (requests?, responses?);
    for (port, part, output) in
        [(&requests, "Request", role == Ros2Role::Server), (&responses, "Response", role == Ros2Role::Client)]
    {
        port_types.push(PortDecl {
            port: port.clone(),
            output,
            text: format!("{name}_{part}"),
            mark: type_mark,
            field: type_field.clone(),
        });
    }
    Some(Ros2Service { service, service_type: written, role, requests, responses, qos: Ros2Qos::default() })
}

/// dora-rs's names of an action bridge's feedback and result ports, and nerve's cancel port.
pub const FEEDBACK_PORT: &str = "feedback";
/// See [`FEEDBACK_PORT`].
pub const RESULT_PORT: &str = "result";
/// See [`FEEDBACK_PORT`].
pub const CANCEL_PORT: &str = "cancel";

/// An action bridge: `feedback` and `result` ports, goals on the other one, an optional
/// `cancel`; the action's goal, feedback and result types declared on them.
fn parse_action(
    p: &mut Problems,
    (mark, field): (Mark, &str),
    (action, action_type, role): (Located, Located, Option<Ros2Role>),
    (outputs, inputs): (&[String], &[String]),
    port_types: &mut Vec<PortDecl>,
) -> Option<Ros2Action> {
    let Head { name: action, written, type_name: name, type_mark, type_field, role, parent } =
        head(p, (mark, field), "action", (action, action_type, role), "example_interfaces/Fibonacci")?;
    // The goals go in (client) or out (server); feedback and results the other way.
    let (goal_side, back_side, goal_kind, back_kind) = match role {
        Ros2Role::Client => (inputs, outputs, "input", "output"),
        Ros2Role::Server => (outputs, inputs, "output", "input"),
    };
    let who = if role == Ros2Role::Client { "client" } else { "server" };
    let goals: Vec<&String> = goal_side.iter().filter(|port| port.as_str() != CANCEL_PORT).collect();
    let [goals] = goals[..] else {
        p.push(
            mark,
            &parent,
            format!("an action {who} needs exactly one {goal_kind} for its goals besides `{CANCEL_PORT}`, the node declares {}", goals.len()),
        );
        return None;
    };
    for needed in [FEEDBACK_PORT, RESULT_PORT] {
        if !back_side.iter().any(|port| port == needed) {
            p.push(mark, &parent, format!("an action {who} needs the {back_kind} `{needed}`"));
        }
    }
    let extra: Vec<&String> =
        back_side.iter().filter(|port| ![FEEDBACK_PORT, RESULT_PORT, CANCEL_PORT].contains(&port.as_str())).collect();
    if let Some(port) = extra.first() {
        p.push(
            mark,
            &parent,
            format!("an action {who} has no {back_kind} `{port}` (expected `{FEEDBACK_PORT}`, `{RESULT_PORT}`)"),
        );
    }
    let cancel = match role {
        Ros2Role::Client => inputs.iter().any(|port| port == CANCEL_PORT),
        Ros2Role::Server => outputs.iter().any(|port| port == CANCEL_PORT),
    };
    let server = role == Ros2Role::Server;
    for (port, part, output) in
        [(goals.as_str(), "Goal", server), (FEEDBACK_PORT, "Feedback", !server), (RESULT_PORT, "Result", !server)]
    {
        port_types.push(PortDecl {
            port: port.to_owned(),
            output,
            text: format!("{name}_{part}"),
            mark: type_mark,
            field: type_field.clone(),
        });
    }
    Some(Ros2Action { action, action_type: written, role, goals: goals.clone(), cancel, qos: Ros2Qos::default() })
}

fn parse_topics<'a>(p: &mut Problems, value: &'a Node, field: &str) -> Vec<Written<'a>> {
    let crate::tree::Value::Seq(items) = &value.value else {
        p.push(value.mark, field, format!("expected a list of topics, found {}", value.describe()));
        return Vec::new();
    };
    if items.is_empty() {
        p.push(value.mark, field, "the list of topics is empty");
    }
    if items.len() > MAX_TOPICS {
        p.push(value.mark, field, format!("{} topics, at most {MAX_TOPICS} per bridge node", items.len()));
    }
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let field = format!("{field}[{i}]");
        let Some(entries) = mapping(p, item, &field, "a topic mapping (`topic:`, `message_type:`...)") else {
            continue;
        };
        let mut w = Written {
            topic: String::new(),
            message_type: None,
            direction: Ros2Direction::Subscribe,
            port: None,
            qos: None,
            field: field.clone(),
            mark: item.mark,
        };
        let mut port_key = None;
        for (key, v) in entries {
            let k = key_str(key);
            let kf = join_field(&field, k);
            match k {
                "topic" => w.topic = string_field(p, v, &kf).unwrap_or_default(),
                "message_type" => w.message_type = string_field(p, v, &kf).map(|t| (t, v)),
                "direction" => w.direction = parse_direction(p, v, &kf),
                "output" | "input" => {
                    w.port = string_field(p, v, &kf);
                    port_key = Some((k, key.mark));
                }
                "qos" => w.qos = parse_qos(p, v, &kf),
                _ => unknown_key(p, key, &kf, TOPIC_KEYS),
            }
        }
        if w.topic.is_empty() {
            p.push(item.mark, &field, "missing required key `topic`");
            continue;
        }
        match (port_key, w.direction) {
            (Some(("input", mark)), Ros2Direction::Subscribe) => {
                p.push(
                    mark,
                    join_field(&field, "input"),
                    "a subscribed topic goes out on an `output:`, not an `input:`",
                );
            }
            (Some(("output", mark)), Ros2Direction::Publish) => {
                p.push(
                    mark,
                    join_field(&field, "output"),
                    "a published topic comes from an `input:`, not an `output:`",
                );
            }
            _ => {}
        }
        out.push(w);
    }
    out
}

fn parse_qos(p: &mut Problems, value: &Node, field: &str) -> Option<Ros2Qos> {
    let entries = mapping(p, value, field, "a mapping of QoS settings")?;
    let mut qos = Ros2Qos::default();
    let mut keep_last = None;
    let mut keep_all = false;
    for (key, v) in entries {
        let k = key_str(key);
        let kf = join_field(field, k);
        match k {
            "reliable" => qos.reliable = boolean(p, v, &kf),
            "keep_all" => keep_all = boolean(p, v, &kf),
            "keep_last" => keep_last = integer(p, v, &kf, 1, i128::from(i32::MAX)).and_then(|n| u32::try_from(n).ok()),
            "durability" => {
                qos.durability = match v.text() {
                    Some("volatile") => Ros2Durability::Volatile,
                    Some("transient_local") => Ros2Durability::TransientLocal,
                    _ => {
                        p.push(v.mark, kf, format!("expected `volatile` or `transient_local`, found {}", shown(v)));
                        Ros2Durability::Volatile
                    }
                }
            }
            "liveliness" => {
                qos.liveliness = match v.text() {
                    Some("automatic") => Ros2Liveliness::Automatic,
                    Some("manual_by_participant") => Ros2Liveliness::ManualByParticipant,
                    Some("manual_by_topic") => Ros2Liveliness::ManualByTopic,
                    _ => {
                        p.push(
                            v.mark,
                            kf,
                            format!(
                                "expected `automatic`, `manual_by_participant` or `manual_by_topic`, found {}",
                                shown(v)
                            ),
                        );
                        Ros2Liveliness::Automatic
                    }
                }
            }
            "lease_duration" => qos.lease_duration = duration(p, v, &kf, MAX_QOS_DURATION),
            "max_blocking_time" => qos.max_blocking_time = duration(p, v, &kf, MAX_QOS_DURATION),
            _ => unknown_key(p, key, &kf, QOS_KEYS),
        }
    }
    qos.history = match (keep_all, keep_last) {
        (true, Some(_)) => {
            p.push(value.mark, field, "`keep_all: true` and `keep_last` contradict each other: keep one");
            Ros2History::KeepAll
        }
        (true, None) => Ros2History::KeepAll,
        (false, n) => Ros2History::KeepLast(n.unwrap_or(1)),
    };
    Some(qos)
}

/// A ROS 2 name token: letters, digits and `_`, not starting with a digit.
fn is_ros_token(token: &str) -> bool {
    let mut chars = token.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !token.contains("__")
}

/// A topic name as ROS 2 accepts it: absolute (`/a/b`), relative (`a/b`) or private (`~/a`).
fn check_topic_name(p: &mut Problems, mark: Mark, field: &str, topic: &str) {
    let body = topic.strip_prefix("~/").or_else(|| topic.strip_prefix('/')).unwrap_or(topic);
    if body.is_empty() || !body.split('/').all(is_ros_token) {
        p.push(
            mark,
            field,
            format!(
                "`{topic}` is not a ROS 2 topic name (tokens of letters, digits and `_` separated by `/`, none starting \
                 with a digit)"
            ),
        );
    }
}

fn check_namespace(p: &mut Problems, mark: Mark, field: &str, namespace: &str) {
    let ok = namespace == "/" || namespace.strip_prefix('/').is_some_and(|body| body.split('/').all(is_ros_token));
    if !ok {
        p.push(mark, field, format!("`{namespace}` is not a ROS 2 namespace (`/`, or absolute like `/robot1`)"));
    }
}

/// The name of a message type's DDS topic type, as ROS 2 writes it: `sensor_msgs/msg/Image` is
/// `sensor_msgs::msg::dds_::Image_`.
#[must_use]
pub fn dds_type_name(package: &str, kind: &str, name: &str) -> String {
    format!("{package}::{kind}::dds_::{name}_")
}

/// The fully qualified ROS 2 name of `topic` for a node `node_name` in `namespace`.
#[must_use]
pub fn resolve_topic(topic: &str, namespace: &str, node_name: &str) -> String {
    let ns = namespace.trim_end_matches('/');
    if let Some(rest) = topic.strip_prefix("~/") {
        format!("{ns}/{node_name}/{rest}")
    } else if topic.starts_with('/') {
        topic.to_owned()
    } else {
        format!("{ns}/{topic}")
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn bridge(yaml: &str) -> Result<crate::NodeSpec, String> {
        let df = crate::parse_str(yaml, Path::new("df.yml")).map_err(|e| e.to_string())?;
        Ok(df.nodes.into_iter().find(|n| n.ros2.is_some()).expect("a bridge node"))
    }

    const SINK: &str = "  - id: sink\n    path: dynamic\n    inputs: {pose: b/pose}\n";

    #[test]
    fn a_single_topic_goes_out_on_the_nodes_one_output_with_its_type() {
        let yaml = format!(
            "nodes:\n  - id: b\n    ros2:\n      topic: /turtle1/pose\n      message_type: geometry_msgs/Pose\n    outputs: [pose]\n{SINK}"
        );
        let node = bridge(&yaml).unwrap_or_else(|e| panic!("{e}"));
        let ros2 = node.ros2.as_ref().expect("parsed");
        assert_eq!(ros2.node_name, "b");
        assert_eq!(ros2.namespace, "/");
        assert_eq!(ros2.topics[0].port, "pose");
        assert_eq!(ros2.topics[0].direction, Ros2Direction::Subscribe);
        assert_eq!(ros2.topics[0].qos, Ros2Qos::default());
        assert_eq!(node.output_types.get("pose").map(String::as_str), Some("geometry_msgs/Pose"));
    }

    #[test]
    fn topics_take_their_ports_from_the_topic_name_unless_given() {
        let yaml = "nodes:\n  - id: b\n    ros2:\n      topics:\n        - {topic: /turtle1/pose, message_type: geometry_msgs/Pose}\n        - topic: /turtle1/cmd_vel\n          message_type: geometry_msgs/msg/Twist\n          direction: publish\n          input: velocity\n          qos: {reliable: true, durability: transient_local, keep_last: 5}\n      qos: {keep_all: true}\n    inputs: {velocity: b/turtle1_pose}\n    outputs: [turtle1_pose]\n";
        let node = bridge(yaml);
        // The edge joins a Pose output to a Twist input: the type check refuses it.
        let e = node.expect_err("types differ");
        assert!(e.contains("geometry_msgs/msg/Twist"), "{e}");
        let yaml = yaml.replace("velocity: b/turtle1_pose", "velocity: dora/timer/millis/10");
        let ros2 = bridge(&yaml).unwrap_or_else(|e| panic!("{e}")).ros2.expect("parsed");
        assert_eq!(ros2.topics[0].port, "turtle1_pose");
        assert_eq!(ros2.topics[0].qos.history, Ros2History::KeepAll);
        assert_eq!(ros2.topics[1].port, "velocity");
        assert_eq!(ros2.topics[1].direction, Ros2Direction::Publish);
        assert!(ros2.topics[1].qos.reliable);
        assert_eq!(ros2.topics[1].qos.durability, Ros2Durability::TransientLocal);
        assert_eq!(ros2.topics[1].qos.history, Ros2History::KeepLast(5));
    }

    #[test]
    fn mistakes_are_named_where_they_are() {
        for (ros2, ports, expected) in [
            ("{topic: /a}", "outputs: [a]", "topic `/a` needs `message_type`"),
            (
                "{topic: /a, message_type: std_msgs/String}",
                "outputs: [a, b]",
                "needs exactly one output, the node declares 2 (a, b)",
            ),
            (
                "{topic: /a, message_type: std_msgs/Strin}",
                "outputs: [a]",
                "unknown type `std_msgs/msg/Strin`; did you mean `std_msgs/msg/String`?",
            ),
            ("{topic: /a, message_type: std_msgs/String, direction: both}", "outputs: [a]", "expected `subscribe`"),
            ("{topic: 1a, message_type: std_msgs/String}", "outputs: [a]", "`1a` is not a ROS 2 topic name"),
            ("{topic: /a, topics: [], message_type: std_msgs/String}", "outputs: [a]", "only one of"),
            ("{}", "outputs: [a]", "needs one of `topic`, `topics`"),
            (
                "{service: /set, service_type: std_srvs/SetBool}",
                "outputs: [a]",
                "needs `role: client` or `role: server`",
            ),
            ("{service: /set, role: server}", "outputs: [a]", "needs `service_type`"),
            ("{service: /set, service_type: std_srvs/SetBool, role: boss}", "outputs: [a]", "expected `client`"),
            (
                "{service: /set, service_type: std_srvs/action/SetBool, role: server}",
                "outputs: [a]",
                "is not a service type",
            ),
            (
                "{service: /set, service_type: std_srvs/SetBool, role: server}",
                "outputs: [a]",
                "a service server needs exactly one input (the responses), the node declares 0",
            ),
            (
                "{service: /set, service_type: std_srvs/SetBol, role: client}",
                "inputs: {a: dora/timer/millis/10}\n    outputs: [b]",
                "unknown type `std_srvs/srv/SetBol_Request`",
            ),
            (
                "{action: /go, action_type: std_msgs/Go, role: client}",
                "outputs: [feedback]",
                "needs exactly one input for its goals besides `cancel`",
            ),
            (
                "{action: /go, action_type: std_msgs/Go, role: server}",
                "outputs: [a, b]",
                "exactly one output for its goals",
            ),
            ("{action: /go, action_type: std_msgs/Go, role: server}", "outputs: [a]", "needs the input `feedback`"),
            (
                "{topics: [{topic: /x, message_type: std_msgs/String}]}",
                "outputs: [a]",
                "the output `x` for topic `/x` is not in the node's `outputs`",
            ),
            (
                "{topic: /a, message_type: std_msgs/String, qos: {keep_last: 0}}",
                "outputs: [a]",
                "qos.keep_last: must be between 1",
            ),
            (
                "{topic: /a, message_type: std_msgs/String, qos: {keep_last: 2, keep_all: true}}",
                "outputs: [a]",
                "contradict",
            ),
            (
                "{topic: /a, message_type: std_msgs/String, qos: {durability: forever}}",
                "outputs: [a]",
                "`transient_local`",
            ),
            (
                "{topic: /a, message_type: std_msgs/String, transport: {kind: zenoh}}",
                "outputs: [a]",
                "only `dds` is supported",
            ),
            ("{topic: /a, message_type: std_msgs/String, namespace: robot}", "outputs: [a]", "not a ROS 2 namespace"),
            ("{topic: /a, message_type: std_msgs/String, reliable: true}", "outputs: [a]", "unknown key `reliable`"),
        ] {
            let yaml = format!("nodes:\n  - id: b\n    ros2: {ros2}\n    {ports}\n");
            let e = bridge(&yaml).expect_err(ros2);
            assert!(e.contains(expected), "{ros2}: {e}");
            assert!(e.contains("nodes[b].ros2"), "{ros2}: {e}");
        }
    }

    #[test]
    fn a_service_declares_its_request_and_response_types_on_its_ports() {
        let yaml = "nodes:\n  - id: b\n    ros2: {service: /set, service_type: std_srvs/SetBool, role: server}\n    inputs: {reply: h/reply}\n    outputs: [ask]\n  - id: h\n    path: dynamic\n    inputs: {ask: b/ask}\n    outputs: [reply]\n    output_types: {reply: std_srvs/srv/SetBool_Response}\n";
        let node = bridge(yaml).unwrap_or_else(|e| panic!("{e}"));
        let service = node.ros2.as_ref().and_then(|b| b.service.clone()).expect("a service bridge");
        assert_eq!(
            (service.role, service.requests.as_str(), service.responses.as_str()),
            (Ros2Role::Server, "ask", "reply")
        );
        assert_eq!(service.qos, Ros2Qos::service_default());
        assert_eq!(node.output_types.get("ask").map(String::as_str), Some("std_srvs/srv/SetBool_Request"));
        assert_eq!(node.input_types.get("reply").map(String::as_str), Some("std_srvs/srv/SetBool_Response"));
        // The handler answering with another type is refused before anything runs.
        let wrong = yaml.replace("reply: std_srvs/srv/SetBool_Response", "reply: std_msgs/String");
        assert!(bridge(&wrong).is_err());
    }

    #[test]
    fn names_resolve_as_ros_2_resolves_them() {
        assert_eq!(resolve_topic("/chatter", "/robot", "talker"), "/chatter");
        assert_eq!(resolve_topic("chatter", "/robot", "talker"), "/robot/chatter");
        assert_eq!(resolve_topic("chatter", "/", "talker"), "/chatter");
        assert_eq!(resolve_topic("~/state", "/robot", "talker"), "/robot/talker/state");
        assert_eq!(dds_type_name("sensor_msgs", "msg", "Image"), "sensor_msgs::msg::dds_::Image_");
    }
}

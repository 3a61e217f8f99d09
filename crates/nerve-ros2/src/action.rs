//! Action bridges, server role: ROS 2 action clients send goals to the dataflow (the client
//! role is [`crate::action_client`]).
//!
//! ROS 2's action protocol over DDS is three services and two topics under
//! `<action>/_action/`: `send_goal`, `cancel_goal` and `get_result`, `feedback` and `status`.
//! The bridge accepts each goal and sends it on its goals output with a `goal_id` parameter;
//! the dataflow answers on the `feedback` and `result` inputs with that parameter (and, on a
//! result, `goal_status`: `succeeded`, the default, `aborted` or `canceled`). A cancel request
//! goes out on the `cancel` output when the node has one, and is refused when it has not.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use arrow_array::{Array, ArrayRef, BooleanArray, Int8Array, StringArray, StructArray};
use arrow_schema::{DataType, Fields};
use nerve_node::msg::Message as _;
use nerve_node::msg::action_msgs::msg::{GoalInfo, GoalStatus, GoalStatusArray};
use nerve_node::msg::action_msgs::srv::{CancelGoal_Request, CancelGoal_Response};
use nerve_node::msg::builtin_interfaces::msg::Time;
use nerve_node::msg::unique_identifier_msgs::msg::UUID;
use nerve_node::{Message, Node, Parameters};
use nerve_shm::sync::lock;
use nerve_spec::ros2::{CANCEL_PORT, FEEDBACK_PORT, RESULT_PORT, Ros2Action, Ros2Durability, Ros2History, Ros2Qos};
use nerve_types::{Codec, Kind, Registry, TypeName};
use rustdds::{SampleIdentity, WriteOptionsBuilder};
use tracing::warn;

use crate::error::Ros2Error;
use crate::qos::dds_qos;
use crate::service::request_identity;
use crate::wire::{ArrowDecoder, Endpoints, Writer, dds_topic_name, encode_body, on_samples, write_row};

/// Metadata parameter naming the goal a goal, feedback or result belongs to.
pub const GOAL_ID: &str = "goal_id";
/// Metadata parameter of a result: `succeeded` (the default), `aborted` or `canceled`.
pub const GOAL_STATUS: &str = "goal_status";

/// Most goals a server bridge keeps: finished ones are forgotten, oldest first, beyond it,
/// and new goals are refused while this many are unfinished.
const MAX_GOALS: usize = 64;

/// A goal the bridge accepted.
struct Goal {
    info: GoalInfo,
    status: i8,
    /// The encoded `GetResult` reply, once the dataflow sent the result.
    result: Option<rustdds::bytes::Bytes>,
    /// `get_result` requests waiting for that result.
    waiting: Vec<SampleIdentity>,
}

/// What the bridge's threads share: the writers and the goals.
struct Shared {
    name: String,
    send_goal_reply: Writer,
    get_result_reply: Writer,
    cancel_reply: Writer,
    feedback: Writer,
    status: Writer,
    goals: BTreeMap<String, Goal>,
    order: VecDeque<String>,
}

/// The codecs of the action's parts the bridge writes.
struct Codecs {
    send_goal_reply: Codec,
    get_result_reply: Codec,
    feedback: Codec,
    status: Codec,
    cancel_reply: Codec,
}

/// A server bridge of one action.
pub(crate) struct ActionServer {
    shared: Arc<Mutex<Shared>>,
    codecs: Arc<Codecs>,
}

/// The goal id as text: 32 hex digits.
pub(crate) fn goal_key(uuid: &[u8; 16]) -> String {
    uuid::Uuid::from_bytes(*uuid).simple().to_string()
}

fn now() -> Time {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    Time { sec: i32::try_from(since.as_secs()).unwrap_or(i32::MAX), nanosec: since.subsec_nanos() }
}

/// A one-row struct of `data_type` (a message type's) from its columns, in order.
pub(crate) fn row(data_type: &DataType, columns: Vec<ArrayRef>) -> Result<ArrayRef, String> {
    let DataType::Struct(fields) = data_type else { return Err(format!("{data_type} is not a message")) };
    let fields: Fields = fields.clone();
    StructArray::try_new(fields, columns, None).map(|s| Arc::new(s) as ArrayRef).map_err(|e| e.to_string())
}

impl ActionServer {
    /// Creates the action's endpoints and starts its request threads.
    pub(crate) fn start(
        spec: &Ros2Action,
        name: &str,
        endpoints: &Endpoints,
        registry: &Registry,
        node: &Arc<Node>,
    ) -> Result<Self, Ros2Error> {
        let action = TypeName { kind: Kind::Action, ..TypeName::parse(&spec.action_type)? };
        let cancel = TypeName::parse("action_msgs/srv/CancelGoal")?;
        let status_type = TypeName::parse(GoalStatusArray::TYPE_NAME)?;
        let qos = dds_qos(&spec.qos);
        let status_qos = dds_qos(&Ros2Qos {
            reliable: true,
            durability: Ros2Durability::TransientLocal,
            history: Ros2History::KeepLast(1),
            ..Ros2Qos::default()
        });
        let service = |service: &str, request: &TypeName, reply: &TypeName| -> Result<_, Ros2Error> {
            let (requests, replies) =
                endpoints.service_topics(&format!("{name}/_action/{service}"), (request, reply), &qos)?;
            Ok((endpoints.reader(&requests, qos.clone())?, endpoints.writer(&replies, qos.clone())?))
        };
        let (send_goal, get_result) = (action.part("SendGoal"), action.part("GetResult"));
        let (goal_requests, send_goal_reply) =
            service("send_goal", &send_goal.part("Request"), &send_goal.part("Response"))?;
        let (result_requests, get_result_reply) =
            service("get_result", &get_result.part("Request"), &get_result.part("Response"))?;
        let (cancel_requests, cancel_reply) =
            service("cancel_goal", &cancel.part("Request"), &cancel.part("Response"))?;
        let feedback_type = action.part("FeedbackMessage");
        let feedback_topic =
            endpoints.topic(&dds_topic_name(&format!("{name}/_action/feedback")), &feedback_type, &qos)?;
        let status_topic =
            endpoints.topic(&dds_topic_name(&format!("{name}/_action/status")), &status_type, &status_qos)?;
        let codecs = Arc::new(Codecs {
            send_goal_reply: Codec::new(registry, &send_goal.part("Response"))?,
            get_result_reply: Codec::new(registry, &get_result.part("Response"))?,
            feedback: Codec::new(registry, &feedback_type)?,
            status: Codec::new(registry, &status_type)?,
            cancel_reply: Codec::new(registry, &cancel.part("Response"))?,
        });
        let shared = Arc::new(Mutex::new(Shared {
            name: name.to_owned(),
            send_goal_reply,
            get_result_reply,
            cancel_reply,
            feedback: endpoints.writer(&feedback_topic, qos.clone())?,
            status: endpoints.writer(&status_topic, status_qos)?,
            goals: BTreeMap::new(),
            order: VecDeque::new(),
        }));
        let decoder = |t: &TypeName| Codec::new(registry, t).map(|c| ArrowDecoder(Arc::new(c)));
        let failed = |e: std::io::Error| Ros2Error::Config(format!("cannot start the threads of action {name}: {e}"));

        let (state, codecs2, node2, goals_port) =
            (Arc::clone(&shared), Arc::clone(&codecs), Arc::clone(node), spec.goals.clone());
        on_samples(
            name.to_owned(),
            (goal_requests, decoder(&send_goal.part("Request"))?),
            "goal",
            move |action, sample| {
                let id = request_identity(&sample);
                if let Err(why) = accept(&state, &codecs2, &node2, &goals_port, id, sample.sample.as_ref()) {
                    warn!("{action}: goal dropped: {why}");
                }
            },
        )
        .map_err(failed)?;

        let state = Arc::clone(&shared);
        on_samples(
            name.to_owned(),
            (result_requests, decoder(&get_result.part("Request"))?),
            "result request",
            move |action, sample| {
                let id = request_identity(&sample);
                let column = sample
                    .sample
                    .as_any()
                    .downcast_ref::<StructArray>()
                    .and_then(|s| s.column_by_name("goal_id").cloned());
                match column.map(|c| UUID::from_arrow(c.as_ref())) {
                    Some(Ok(uuid)) => wait_result(&state, &goal_key(&uuid.uuid), id),
                    _ => warn!("{action}: a result request without a goal id was dropped"),
                }
            },
        )
        .map_err(failed)?;

        let (state, codecs2, node2, cancel_port) =
            (Arc::clone(&shared), Arc::clone(&codecs), Arc::clone(node), spec.cancel);
        on_samples(
            name.to_owned(),
            (cancel_requests, decoder(&cancel.part("Request"))?),
            "cancel request",
            move |action, sample| {
                let id = request_identity(&sample);
                match CancelGoal_Request::from_arrow(sample.sample.as_ref()) {
                    Ok(request) => cancel_goal(&state, &codecs2, &node2, cancel_port, id, &request),
                    Err(e) => warn!("{action}: a cancel request that is not one was dropped: {e}"),
                }
            },
        )
        .map_err(failed)?;

        Ok(Self { shared, codecs })
    }

    /// The dataflow's feedback or result for a goal.
    pub(crate) fn on_input(&self, message: &Message) {
        let port = message.id.as_str();
        if port != FEEDBACK_PORT && port != RESULT_PORT {
            return;
        }
        let mut shared = lock(&self.shared);
        let name = shared.name.clone();
        let Some(key) = message.metadata.parameters.get(GOAL_ID).and_then(|v| v.as_str()).map(str::to_owned) else {
            warn!(
                "{name}: a {port} without the `{GOAL_ID}` parameter of its goal was dropped (send it with the goal's metadata)"
            );
            return;
        };
        let Some(goal) = shared.goals.get(&key) else {
            warn!("{name}: no goal `{key}` (finished, or never sent); its {port} was dropped");
            return;
        };
        let uuid = goal.info.goal_id.clone();
        let done = if port == FEEDBACK_PORT {
            feedback(&shared, &self.codecs, &uuid, &message.data).map(|()| None)
        } else {
            finished(&self.codecs, &message.metadata.parameters, &message.data).map(Some)
        };
        match done {
            Ok(None) => {}
            Ok(Some((status, result))) => {
                if let Some(goal) = shared.goals.get_mut(&key) {
                    goal.status = status;
                    goal.result = Some(result.clone());
                    for id in std::mem::take(&mut goal.waiting) {
                        reply(&shared.get_result_reply, &name, "result", result.clone(), id);
                    }
                }
                publish_status(&shared, &self.codecs);
            }
            Err(why) => warn!("{name}: the {port} of goal `{key}` was dropped: {why}"),
        }
    }
}

fn reply(writer: &Writer, action: &str, what: &str, body: rustdds::bytes::Bytes, id: SampleIdentity) {
    let options = WriteOptionsBuilder::new().related_sample_identity(id).build();
    if let Err(e) = writer.write_with_options(body, options) {
        warn!("{action}: the {what} reply was not sent: {e:?}");
    }
}

/// Accepts a goal: replies, publishes its status, sends it on the goals port.
fn accept(
    state: &Mutex<Shared>,
    codecs: &Codecs,
    node: &Node,
    port: &str,
    id: SampleIdentity,
    request: &dyn Array,
) -> Result<(), String> {
    let request = request.as_any().downcast_ref::<StructArray>().ok_or("a goal request that is not a struct")?;
    let (Some(goal_id), Some(goal)) = (request.column_by_name("goal_id"), request.column_by_name("goal")) else {
        return Err("a goal request without `goal_id` and `goal`".into());
    };
    let uuid = UUID::from_arrow(goal_id.as_ref()).map_err(|e| e.to_string())?;
    let key = goal_key(&uuid.uuid);
    let stamp = now();
    let answer = |accepted: bool| {
        let value = row(
            codecs.send_goal_reply.data_type(),
            vec![Arc::new(BooleanArray::from(vec![accepted])), Time::to_arrow(&stamp).map_err(|e| e.to_string())?],
        )?;
        encode_body(&codecs.send_goal_reply, value.as_ref(), 0).map_err(|e| e.to_string())
    };
    {
        let mut shared = lock(state);
        // Goals the dataflow never finishes must not pile up: past the bound, new ones are refused.
        if shared.goals.values().filter(|g| g.result.is_none()).count() >= MAX_GOALS {
            reply(&shared.send_goal_reply, &shared.name, "goal", answer(false)?, id);
            return Err(format!("{MAX_GOALS} goals are unfinished; goal `{key}` is refused"));
        }
        let body = answer(true)?;
        let info = GoalInfo { goal_id: uuid, stamp };
        shared.goals.insert(
            key.clone(),
            Goal { info, status: GoalStatus::STATUS_EXECUTING, result: None, waiting: Vec::new() },
        );
        shared.order.push_back(key.clone());
        forget_finished(&mut shared);
        reply(&shared.send_goal_reply, &shared.name, "goal", body, id);
        publish_status(&shared, codecs);
    }
    let mut parameters = Parameters::new();
    parameters.insert(GOAL_ID.to_owned(), key.into());
    node.send_output(port, &parameters, goal.as_ref()).map_err(|e| e.to_string())
}

/// Beyond [`MAX_GOALS`], forgets the oldest goals that have finished.
fn forget_finished(shared: &mut Shared) {
    while shared.goals.len() > MAX_GOALS {
        let Some(position) = shared.order.iter().position(|k| shared.goals.get(k).is_some_and(|g| g.result.is_some()))
        else {
            return;
        };
        if let Some(key) = shared.order.remove(position) {
            shared.goals.remove(&key);
        }
    }
}

/// Answers a `get_result` request now if the result is in, else once it is.
fn wait_result(state: &Mutex<Shared>, key: &str, id: SampleIdentity) {
    let mut shared = lock(state);
    let name = shared.name.clone();
    match shared.goals.get_mut(key) {
        Some(Goal { result: Some(result), .. }) => {
            let result = result.clone();
            reply(&shared.get_result_reply, &name, "result", result, id);
        }
        Some(goal) => goal.waiting.push(id),
        None => warn!("{name}: a result was asked for the unknown goal `{key}`; the request is dropped"),
    }
}

/// Cancels the goals a request names: marks them canceling and tells the dataflow on `cancel`,
/// or refuses when the node has no `cancel` output.
fn cancel_goal(
    state: &Mutex<Shared>,
    codecs: &Codecs,
    node: &Node,
    cancel_port: bool,
    id: SampleIdentity,
    request: &CancelGoal_Request,
) {
    let mut shared = lock(state);
    let name = shared.name.clone();
    let wanted = goal_key(&request.goal_info.goal_id.uuid);
    // A zero id asks for every goal; otherwise the goal named.
    let all = request.goal_info.goal_id.uuid == [0; 16];
    let mut canceling = Vec::new();
    for (key, goal) in &mut shared.goals {
        if (all || *key == wanted) && goal.result.is_none() && cancel_port {
            goal.status = GoalStatus::STATUS_CANCELING;
            canceling.push((key.clone(), goal.info.clone()));
        }
    }
    let return_code = match () {
        () if !cancel_port => CancelGoal_Response::ERROR_REJECTED,
        () if canceling.is_empty() && !all && !shared.goals.contains_key(&wanted) => {
            CancelGoal_Response::ERROR_UNKNOWN_GOAL_ID
        }
        () if canceling.is_empty() && !all => CancelGoal_Response::ERROR_GOAL_TERMINATED,
        () => CancelGoal_Response::ERROR_NONE,
    };
    let response =
        CancelGoal_Response { return_code, goals_canceling: canceling.iter().map(|(_, info)| info.clone()).collect() };
    match response
        .to_arrow()
        .map_err(|e| e.to_string())
        .and_then(|v| encode_body(&codecs.cancel_reply, v.as_ref(), 0).map_err(|e| e.to_string()))
    {
        Ok(body) => reply(&shared.cancel_reply, &name, "cancel", body, id),
        Err(why) => warn!("{name}: the cancel reply was not sent: {why}"),
    }
    publish_status(&shared, codecs);
    drop(shared);
    for (key, _) in canceling {
        let mut parameters = Parameters::new();
        parameters.insert(GOAL_ID.to_owned(), key.clone().into());
        let value = StringArray::from(vec![key.as_str()]);
        if let Err(e) = node.send_output(CANCEL_PORT, &parameters, &value) {
            warn!("{name}: cannot send the cancel of goal `{key}`: {e}");
        }
    }
}

fn feedback(shared: &Shared, codecs: &Codecs, uuid: &UUID, value: &ArrayRef) -> Result<(), String> {
    let message =
        row(codecs.feedback.data_type(), vec![uuid.to_arrow().map_err(|e| e.to_string())?, Arc::clone(value)])?;
    write_row(&shared.feedback, &codecs.feedback, message.as_ref(), 0)
}

/// The goal's final status and its encoded `GetResult` reply.
fn finished(codecs: &Codecs, parameters: &Parameters, value: &ArrayRef) -> Result<(i8, rustdds::bytes::Bytes), String> {
    let status = match parameters.get(GOAL_STATUS).and_then(|v| v.as_str()) {
        None | Some("succeeded") => GoalStatus::STATUS_SUCCEEDED,
        Some("aborted") => GoalStatus::STATUS_ABORTED,
        Some("canceled") => GoalStatus::STATUS_CANCELED,
        Some(other) => return Err(format!("`{GOAL_STATUS}: {other}` is not succeeded, aborted or canceled")),
    };
    let response =
        row(codecs.get_result_reply.data_type(), vec![Arc::new(Int8Array::from(vec![status])), Arc::clone(value)])?;
    Ok((status, encode_body(&codecs.get_result_reply, response.as_ref(), 0).map_err(|e| e.to_string())?))
}

fn publish_status(shared: &Shared, codecs: &Codecs) {
    let list = GoalStatusArray {
        status_list: shared
            .goals
            .values()
            .map(|g| GoalStatus { goal_info: g.info.clone(), status: g.status })
            .collect(),
    };
    let written = list
        .to_arrow()
        .map_err(|e| e.to_string())
        .and_then(|v| write_row(&shared.status, &codecs.status, v.as_ref(), 0));
    if let Err(why) = written {
        warn!("{}: the goals' status was not published: {why}", shared.name);
    }
}

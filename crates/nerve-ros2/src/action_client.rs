//! Action bridges, client role: the dataflow sends goals to a ROS 2 action server.
//!
//! Each row reaching the goals input is one goal. The bridge gives it a fresh goal id, sends
//! it (held until a server has matched, its feedback included) and, once the server
//! accepts it, asks for its result. Feedback goes out on `feedback` and the result on `result`,
//! each with the parameters the goal came with and its `goal_id`; a result also carries
//! `goal_status`: `succeeded`, `aborted`, `canceled`, or `rejected` (then the result has no
//! rows). A `cancel` input (the goal id as text, or any value with the `goal_id` parameter)
//! asks the server to cancel that goal.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

use arrow_array::{Array, ArrayRef, BooleanArray, Int8Array, StringArray, StructArray};
use nerve_node::msg::Message as _;
use nerve_node::msg::action_msgs::msg::{GoalInfo, GoalStatus};
use nerve_node::msg::action_msgs::srv::{CancelGoal_Request, CancelGoal_Response};
use nerve_node::msg::builtin_interfaces::msg::Time;
use nerve_node::msg::unique_identifier_msgs::msg::UUID;
use nerve_node::{Message, Node, Parameters};
use nerve_shm::sync::lock;
use nerve_spec::ros2::{CANCEL_PORT, FEEDBACK_PORT, RESULT_PORT, Ros2Action};
use nerve_types::{Codec, Kind, Registry, TypeName};
use rustdds::bytes::Bytes;
use rustdds::{DataReaderStatus, DataWriterStatus, SampleIdentity, StatusEvented, WriteOptionsBuilder};
use tracing::warn;

use crate::action::{GOAL_ID, GOAL_STATUS, goal_key, row};
use crate::bridge::writer_status;
use crate::error::Ros2Error;
use crate::qos::dds_qos;
use crate::service::Waiting;
use crate::wire::{
    ArrowDecoder, Endpoints, Reader, ReaderEvent, Writer, dds_topic_name, encode_body, on_reader_events, on_samples,
};

/// Most goals held until a server matches; the oldest is dropped, with a warning, to make room.
const MAX_HELD: usize = 64;

/// The goals the bridge sent and the requests it waits answers to.
struct Goals {
    /// Each goal's parameters, as the dataflow sent it, by goal id (the oldest forgotten, with
    /// a warning, past 64).
    params: Waiting<String, Parameters>,
    /// `send_goal` requests waiting for the server's answer.
    sent: HashMap<SampleIdentity, String>,
    /// `get_result` requests waiting for the result.
    results: HashMap<SampleIdentity, String>,
    /// `cancel_goal` requests waiting for the server's answer.
    cancels: HashSet<SampleIdentity>,
}

impl Goals {
    /// A finished goal's parameters, with its id and `goal_status`; it is no longer followed.
    fn finish(&mut self, key: &str, status: &str) -> Option<Parameters> {
        let mut parameters = self.params.take(&key.to_owned())?;
        parameters.insert(GOAL_ID.to_owned(), key.to_owned().into());
        parameters.insert(GOAL_STATUS.to_owned(), status.to_owned().into());
        Some(parameters)
    }
}

/// The codecs of the requests the bridge writes.
struct Codecs {
    send_goal: Codec,
    get_result: Codec,
    cancel: Codec,
    /// The action's result, for a rejected goal's empty one.
    result: Codec,
}

/// A client bridge of one action.
pub(crate) struct ActionClient {
    name: String,
    goals_port: String,
    send_goal: Writer,
    cancel: Writer,
    codecs: Arc<Codecs>,
    goals: Arc<Mutex<Goals>>,
    /// Goals waiting for a server: their request and id.
    held: VecDeque<(Bytes, String)>,
    /// ROS 2 servers whose goal reader matched ours.
    servers: i32,
    /// ROS 2 feedback writers matched with the bridge's feedback reader.
    feedback_writers: Arc<AtomicI32>,
}

impl ActionClient {
    /// Creates the action's endpoints and starts the threads that read its answers.
    pub(crate) fn start(
        spec: &Ros2Action,
        name: &str,
        endpoints: &Endpoints,
        registry: &Registry,
        node: &Arc<Node>,
    ) -> Result<Self, Ros2Error> {
        let action = TypeName { kind: Kind::Action, ..TypeName::parse(&spec.action_type)? };
        let cancel = TypeName::parse("action_msgs/srv/CancelGoal")?;
        let qos = dds_qos(&spec.qos);
        let service = |service: &str, parts: &TypeName| -> Result<_, Ros2Error> {
            let (request, response) = (parts.part("Request"), parts.part("Response"));
            let (requests, replies) =
                endpoints.service_topics(&format!("{name}/_action/{service}"), (&request, &response), &qos)?;
            let decoder = ArrowDecoder(Arc::new(Codec::new(registry, &response)?));
            Ok((endpoints.writer(&requests, qos.clone())?, (endpoints.reader(&replies, qos.clone())?, decoder)))
        };
        let (send_goal, get_result) = (action.part("SendGoal"), action.part("GetResult"));
        let (send_goal_writer, goal_replies) = service("send_goal", &send_goal)?;
        let (get_result_writer, result_replies) = service("get_result", &get_result)?;
        let (cancel_writer, cancel_replies) = service("cancel_goal", &cancel)?;
        let feedback_type = action.part("FeedbackMessage");
        let feedback_topic =
            endpoints.topic(&dds_topic_name(&format!("{name}/_action/feedback")), &feedback_type, &qos)?;
        let feedback = (
            endpoints.reader(&feedback_topic, qos.clone())?,
            ArrowDecoder(Arc::new(Codec::new(registry, &feedback_type)?)),
        );
        let codecs = Arc::new(Codecs {
            send_goal: Codec::new(registry, &send_goal.part("Request"))?,
            get_result: Codec::new(registry, &get_result.part("Request"))?,
            cancel: Codec::new(registry, &cancel.part("Request"))?,
            result: Codec::new(registry, &action.part("Result"))?,
        });
        let goals = Arc::new(Mutex::new(Goals {
            params: Waiting::new("unfinished goals"),
            sent: HashMap::new(),
            results: HashMap::new(),
            cancels: HashSet::new(),
        }));
        let failed = |e: std::io::Error| Ros2Error::Config(format!("cannot start the threads of action {name}: {e}"));

        let (state, node2, codecs2) = (Arc::clone(&goals), Arc::clone(node), Arc::clone(&codecs));
        on_samples(name.to_owned(), goal_replies, "goal reply", move |action, sample| {
            let Some(key) = sample.write_options.related_sample_identity().and_then(|id| lock(&state).sent.remove(&id))
            else {
                return; // another client's
            };
            let accepted = column(&sample.sample, "accepted")
                .and_then(|c| c.as_any().downcast_ref::<BooleanArray>().map(|b| b.len() == 1 && b.value(0)));
            if accepted == Some(true) {
                ask_result(action, &state, &codecs2, &get_result_writer, &key);
            } else if let Some(parameters) = lock(&state).finish(&key, "rejected") {
                let empty = arrow_array::new_empty_array(codecs2.result.data_type());
                send(&node2, action, RESULT_PORT, &parameters, &empty);
            }
        })
        .map_err(failed)?;

        let (state, node2) = (Arc::clone(&goals), Arc::clone(node));
        on_samples(name.to_owned(), result_replies, "result reply", move |action, sample| {
            let Some(key) =
                sample.write_options.related_sample_identity().and_then(|id| lock(&state).results.remove(&id))
            else {
                return;
            };
            let status = column(&sample.sample, "status")
                .and_then(|c| c.as_any().downcast_ref::<Int8Array>().map(|s| s.value(0)))
                .map_or("unknown", status_name);
            let Some(result) = column(&sample.sample, "result") else {
                warn!("{action}: the result of goal `{key}` has no `result` field; dropped");
                return;
            };
            if let Some(parameters) = lock(&state).finish(&key, status) {
                send(&node2, action, RESULT_PORT, &parameters, &result);
            }
        })
        .map_err(failed)?;

        let feedback_writers = Arc::new(AtomicI32::new(0));
        let (state, node2, action, writers) =
            (Arc::clone(&goals), Arc::clone(node), name.to_owned(), Arc::clone(&feedback_writers));
        std::thread::Builder::new()
            .name(format!("ros2 {name} feedback"))
            .spawn(move || forward_feedback(&action, feedback, &state, &node2, &writers))
            .map_err(failed)?;

        let state = Arc::clone(&goals);
        on_samples(name.to_owned(), cancel_replies, "cancel reply", move |action, sample| {
            let Some(id) = sample.write_options.related_sample_identity() else { return };
            if !lock(&state).cancels.remove(&id) {
                return;
            }
            match CancelGoal_Response::from_arrow(sample.sample.as_ref()) {
                Ok(reply) if reply.return_code != CancelGoal_Response::ERROR_NONE => {
                    warn!("{action}: the server refused to cancel (return code {})", reply.return_code);
                }
                Ok(_) => {}
                Err(e) => warn!("{action}: a cancel reply that is not one: {e}"),
            }
        })
        .map_err(failed)?;

        Ok(Self {
            name: name.to_owned(),
            goals_port: spec.goals.clone(),
            send_goal: send_goal_writer,
            cancel: cancel_writer,
            codecs,
            goals,
            held: VecDeque::new(),
            servers: 0,
            feedback_writers,
        })
    }

    /// A goal, or a cancel, from the dataflow.
    pub(crate) fn on_input(&mut self, message: &Message) {
        let port = message.id.as_str();
        if port == CANCEL_PORT {
            self.cancel_goal(message);
            return;
        }
        if port != self.goals_port {
            return;
        }
        for i in 0..message.data.len() {
            let key = uuid::Uuid::now_v7().simple().to_string();
            match self.goal_request(&key, &message.data.slice(i, 1)) {
                Ok(body) => {
                    lock(&self.goals).params.insert(&self.name, key.clone(), message.metadata.parameters.clone());
                    self.held.push_back((body, key));
                }
                Err(why) => warn!("{}: goal dropped: {why}", self.name),
            }
        }
        while self.held.len() > MAX_HELD {
            if let Some((_, key)) = self.held.pop_front() {
                lock(&self.goals).params.take(&key);
            }
            warn!("{}: no ROS 2 action server yet and {MAX_HELD} goals held; the oldest is dropped", self.name);
        }
        self.flush();
    }

    /// Between inputs: follows the match status of the goal writer and sends held goals once a
    /// server has matched.
    pub(crate) fn on_poll(&mut self) {
        while let Some(status) = self.send_goal.try_recv_status() {
            if let DataWriterStatus::PublicationMatched { current, .. } = &status {
                self.servers = current.count();
            }
            writer_status(&self.name, &status);
        }
        self.flush();
    }

    fn flush(&mut self) {
        // A goal sent before the server's feedback writer matched could lose its first feedback.
        if self.servers == 0 || self.feedback_writers.load(Ordering::Acquire) == 0 {
            return;
        }
        // The goals stay locked while writing: no reply comes before its request is known.
        let mut goals = lock(&self.goals);
        while let Some((body, key)) = self.held.pop_front() {
            match self.send_goal.write_with_options(body, WriteOptionsBuilder::new().build()) {
                Ok(id) => {
                    goals.sent.insert(id, key);
                }
                Err(e) => warn!("{}: goal `{key}` was not sent: {e:?}", self.name),
            }
        }
    }

    /// The `SendGoal` request of `goal` (one row) under the id `key`.
    fn goal_request(&self, key: &str, goal: &ArrayRef) -> Result<Bytes, String> {
        let uuid = UUID { uuid: uuid_of(key)? }.to_arrow().map_err(|e| e.to_string())?;
        let request = row(self.codecs.send_goal.data_type(), vec![uuid, Arc::clone(goal)])?;
        encode_body(&self.codecs.send_goal, request.as_ref(), 0).map_err(|e| e.to_string())
    }

    /// Asks the server to cancel the goal a `cancel` input names.
    fn cancel_goal(&self, message: &Message) {
        let named =
            message.metadata.parameters.get(GOAL_ID).and_then(|v| v.as_str()).map(str::to_owned).or_else(|| {
                let text = message.data.as_any().downcast_ref::<StringArray>()?;
                (text.len() == 1).then(|| text.value(0).to_owned())
            });
        let Some(key) = named else {
            warn!("{}: a cancel names its goal by the `{GOAL_ID}` parameter or as text; dropped", self.name);
            return;
        };
        let request = uuid_of(&key).and_then(|uuid| {
            let info = GoalInfo { goal_id: UUID { uuid }, stamp: Time { sec: 0, nanosec: 0 } };
            let value = CancelGoal_Request { goal_info: info }.to_arrow().map_err(|e| e.to_string())?;
            encode_body(&self.codecs.cancel, value.as_ref(), 0).map_err(|e| e.to_string())
        });
        let mut goals = lock(&self.goals);
        let sent = request.and_then(|body| {
            self.cancel.write_with_options(body, WriteOptionsBuilder::new().build()).map_err(|e| format!("{e:?}"))
        });
        match sent {
            Ok(id) => {
                goals.cancels.insert(id);
            }
            Err(why) => warn!("{}: the cancel of goal `{key}` was not sent: {why}", self.name),
        }
    }
}

/// Sends the feedback of this bridge's goals on `feedback`, and counts the server's feedback
/// writers that matched, until the process ends.
fn forward_feedback(
    action: &str,
    (reader, decoder): (Reader, ArrowDecoder),
    goals: &Mutex<Goals>,
    node: &Node,
    writers: &AtomicI32,
) {
    on_reader_events(action, (&reader, decoder), "feedback", |event| {
        let sample = match event {
            ReaderEvent::Sample(sample) => sample,
            ReaderEvent::Status(DataReaderStatus::SubscriptionMatched { current, .. }) => {
                writers.store(current.count(), Ordering::Release);
                return;
            }
            ReaderEvent::Status(_) => return,
        };
        let (Some(goal_id), Some(value)) = (column(&sample.sample, "goal_id"), column(&sample.sample, "feedback"))
        else {
            return;
        };
        let Ok(uuid) = UUID::from_arrow(goal_id.as_ref()) else { return };
        let key = goal_key(&uuid.uuid);
        // Every client reads every goal's feedback: only this bridge's goals go on.
        let Some(mut parameters) = lock(goals).params.get(&key).cloned() else { return };
        parameters.insert(GOAL_ID.to_owned(), key.into());
        send(node, action, FEEDBACK_PORT, &parameters, &value);
    });
}

/// Asks for an accepted goal's result.
fn ask_result(action: &str, goals: &Mutex<Goals>, codecs: &Codecs, writer: &Writer, key: &str) {
    let request = uuid_of(key).and_then(|uuid| {
        let uuid = UUID { uuid }.to_arrow().map_err(|e| e.to_string())?;
        let value = row(codecs.get_result.data_type(), vec![uuid])?;
        encode_body(&codecs.get_result, value.as_ref(), 0).map_err(|e| e.to_string())
    });
    // Locked while writing, as in `flush`.
    let mut goals = lock(goals);
    match request.and_then(|body| {
        writer.write_with_options(body, WriteOptionsBuilder::new().build()).map_err(|e| format!("{e:?}"))
    }) {
        Ok(id) => {
            goals.results.insert(id, key.to_owned());
        }
        Err(why) => warn!("{action}: the result of goal `{key}` cannot be asked for: {why}"),
    }
}

fn send(node: &Node, action: &str, port: &str, parameters: &Parameters, value: &ArrayRef) {
    if let Err(e) = node.send_output(port, parameters, value.as_ref()) {
        warn!("{action}: cannot send on `{port}`: {e}");
    }
}

/// The column `name` of a one-row message.
fn column(value: &ArrayRef, name: &str) -> Option<ArrayRef> {
    value.as_any().downcast_ref::<StructArray>()?.column_by_name(name).cloned()
}

/// The 16 bytes of a goal id written as 32 hex digits.
fn uuid_of(key: &str) -> Result<[u8; 16], String> {
    uuid::Uuid::parse_str(key).map(|u| *u.as_bytes()).map_err(|e| format!("goal id `{key}`: {e}"))
}

/// A terminal status as the `goal_status` parameter says it.
fn status_name(status: i8) -> &'static str {
    match status {
        GoalStatus::STATUS_SUCCEEDED => "succeeded",
        GoalStatus::STATUS_CANCELED => "canceled",
        GoalStatus::STATUS_ABORTED => "aborted",
        _ => "unknown",
    }
}

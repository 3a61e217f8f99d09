//! A dataflow's `ros2:` node at run time: a ROS 2 node on the DDS side, a nerve node on the
//! other. Each subscribed topic has a thread that decodes its samples into Arrow and sends them
//! on the topic's output; the node's own thread encodes what reaches its inputs and writes it.
//!
//! A sample the bridge itself wrote is never sent back out (a topic both published and
//! subscribed by one bridge does not loop), and QoS that keeps a ROS 2 peer from matching is
//! logged with both sides' policies, never silently ignored.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use nerve_node::{Event, Next, Node, Parameters};
use nerve_spec::ros2::{Ros2Bridge, Ros2Direction, Ros2Role, Ros2Service, resolve_topic};
use nerve_types::{Codec, Kind, Registry, TypeName};
use ros2_client::{Context, NodeName, NodeOptions};
use rustdds::{DataReaderStatus, DataWriterStatus, GUID, RTPSEntity, StatusEvented};
use tracing::{info, warn};

use crate::action::ActionServer;
use crate::action_client::ActionClient;
use crate::domain::Domain;
use crate::error::Ros2Error;
use crate::qos::dds_qos;
use crate::service::{self, ServiceBridge};
use crate::wire::{ArrowDecoder, Endpoints, Reader, ReaderEvent, Writer, dds_topic_name, on_reader_events, write_row};

/// The variable through which `nerve run` hands a bridge node its `ros2:` key, as JSON.
pub const CONFIG_VAR: &str = "NERVE_ROS2_BRIDGE";

/// How often the node's thread, when no input arrives, looks at its writers' match status.
const STATUS_POLL: Duration = Duration::from_millis(200);

/// A topic the bridge publishes to ROS 2.
struct Outgoing {
    name: String,
    codec: Codec,
    writer: Writer,
}

/// A topic the bridge receives from ROS 2.
struct Incoming {
    name: String,
    port: String,
    decoder: ArrowDecoder,
    reader: Reader,
}

/// Runs the bridge node `nerve run` started, with the configuration in [`CONFIG_VAR`], until the
/// dataflow stops.
///
/// # Errors
/// As [`run`], and a missing or unreadable configuration.
pub fn run_from_env() -> Result<(), Ros2Error> {
    let text = std::env::var(CONFIG_VAR)
        .map_err(|_| Ros2Error::Config(format!("{CONFIG_VAR} is not set: `nerve run` starts bridge nodes")))?;
    let bridge: Ros2Bridge = serde_json::from_str(&text).map_err(|e| Ros2Error::Config(e.to_string()))?;
    run(&bridge)
}

/// Joins ROS 2 as `bridge` says, then the dataflow, and bridges until the dataflow stops.
///
/// # Errors
/// A ROS 2 environment this DDS cannot honour, a type that is not known, a DDS entity that
/// cannot be created, or a node that cannot join the dataflow. Once running, a message that
/// does not encode or decode is logged and dropped: it never stops the bridge.
pub fn run(bridge: &Ros2Bridge) -> Result<(), Ros2Error> {
    let domain = Domain::from_env()?;
    let participant = domain.participant()?;
    let own = participant.guid();
    let full_name = format!("{}/{}", bridge.namespace.trim_end_matches('/'), bridge.node_name);
    let node_error = |why: String| Ros2Error::Node { name: full_name.clone(), why };
    let context = Context::from_domain_participant(participant.clone()).map_err(|e| node_error(format!("{e:?}")))?;
    let name = NodeName::new(&bridge.namespace, &bridge.node_name).map_err(|e| node_error(format!("{e:?}")))?;
    // Kept alive for the process: it is what `ros2 node list` sees.
    let _ros_node = context.new_node(name, NodeOptions::new()).map_err(|e| node_error(format!("{e:?}")))?;

    let endpoints = Endpoints::new(&participant)?;
    // The runtime hands the node the dataflow's `types:` folders in NERVE_TYPES_PATH.
    let registry = Registry::new(&[]);
    let mut outgoing: HashMap<String, Vec<Outgoing>> = HashMap::new();
    let mut incoming = Vec::new();
    for t in &bridge.topics {
        let type_name = TypeName::parse(&t.message_type)?;
        let codec = Codec::new(&registry, &type_name)?;
        let name = resolve_topic(&t.topic, &bridge.namespace, &bridge.node_name);
        let qos = dds_qos(&t.qos);
        let topic = endpoints.topic(&dds_topic_name(&name), &type_name, &qos)?;
        match t.direction {
            Ros2Direction::Publish => {
                let writer = endpoints.writer(&topic, qos)?;
                outgoing.entry(t.port.clone()).or_default().push(Outgoing { name, codec, writer });
            }
            Ros2Direction::Subscribe => {
                let reader = endpoints.reader(&topic, qos)?;
                incoming.push(Incoming { name, port: t.port.clone(), decoder: ArrowDecoder(Arc::new(codec)), reader });
            }
        }
    }
    let service = bridge.service.as_ref().map(|s| service_endpoints(s, bridge, &endpoints, &registry)).transpose()?;

    let (node, mut events) = Node::init_from_env()?;
    let node = Arc::new(node);
    let thread_failed = |name: &str| {
        let name = name.to_owned();
        move |e: std::io::Error| Ros2Error::Config(format!("cannot start the thread of {name}: {e}"))
    };
    for topic in incoming {
        let node = Arc::clone(&node);
        let name = topic.name.clone();
        std::thread::Builder::new()
            .name(format!("ros2 {name}"))
            .spawn(move || forward(&topic, &node, own))
            .map_err(thread_failed(&name))?;
    }
    let mut action = match &bridge.action {
        Some(spec) => {
            let name = resolve_topic(&spec.action, &bridge.namespace, &bridge.node_name);
            Some(match spec.role {
                Ros2Role::Server => Action::Server(ActionServer::start(spec, &name, &endpoints, &registry, &node)?),
                Ros2Role::Client => {
                    Action::Client(Box::new(ActionClient::start(spec, &name, &endpoints, &registry, &node)?))
                }
            })
        }
        None => None,
    };
    let mut service = match (service, &bridge.service) {
        (Some((name, ends)), Some(spec)) => Some(
            match spec.role {
                Ros2Role::Server => ServiceBridge::server(name.clone(), ends, &node, spec.requests.clone()),
                Ros2Role::Client => ServiceBridge::client(name.clone(), ends, &node, spec.responses.clone()),
            }
            .map_err(thread_failed(&name))?,
        ),
        _ => None,
    };
    loop {
        match events.next_event(Some(STATUS_POLL)) {
            Next::Event(Event::Input(message)) => {
                for topic in outgoing.get(message.id.as_str()).into_iter().flatten() {
                    publish(topic, message.data.as_ref());
                }
                if let Some(service) = &mut service {
                    service.on_input(&message);
                }
                match &mut action {
                    Some(Action::Server(server)) => server.on_input(&message),
                    Some(Action::Client(client)) => client.on_input(&message),
                    None => {}
                }
            }
            Next::Event(Event::Error(e)) => warn!("{e}"),
            Next::Event(Event::InputClosed { .. } | Event::InputRecovered { .. }) | Next::Timeout => {}
            Next::Event(Event::Stop) | Next::End => break,
        }
        for topic in outgoing.values().flatten() {
            report_writer(&topic.name, &topic.writer);
        }
        if let Some(service) = &mut service {
            service.on_poll();
        }
        if let Some(Action::Client(client)) = &mut action {
            client.on_poll();
        }
    }
    Ok(())
}

/// The side of an action the bridge plays.
enum Action {
    /// ROS 2 sends goals to the dataflow.
    Server(ActionServer),
    /// The dataflow sends goals to ROS 2.
    Client(Box<ActionClient>),
}

/// Writes each row of `value` as one ROS 2 message.
fn publish(topic: &Outgoing, value: &dyn arrow_array::Array) {
    for row in 0..value.len() {
        if let Err(why) = write_row(&topic.writer, &topic.codec, value, row) {
            warn!("{}: message dropped: {why}", topic.name);
        }
    }
}

/// Sends what ROS 2 writers publish on `topic` to its output, until the dataflow ends.
fn forward(topic: &Incoming, node: &Node, own: GUID) {
    let parameters = Parameters::new();
    on_reader_events(&topic.name, (&topic.reader, topic.decoder.clone()), "sample", |event| match event {
        ReaderEvent::Sample(sample) if sample.writer_guid.prefix == own.prefix => {}
        ReaderEvent::Sample(sample) => {
            if let Err(e) = node.send_output(&topic.port, &parameters, sample.sample.as_ref()) {
                warn!("{}: cannot send on `{}`: {e}", topic.name, topic.port);
            }
        }
        ReaderEvent::Status(status) => reader_status(&topic.name, &status),
    });
}

fn reader_status(topic: &str, status: &DataReaderStatus) {
    match status {
        DataReaderStatus::RequestedIncompatibleQos { last_policy_id, writer, requested_qos, offered_qos, .. } => warn!(
            "{topic}: the ROS 2 writer {writer:?} cannot match this bridge's reader: its {last_policy_id:?} policy is \
             incompatible (the bridge asks {requested_qos:?}, the writer offers {offered_qos:?}); none of its \
             messages will arrive: set the topic's `qos:` to match"
        ),
        DataReaderStatus::SubscriptionMatched { current, .. } => {
            info!("{topic}: {} ROS 2 writer(s) matched", current.count());
        }
        _ => {}
    }
}

/// The service's DDS topics (`rq/<name>Request`, `rr/<name>Reply`), the bridge's side of them,
/// and its codecs.
fn service_endpoints(
    spec: &Ros2Service,
    bridge: &Ros2Bridge,
    endpoints: &Endpoints,
    registry: &Registry,
) -> Result<(String, service::Endpoints), Ros2Error> {
    let service = TypeName { kind: Kind::Srv, ..TypeName::parse(&spec.service_type)? };
    let name = resolve_topic(&spec.service, &bridge.namespace, &bridge.node_name);
    let (request_type, response_type) = (service.part("Request"), service.part("Response"));
    let qos = dds_qos(&spec.qos);
    let (requests, replies) = endpoints.service_topics(&name, (&request_type, &response_type), &qos)?;
    let request_codec = Codec::new(registry, &request_type)?;
    let response_codec = Codec::new(registry, &response_type)?;
    let ends = match spec.role {
        Ros2Role::Server => service::Endpoints {
            writer: endpoints.writer(&replies, qos.clone())?,
            reader: endpoints.reader(&requests, qos)?,
            codec: response_codec,
            decoder: ArrowDecoder(Arc::new(request_codec)),
        },
        Ros2Role::Client => service::Endpoints {
            writer: endpoints.writer(&requests, qos.clone())?,
            reader: endpoints.reader(&replies, qos)?,
            codec: request_codec,
            decoder: ArrowDecoder(Arc::new(response_codec)),
        },
    };
    Ok((name, ends))
}

fn report_writer(name: &str, writer: &Writer) {
    while let Some(status) = writer.try_recv_status() {
        writer_status(name, &status);
    }
}

pub(crate) fn writer_status(topic: &str, status: &DataWriterStatus) {
    match status {
        DataWriterStatus::OfferedIncompatibleQos { last_policy_id, reader, requested_qos, offered_qos, .. } => warn!(
            "{topic}: the ROS 2 reader {reader:?} cannot match this bridge's writer: its {last_policy_id:?} policy is \
             incompatible (the reader asks {requested_qos:?}, the bridge offers {offered_qos:?}); it will receive \
             nothing: set the topic's `qos:` to match (ROS 2's default subscription is `reliable: true`)"
        ),
        DataWriterStatus::PublicationMatched { current, .. } => {
            info!("{topic}: {} ROS 2 reader(s) matched", current.count());
        }
        _ => {}
    }
}

//! nerve's transform tree and ROS 2's, joined: what either side broadcasts on its `tf` or
//! `tf_static` is published on the other's, converted between nerve's transform messages
//! ([`nerve_tf::wire`]) and `tf2_msgs/msg/TFMessage`.
//!
//! The join never sends back what it published itself: on the DDS side its own samples are
//! recognised by their writer, on nerve's by the [`FROM_ROS2`] parameter it puts on them.
//! Static transforms are gathered: each side's `tf_static` keeps only its last message for late
//! joiners, so the join republishes every static transform it has seen from the other side.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::ArrayRef;
use nerve_node::msg::Message as _;
use nerve_node::msg::builtin_interfaces::msg::Time;
use nerve_node::msg::geometry_msgs::msg::{Quaternion, Transform as RosTransform, TransformStamped, Vector3};
use nerve_node::msg::std_msgs::msg::Header;
use nerve_node::msg::tf2_msgs::msg::TFMessage;
use nerve_spec::ros2::{Ros2Durability, Ros2History, Ros2Qos};
use nerve_tf::wire::{TF_STATIC_TOPIC, TF_TOPIC};
use nerve_tf::{StampedTransform, Transform};
use nerve_topic::{Parameters, Publisher, PublisherOptions, Subscriber, SubscriberOptions};
use nerve_types::{Codec, Registry, TypeName};
use rustdds::{DomainParticipant, GUID, RTPSEntity};
use tracing::warn;

use crate::error::Ros2Error;
use crate::qos::dds_qos;
use crate::stop::{Stop, StopOnDrop, stop_on_drop};
use crate::wire::{ArrowDecoder, Endpoints, Reader, Writer, dds_topic_name, on_samples, write_row};

/// Parameter the join puts on the transform messages it publishes on nerve's topics.
pub const FROM_ROS2: &str = "from_ros2";

/// How often nerve's side looks at the stop flag while no transform arrives.
const POLL: Duration = Duration::from_millis(200);

/// ROS 2's `/tf` QoS (tf2's broadcaster and listener): reliable, the last 100.
fn tf_qos() -> Ros2Qos {
    Ros2Qos { reliable: true, history: Ros2History::KeepLast(100), ..Ros2Qos::default() }
}

/// ROS 2's `/tf_static` QoS: reliable and transient-local, so late joiners get it.
fn tf_static_qos() -> Ros2Qos {
    Ros2Qos {
        reliable: true,
        durability: Ros2Durability::TransientLocal,
        history: Ros2History::KeepLast(1),
        ..Ros2Qos::default()
    }
}

/// One of the two transform topics, as both sides name it.
#[derive(Clone, Copy)]
struct TfTopic {
    nerve: &'static str,
    ros: &'static str,
    is_static: bool,
}

const TOPICS: [TfTopic; 2] = [
    TfTopic { nerve: TF_TOPIC, ros: "/tf", is_static: false },
    TfTopic { nerve: TF_STATIC_TOPIC, ros: "/tf_static", is_static: true },
];

/// The running join; it stops when dropped.
pub struct TransformJoin {
    _stop: StopOnDrop,
}

impl TransformJoin {
    /// Joins nerve's transform topics of topic domain `nerve_domain` with ROS 2's in
    /// `participant`'s domain.
    ///
    /// # Errors
    /// The DDS endpoints or nerve's topics cannot be set up.
    pub fn start(participant: &DomainParticipant, nerve_domain: u32) -> Result<Self, Ros2Error> {
        let endpoints = Endpoints::new(participant)?;
        let registry = Registry::new(&[]);
        let type_name = TypeName::parse(TFMessage::TYPE_NAME)?;
        let codec = Arc::new(Codec::new(&registry, &type_name)?);
        let (stop, flag) = stop_on_drop();
        let own = participant.guid();
        for topic in TOPICS {
            let qos = dds_qos(&if topic.is_static { tf_static_qos() } else { tf_qos() });
            let dds = endpoints.topic(&dds_topic_name(topic.ros), &type_name, &qos)?;
            let writer = endpoints.writer(&dds, qos.clone())?;
            let reader = endpoints.reader(&dds, qos)?;
            let topic_error =
                |e: nerve_topic::TopicError| Ros2Error::Config(format!("nerve's `{}` topic: {e}", topic.nerve));
            let options =
                PublisherOptions { domain: nerve_domain, latched: topic.is_static, ..PublisherOptions::default() };
            let publisher = Publisher::new(topic.nerve, options).map_err(topic_error)?;
            let subscriber = Subscriber::new(
                topic.nerve,
                SubscriberOptions { domain: nerve_domain, ..SubscriberOptions::default() },
            )
            .map_err(topic_error)?;
            let failed =
                |e: std::io::Error| Ros2Error::Config(format!("cannot start the threads of {}: {e}", topic.ros));
            let (to_ros_codec, stop_flag) = (Arc::clone(&codec), flag.clone());
            std::thread::Builder::new()
                .name(format!("tf to ros2 {}", topic.ros))
                .spawn(move || to_ros(topic, &subscriber, &writer, &to_ros_codec, &stop_flag))
                .map_err(failed)?;
            from_ros(topic, reader, ArrowDecoder(Arc::clone(&codec)), publisher, own).map_err(failed)?;
        }
        Ok(Self { _stop: stop })
    }
}

/// nerve's transforms out to ROS 2, until `stop`.
fn to_ros(topic: TfTopic, subscriber: &Subscriber, writer: &Writer, codec: &Codec, stop: &Stop) {
    let mut statics = BTreeMap::new();
    while !stop.requested() {
        let message = match subscriber.recv(Some(POLL)) {
            Ok(Some(message)) => message,
            Ok(None) => continue,
            Err(e) => {
                warn!("nerve's `{}`: {e}", topic.nerve);
                continue;
            }
        };
        if message.metadata.parameters.contains_key(FROM_ROS2) {
            continue;
        }
        let transforms = match nerve_tf::wire::decode(&message.data) {
            Ok(transforms) => transforms,
            Err(e) => {
                warn!("nerve's `{}`: a message that is not transforms was not sent to ROS 2: {e}", topic.nerve);
                continue;
            }
        };
        let transforms = gathered(&mut statics, topic, transforms);
        let written = to_tf_message(&transforms).and_then(|value| write_row(writer, codec, value.as_ref(), 0));
        if let Err(why) = written {
            warn!("{}: transforms not sent: {why}", topic.ros);
        }
    }
}

/// Starts sending ROS 2's transforms into nerve's topic, for as long as the process runs.
fn from_ros(
    topic: TfTopic,
    reader: Reader,
    decoder: ArrowDecoder,
    publisher: Publisher,
    own: GUID,
) -> std::io::Result<()> {
    let mut statics = BTreeMap::new();
    let mut from = Parameters::new();
    from.insert(FROM_ROS2.to_owned(), true.into());
    on_samples(topic.ros.to_owned(), (reader, decoder), "message", move |_, sample| {
        if sample.writer_guid.prefix == own.prefix {
            return;
        }
        let transforms = match from_tf_message(&sample.sample) {
            Ok(transforms) => gathered(&mut statics, topic, transforms),
            Err(why) => {
                warn!("{}: transforms dropped: {why}", topic.ros);
                return;
            }
        };
        if let Err(e) = publisher.send(&nerve_tf::wire::encode(&transforms), &from) {
            warn!("nerve's `{}`: transforms from ROS 2 not sent: {e}", topic.nerve);
        }
    })
}

/// For `tf_static`, every static transform seen so far (the latest per child frame); for `tf`,
/// the message's own.
fn gathered(
    statics: &mut BTreeMap<String, StampedTransform>,
    topic: TfTopic,
    transforms: Vec<StampedTransform>,
) -> Vec<StampedTransform> {
    if !topic.is_static {
        return transforms;
    }
    statics.extend(transforms.into_iter().map(|t| (t.child.clone(), t)));
    statics.values().cloned().collect()
}

const NANOS: i64 = 1_000_000_000;

fn to_tf_message(transforms: &[StampedTransform]) -> Result<ArrayRef, String> {
    let message = TFMessage {
        transforms: transforms
            .iter()
            .map(|t| {
                let [x, y, z] = t.transform.translation;
                let [qx, qy, qz, qw] = t.transform.rotation;
                TransformStamped {
                    header: Header {
                        stamp: Time {
                            sec: i32::try_from(t.stamp_ns.div_euclid(NANOS)).unwrap_or(i32::MAX),
                            nanosec: u32::try_from(t.stamp_ns.rem_euclid(NANOS)).unwrap_or(0),
                        },
                        frame_id: t.parent.clone(),
                    },
                    child_frame_id: t.child.clone(),
                    transform: RosTransform {
                        translation: Vector3 { x, y, z },
                        rotation: Quaternion { x: qx, y: qy, z: qz, w: qw },
                    },
                }
            })
            .collect(),
    };
    message.to_arrow().map_err(|e| e.to_string())
}

fn from_tf_message(value: &ArrayRef) -> Result<Vec<StampedTransform>, String> {
    let message = TFMessage::from_arrow(value.as_ref()).map_err(|e| e.to_string())?;
    message
        .transforms
        .into_iter()
        .map(|t| {
            let (p, q) = (t.transform.translation, t.transform.rotation);
            let transform = Transform::new([p.x, p.y, p.z], [q.x, q.y, q.z, q.w])
                .map_err(|e| format!("{} → {}: {e}", t.header.frame_id, t.child_frame_id))?;
            let stamp_ns = i64::from(t.header.stamp.sec) * NANOS + i64::from(t.header.stamp.nanosec);
            Ok(StampedTransform::new(t.header.frame_id, t.child_frame_id, stamp_ns, transform))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transforms_convert_both_ways_with_their_stamps() -> Result<(), String> {
        let pose = Transform::new([1.0, -2.0, 0.5], [0.0, 0.0, 0.6, 0.8]).map_err(|e| e.to_string())?;
        let before = vec![StampedTransform::new("map", "base_link", 1_700_000_000_123_456_789, pose)];
        let value = to_tf_message(&before)?;
        assert_eq!(from_tf_message(&value)?, before);
        Ok(())
    }

    #[test]
    fn static_transforms_are_gathered_by_child_frame() -> Result<(), String> {
        let one = Transform::new([1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]).map_err(|e| e.to_string())?;
        let mut statics = BTreeMap::new();
        let first = gathered(&mut statics, TOPICS[1], vec![StampedTransform::new("base", "lidar", 1, one)]);
        assert_eq!(first.len(), 1);
        let both = gathered(&mut statics, TOPICS[1], vec![StampedTransform::new("base", "camera", 2, one)]);
        assert_eq!(both.iter().map(|t| t.child.as_str()).collect::<Vec<_>>(), ["camera", "lidar"]);
        assert_eq!(gathered(&mut statics, TOPICS[0], vec![StampedTransform::new("a", "b", 3, one)]).len(), 1);
        Ok(())
    }
}

//! Topics that appear on both sides: nerve's shared topics and ROS 2's, joined by name
//! (`robot/pose` is `/robot/pose`) for the names that match the patterns the user gave.
//!
//! A ROS 2 topic with a publisher becomes a nerve topic with a publisher, so nerve's
//! subscribers (and `nerve topic list`) find it; its samples are read from DDS only while a
//! nerve subscriber listens. A nerve topic is written to DDS only while a ROS 2 subscription
//! to it exists, in the type that subscription declares. The join never sends back what it
//! published itself: on DDS its own endpoints are recognised by their participant, on nerve's
//! side by their process and by the [`FROM_ROS2`] parameter on what it publishes.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use futures::channel::oneshot;
use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use nerve_spec::ros2::{Ros2Durability, Ros2History, Ros2Qos};
use nerve_topic::registry::Kind as EndpointKind;
use nerve_topic::{Parameters, Publisher, PublisherOptions, Subscriber, SubscriberOptions};
use nerve_types::{Codec, Registry, TypeName};
use rustdds::policy::{Durability, Reliability};
use rustdds::{DomainParticipant, GUID, QosPolicies, RTPSEntity};
use tracing::{info, warn};

use crate::error::Ros2Error;
use crate::qos::dds_qos;
use crate::stop::{Stop, StopOnDrop, stop_on_drop};
use crate::transforms::FROM_ROS2;
use crate::wire::{ArrowDecoder, Endpoints, Writer, dds_topic_name, dds_type_name, on_samples_until, write_row};

/// How often both sides' endpoints are looked at.
const POLL: Duration = Duration::from_millis(200);

/// Topics never joined by a pattern: ROS 2's own plumbing, and the transform topics that
/// [`crate::TransformJoin`] joins with their meaning.
const NOT_JOINED: [&str; 4] = ["rosout", "parameter_events", "tf", "tf_static"];

/// Which topic names to join: shell-style globs over names without their leading `/`, where
/// `*` stays within a level and `**` crosses levels (`camera/*`, `robot/**`, `chatter`).
#[derive(Debug, Clone)]
pub struct TopicPatterns {
    set: GlobSet,
}

impl TopicPatterns {
    /// The patterns `patterns` (with or without a leading `/`).
    ///
    /// # Errors
    /// [`Ros2Error::Config`] naming a pattern that is not a glob.
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<Self, Ros2Error> {
        let mut set = GlobSetBuilder::new();
        for pattern in patterns {
            let pattern = pattern.as_ref();
            let glob: Glob = GlobBuilder::new(pattern.trim_start_matches('/'))
                .literal_separator(true)
                .build()
                .map_err(|e| Ros2Error::Config(format!("topic pattern `{pattern}`: {e}")))?;
            set.add(glob);
        }
        let set = set.build().map_err(|e| Ros2Error::Config(format!("topic patterns: {e}")))?;
        Ok(Self { set })
    }

    /// Whether the topic `name` (no leading `/`) is joined.
    #[must_use]
    pub fn matches(&self, name: &str) -> bool {
        !NOT_JOINED.contains(&name) && self.set.is_match(name)
    }
}

/// The running join; it stops when dropped.
pub struct TopicJoin {
    _stop: StopOnDrop,
}

impl TopicJoin {
    /// Joins the topics of `participant`'s ROS 2 domain and of nerve's topic domain
    /// `nerve_domain` that `patterns` match, with types from `registry`.
    ///
    /// # Errors
    /// [`Ros2Error`]: the DDS publisher and subscriber cannot be created, or the thread that
    /// follows both sides cannot start.
    pub fn start(
        participant: &DomainParticipant,
        patterns: TopicPatterns,
        nerve_domain: u32,
        registry: Registry,
    ) -> Result<Self, Ros2Error> {
        let (stop, flag) = stop_on_drop();
        let mut join = Join {
            participant: participant.clone(),
            endpoints: Endpoints::new(participant)?,
            patterns,
            nerve_domain,
            registry,
            inbound: BTreeMap::new(),
            outbound: BTreeMap::new(),
            unknown: BTreeSet::new(),
        };
        std::thread::Builder::new()
            .name("ros2 topics".to_owned())
            .spawn(move || {
                while !flag.requested() {
                    join.step();
                    std::thread::sleep(POLL);
                }
            })
            .map_err(|e| Ros2Error::Config(format!("cannot start the topic join's thread: {e}")))?;
        Ok(Self { _stop: stop })
    }
}

/// What the join follows.
struct Join {
    participant: DomainParticipant,
    endpoints: Endpoints,
    patterns: TopicPatterns,
    nerve_domain: u32,
    registry: Registry,
    /// ROS 2 topics published into nerve, by nerve name.
    inbound: BTreeMap<String, Inbound>,
    /// nerve topics written to ROS 2, by nerve name.
    outbound: BTreeMap<String, Outbound>,
    /// DDS types with no definition here, warned about once.
    unknown: BTreeSet<String>,
}

/// A ROS 2 topic that has publishers, seen from nerve.
struct Inbound {
    type_name: TypeName,
    codec: Arc<Codec>,
    publisher: Arc<Publisher>,
    /// While nerve listens: the sender whose drop stops the DDS reader's thread.
    reading: Option<oneshot::Sender<()>>,
}

/// A nerve topic a ROS 2 subscription listens to.
struct Outbound {
    type_name: TypeName,
    _stop: StopOnDrop,
}

/// The remote DDS endpoints of one joined topic: its ROS 2 type and QoS.
struct Remote {
    type_name: String,
    qos: Vec<QosPolicies>,
}

impl Join {
    fn step(&mut self) {
        let own = self.participant.guid();
        let writers = self.remote(
            own,
            self.participant
                .discovered_writers()
                .into_iter()
                .map(|w| {
                    let data = w.publication_topic_data;
                    (data.key, data.topic_name.clone(), data.type_name.clone(), data.qos())
                })
                .collect(),
        );
        let readers = self.remote(
            own,
            self.participant
                .discovered_readers()
                .into_iter()
                .map(|r| {
                    let data = r.subscription_topic_data;
                    (data.key(), data.topic_name().clone(), data.type_name().clone(), data.qos())
                })
                .collect(),
        );
        let me = std::process::id();
        let nerve_published: BTreeSet<String> = nerve_topic::registry::topics(self.nerve_domain)
            .into_iter()
            .filter(|(key, entries)| {
                nerve_topic::run_scope::split_key(key).0.is_none()
                    && self.patterns.matches(key)
                    && entries.iter().any(|e| e.kind == EndpointKind::Pub && e.pid != me)
            })
            .map(|(key, _)| key)
            .collect();

        self.inbound
            .retain(|name, topic| writers.get(name).is_some_and(|w| w.type_name == dds_type_name(&topic.type_name)));
        for (name, remote) in &writers {
            if !self.inbound.contains_key(name)
                && let Some(topic) = self.inbound_topic(name, remote)
            {
                self.inbound.insert(name.clone(), topic);
            }
        }
        let subscribed: BTreeSet<&String> = self.outbound.keys().collect();
        for (name, topic) in &mut self.inbound {
            // The join's own subscriber to a topic it also writes to ROS 2 is no listener.
            let own = usize::from(subscribed.contains(name));
            let listened = topic.publisher.subscriber_count() > own;
            match (&topic.reading, listened) {
                (None, true) => topic.reading = read(&self.endpoints, name, &writers[name], topic),
                (Some(_), false) => topic.reading = None,
                _ => {}
            }
        }

        self.outbound.retain(|name, topic| {
            nerve_published.contains(name)
                && readers.get(name).is_some_and(|r| r.type_name == dds_type_name(&topic.type_name))
        });
        for name in &nerve_published {
            if let Some(remote) = readers.get(name)
                && !self.outbound.contains_key(name)
                && let Some(topic) = self.outbound_topic(name, remote)
            {
                self.outbound.insert(name.clone(), topic);
            }
        }
    }

    /// The endpoints of other participants on joined ROS 2 topics, by nerve name.
    fn remote(&self, own: GUID, endpoints: Vec<(GUID, String, String, QosPolicies)>) -> BTreeMap<String, Remote> {
        let mut found: BTreeMap<String, Remote> = BTreeMap::new();
        for (guid, topic, type_name, qos) in endpoints {
            let Some(name) = topic.strip_prefix("rt/") else { continue };
            if guid.prefix == own.prefix || !self.patterns.matches(name) || nerve_topic::name::canonical(name).is_err()
            {
                continue;
            }
            let remote = found.entry(name.to_owned()).or_insert_with(|| Remote { type_name, qos: Vec::new() });
            remote.qos.push(qos);
        }
        found
    }

    /// The type of `dds_type` and its codec, if its definition is known here; else warns once.
    fn type_of(&mut self, topic: &str, dds_type: &str) -> Option<(TypeName, Codec)> {
        if self.unknown.contains(dds_type) {
            return None;
        }
        let known = from_dds_name(dds_type).and_then(|name| TypeName::parse(&name).ok()).and_then(|name| {
            let codec = Codec::new(&self.registry, &name).ok()?;
            Some((name, codec))
        });
        if known.is_none() {
            warn!(
                "/{topic}: type {dds_type} has no definition here, so the topic is not joined (give its package's \
                 folder with --types)"
            );
            self.unknown.insert(dds_type.to_owned());
        }
        known
    }

    fn inbound_topic(&mut self, name: &str, remote: &Remote) -> Option<Inbound> {
        let (type_name, codec) = self.type_of(name, &remote.type_name)?;
        let codec = Arc::new(codec);
        // A ROS 2 topic whose publishers all keep their last message for late joiners
        // (transient local: a map, a robot description) keeps it for nerve's too.
        let latched = remote.qos.iter().all(|q| matches!(q.durability(), Some(Durability::TransientLocal)));
        let options = PublisherOptions {
            domain: self.nerve_domain,
            latched,
            origin: Some(format!("ROS 2 {type_name}")),
            ..PublisherOptions::default()
        };
        match Publisher::new(name, options) {
            Ok(publisher) => {
                info!("/{name}: ROS 2 topic of type {type_name} offered to nerve");
                Some(Inbound { type_name, codec, publisher: Arc::new(publisher), reading: None })
            }
            Err(e) => {
                warn!("/{name}: cannot publish the ROS 2 topic in nerve: {e}");
                None
            }
        }
    }

    fn outbound_topic(&mut self, name: &str, remote: &Remote) -> Option<Outbound> {
        let (type_name, codec) = self.type_of(name, &remote.type_name)?;
        // Reliable satisfies every subscription; transient local only when one asks for it
        // (a volatile writer cannot match it).
        let wants_history = remote.qos.iter().any(|q| matches!(q.durability(), Some(Durability::TransientLocal)));
        let qos = dds_qos(&Ros2Qos {
            reliable: true,
            durability: if wants_history { Ros2Durability::TransientLocal } else { Ros2Durability::Volatile },
            history: Ros2History::KeepLast(if wants_history { 1 } else { 10 }),
            ..Ros2Qos::default()
        });
        let started = self
            .endpoints
            .topic(&dds_topic_name(&format!("/{name}")), &type_name, &qos)
            .and_then(|topic| self.endpoints.writer(&topic, qos))
            .and_then(|writer| {
                let options = SubscriberOptions { domain: self.nerve_domain, ..SubscriberOptions::default() };
                let subscriber = Subscriber::new(name, options)
                    .map_err(|e| Ros2Error::Config(format!("nerve's `{name}` topic: {e}")))?;
                Ok((writer, subscriber))
            });
        let (writer, subscriber) = match started {
            Ok(ends) => ends,
            Err(e) => {
                warn!("/{name}: cannot write the nerve topic to ROS 2: {e}");
                return None;
            }
        };
        let ((stop, flag), topic) = (stop_on_drop(), name.to_owned());
        let spawned = std::thread::Builder::new()
            .name(format!("to ros2 /{name}"))
            .spawn(move || to_ros(&topic, &subscriber, &writer, &codec, &flag));
        if let Err(e) = spawned {
            warn!("/{name}: cannot start its thread: {e}");
            return None;
        }
        info!("/{name}: nerve topic written to ROS 2 as {type_name}");
        Some(Outbound { type_name, _stop: stop })
    }
}

/// Starts reading `name`'s samples from DDS into nerve; the returned sender stops it.
fn read(endpoints: &Endpoints, name: &str, remote: &Remote, topic: &Inbound) -> Option<oneshot::Sender<()>> {
    // The reader asks no more than every publisher offers, so each of them matches.
    let reliable = remote.qos.iter().all(|q| matches!(q.reliability(), Some(Reliability::Reliable { .. })));
    let latched = topic.publisher.latched();
    let qos = dds_qos(&Ros2Qos {
        reliable,
        durability: if latched { Ros2Durability::TransientLocal } else { Ros2Durability::Volatile },
        history: Ros2History::KeepLast(10),
        ..Ros2Qos::default()
    });
    let opened = endpoints
        .topic(&dds_topic_name(&format!("/{name}")), &topic.type_name, &qos)
        .and_then(|dds| endpoints.reader(&dds, qos))
        .map(|reader| (reader, ArrowDecoder(Arc::clone(&topic.codec))));
    let ends = match opened {
        Ok(ends) => ends,
        Err(e) => {
            warn!("/{name}: cannot read the ROS 2 topic: {e}");
            return None;
        }
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let publisher = Arc::clone(&topic.publisher);
    let mut from = Parameters::new();
    from.insert(FROM_ROS2.to_owned(), true.into());
    let started = on_samples_until(format!("/{name}"), ends, "message", stopped, move |name, sample| {
        if let Err(e) = publisher.send(&sample.sample, &from) {
            warn!("{name}: a message from ROS 2 was not published in nerve: {e}");
        }
    });
    match started {
        Ok(()) => Some(stop),
        Err(e) => {
            warn!("/{name}: cannot start its thread: {e}");
            None
        }
    }
}

/// nerve's messages on `topic` out to ROS 2, until `stop`.
fn to_ros(topic: &str, subscriber: &Subscriber, writer: &Writer, codec: &Codec, stop: &Stop) {
    while !stop.requested() {
        let message = match subscriber.recv(Some(POLL)) {
            Ok(Some(message)) => message,
            Ok(None) => continue,
            Err(e) => {
                warn!("nerve's `{topic}`: {e}");
                continue;
            }
        };
        if message.metadata.parameters.contains_key(FROM_ROS2) {
            continue;
        }
        for row in 0..message.data.len() {
            if let Err(why) = write_row(writer, codec, message.data.as_ref(), row) {
                warn!("/{topic}: a message from nerve was not written to ROS 2: {why}");
            }
        }
    }
}

/// The ROS 2 type a DDS type name stands for: `std_msgs::msg::dds_::String_` is
/// `std_msgs/msg/String`.
fn from_dds_name(dds: &str) -> Option<String> {
    match dds.split("::").collect::<Vec<_>>()[..] {
        [package, kind, "dds_", name] => Some(format!("{package}/{kind}/{}", name.strip_suffix('_')?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_globs_over_levels() -> Result<(), Ros2Error> {
        let patterns = TopicPatterns::new(&["/camera/*", "robot/**", "chatter"])?;
        assert!(patterns.matches("camera/image"));
        assert!(!patterns.matches("camera/left/image"));
        assert!(patterns.matches("robot/arm/joint_states"));
        assert!(patterns.matches("chatter"));
        assert!(!patterns.matches("chatter2"));
        let everything = TopicPatterns::new(&["**"])?;
        assert!(everything.matches("a/b/c"));
        assert!(!everything.matches("rosout") && !everything.matches("tf_static"));
        assert!(TopicPatterns::new(&["camera/[x"]).is_err_and(|e| e.to_string().contains("camera/[x")));
        Ok(())
    }

    #[test]
    fn dds_type_names_read_back() {
        assert_eq!(from_dds_name("std_msgs::msg::dds_::String_").as_deref(), Some("std_msgs/msg/String"));
        assert_eq!(from_dds_name("sensor_msgs::msg::dds_::Image_").as_deref(), Some("sensor_msgs/msg/Image"));
        assert_eq!(from_dds_name("DDS::String"), None);
    }
}

//! ROS 2 topics on DDS: their names, and CDR samples in and out of the typed Arrow values
//! nerve moves.
//!
//! rustdds reads and writes the 4-byte encapsulation header itself; the adapters here hand it
//! the CDR body nerve's codec writes and decode the body it receives straight into Arrow, so a
//! sample is copied once each way.

use std::convert::Infallible;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef};
use futures::StreamExt;
use futures::future::Either;
use nerve_types::{CdrError, Codec, Kind, TypeName};
use rustdds::bytes::Bytes;
use rustdds::no_key::DeserializedCacheChange;
use rustdds::no_key::{Decode, DeserializerAdapter, SerializerAdapter};
use rustdds::{
    DataReaderStatus, DomainParticipant, QosPolicies, RepresentationIdentifier, StatusEvented, Topic, TopicDescription,
    TopicKind,
};
use tracing::warn;

use crate::error::Ros2Error;

/// The DDS topic of the fully qualified ROS 2 topic `name` (`/chatter` is `rt/chatter`).
#[must_use]
pub fn dds_topic_name(name: &str) -> String {
    format!("rt{name}")
}

/// The DDS type name ROS 2 gives a type: `sensor_msgs/msg/Image` is
/// `sensor_msgs::msg::dds_::Image_`.
#[must_use]
pub fn dds_type_name(name: &TypeName) -> String {
    let kind = match name.kind {
        Kind::Msg => "msg",
        Kind::Srv => "srv",
        Kind::Action => "action",
    };
    nerve_spec::ros2::dds_type_name(&name.package, kind, &name.name)
}

/// Writes CDR bodies as they are; rustdds puts the little-endian header in front.
#[derive(Debug)]
pub struct CdrBody;

impl SerializerAdapter<Bytes> for CdrBody {
    type Error = Infallible;

    fn output_encoding() -> RepresentationIdentifier {
        RepresentationIdentifier::CDR_LE
    }

    fn to_bytes(value: &Bytes) -> Result<Bytes, Infallible> {
        Ok(value.clone())
    }
}

/// Reads samples of plain CDR, either byte order, into the Arrow value of their type.
#[derive(Debug)]
pub struct ArrowCdr;

impl DeserializerAdapter<ArrayRef> for ArrowCdr {
    type Error = CdrError;
    type Decoded = ArrayRef;

    fn supported_encodings() -> &'static [RepresentationIdentifier] {
        &[RepresentationIdentifier::CDR_LE, RepresentationIdentifier::CDR_BE]
    }

    fn transform_decoded(decoded: ArrayRef) -> ArrayRef {
        decoded
    }
}

/// The decoder of one topic's type.
#[derive(Debug, Clone)]
pub struct ArrowDecoder(pub Arc<Codec>);

impl Decode<'_, ArrayRef> for ArrowDecoder {
    type Error = CdrError;

    fn decode_bytes(self, body: &[u8], encoding: RepresentationIdentifier) -> Result<ArrayRef, CdrError> {
        self.0.decode_body(body, encoding == RepresentationIdentifier::CDR_BE)
    }
}

/// A writer of CDR bodies.
pub type Writer = rustdds::no_key::DataWriter<Bytes, CdrBody>;

/// A reader of Arrow values; take samples with [`ArrowDecoder`].
pub type Reader = rustdds::no_key::SimpleDataReader<ArrayRef, ArrowCdr>;

/// Creates topics, writers and readers in one participant.
pub struct Endpoints {
    participant: DomainParticipant,
    publisher: rustdds::Publisher,
    subscriber: rustdds::Subscriber,
}

impl Endpoints {
    /// Endpoints of `participant`.
    ///
    /// # Errors
    /// [`Ros2Error::Dds`]: its publisher or subscriber cannot be created.
    pub fn new(participant: &DomainParticipant) -> Result<Self, Ros2Error> {
        let qos = QosPolicies::qos_none();
        let dds = |what: &str| {
            let what = what.to_owned();
            move |source| Ros2Error::Dds { what, source }
        };
        Ok(Self {
            participant: participant.clone(),
            publisher: participant.create_publisher(&qos).map_err(dds("a DDS publisher"))?,
            subscriber: participant.create_subscriber(&qos).map_err(dds("a DDS subscriber"))?,
        })
    }

    /// The DDS topic `dds_name` ([`dds_topic_name`], or a service's `rq/…Request`) of type
    /// `type_name`.
    ///
    /// # Errors
    /// [`Ros2Error::Dds`].
    pub fn topic(&self, dds_name: &str, type_name: &TypeName, qos: &QosPolicies) -> Result<Topic, Ros2Error> {
        let dds_name = dds_name.to_owned();
        self.participant
            .create_topic(dds_name.clone(), dds_type_name(type_name), qos, TopicKind::NoKey)
            .map_err(|source| Ros2Error::Dds { what: format!("the topic {dds_name}"), source })
    }

    /// The request and reply topics of the ROS 2 service `name` (fully qualified):
    /// `rq<name>Request` and `rr<name>Reply`.
    ///
    /// # Errors
    /// [`Ros2Error::Dds`].
    pub fn service_topics(
        &self,
        name: &str,
        (request, reply): (&TypeName, &TypeName),
        qos: &QosPolicies,
    ) -> Result<(Topic, Topic), Ros2Error> {
        Ok((self.topic(&format!("rq{name}Request"), request, qos)?, self.topic(&format!("rr{name}Reply"), reply, qos)?))
    }

    /// A writer on `topic`.
    ///
    /// # Errors
    /// [`Ros2Error::Dds`].
    pub fn writer(&self, topic: &Topic, qos: QosPolicies) -> Result<Writer, Ros2Error> {
        self.publisher
            .create_datawriter_no_key::<Bytes, CdrBody>(topic, Some(qos))
            .map_err(|source| Ros2Error::Dds { what: format!("a writer on {}", topic.name()), source })
    }

    /// A reader on `topic`.
    ///
    /// # Errors
    /// [`Ros2Error::Dds`].
    pub fn reader(&self, topic: &Topic, qos: QosPolicies) -> Result<Reader, Ros2Error> {
        self.subscriber
            .create_simple_datareader_no_key::<ArrayRef, ArrowCdr>(topic, Some(qos))
            .map_err(|source| Ros2Error::Dds { what: format!("a reader on {}", topic.name()), source })
    }
}

/// Writes row `row` of `value` as one message.
///
/// # Errors
/// What keeps the row from encoding, or the write from being made, as text for a warning.
pub fn write_row(writer: &Writer, codec: &Codec, value: &dyn Array, row: usize) -> Result<(), String> {
    let body = encode_body(codec, value, row).map_err(|e| e.to_string())?;
    writer.write(body, None).map_err(|e| format!("{e:?}"))
}

/// Starts the thread that hands each of `reader`'s samples to `each`; a sample that does not
/// decode is dropped with a warning naming `name` (a topic, service or action) and `what` it was.
pub(crate) fn on_samples(
    name: String,
    ends: (Reader, ArrowDecoder),
    what: &'static str,
    each: impl FnMut(&str, DeserializedCacheChange<ArrayRef>) + Send + 'static,
) -> std::io::Result<()> {
    on_samples_until(name, ends, what, futures::future::pending::<()>(), each)
}

/// [`on_samples`] until `until` completes; the thread then ends and drops the reader.
pub(crate) fn on_samples_until(
    name: String,
    ends: (Reader, ArrowDecoder),
    what: &'static str,
    until: impl Future + Send + 'static,
    mut each: impl FnMut(&str, DeserializedCacheChange<ArrayRef>) + Send + 'static,
) -> std::io::Result<()> {
    let (reader, decoder) = ends;
    std::thread::Builder::new().name(format!("ros2 {name}")).spawn(move || {
        let samples = Box::pin(reader.as_async_stream_with(decoder).take_until(until));
        for sample in futures::executor::block_on_stream(samples) {
            match sample {
                Ok(sample) => each(&name, sample),
                Err(e) => warn!("{name}: a {what} that does not decode was dropped: {e}"),
            }
        }
    })?;
    Ok(())
}

/// What a reader brings the thread that reads it.
pub(crate) enum ReaderEvent {
    /// A sample.
    Sample(DeserializedCacheChange<ArrayRef>),
    /// A change of the reader's matching or QoS.
    Status(DataReaderStatus),
}

/// Hands `reader`'s samples and status changes to `each`, on this thread, until the reader
/// ends; a sample that does not decode is dropped with a warning naming `name` (a topic or an
/// action) and `what` it was.
pub(crate) fn on_reader_events(
    name: &str,
    (reader, decoder): (&Reader, ArrowDecoder),
    what: &str,
    mut each: impl FnMut(ReaderEvent),
) {
    let samples = Box::pin(reader.as_async_stream_with(decoder).map(Either::Left));
    let statuses = Box::pin(reader.as_async_status_stream().map(Either::Right));
    for item in futures::executor::block_on_stream(futures::stream::select(samples, statuses)) {
        match item {
            Either::Left(Ok(sample)) => each(ReaderEvent::Sample(sample)),
            Either::Left(Err(e)) => warn!("{name}: a {what} that does not decode was dropped: {e}"),
            Either::Right(status) => each(ReaderEvent::Status(status)),
        }
    }
}

/// Row `row` of `value` as the CDR body rustdds writes after its header.
///
/// # Errors
/// [`CdrError`] naming the first field that does not fit the type.
pub fn encode_body(codec: &Codec, value: &dyn Array, row: usize) -> Result<Bytes, CdrError> {
    let frame = codec.encode(value, row)?;
    Ok(Bytes::from(frame).slice(4..))
}

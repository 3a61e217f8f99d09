//! Service bridges: requests and replies over ROS 2's DDS service topics (`rq/<name>Request`,
//! `rr/<name>Reply`), paired as ROS 2's default middleware (Fast DDS) pairs them: a reply names
//! its request by the request's sample identity, carried beside the payload.
//!
//! A server bridge sends each ROS 2 request on its output with a `request_id` parameter; the
//! dataflow answers on its input with that parameter, in any order. A client bridge writes what
//! reaches its input as a request, holds requests until a ROS 2 server has matched, and sends
//! each reply on its output with the parameters its request came with.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nerve_node::{Message, Node, Parameters};
use nerve_shm::sync::lock;
use nerve_types::Codec;
use rustdds::bytes::Bytes;
use rustdds::no_key::DeserializedCacheChange;
use rustdds::{DataWriterStatus, SampleIdentity, SequenceNumber, StatusEvented, WriteOptionsBuilder};
use tracing::warn;

use crate::bridge::writer_status;
use crate::wire::{ArrowDecoder, Reader, Writer, encode_body, on_samples};

/// Metadata parameter that pairs a request a server bridge sent with the dataflow's answer.
pub const REQUEST_ID: &str = "request_id";

/// Most requests a bridge keeps waiting: a server's unanswered ones, a client's held or
/// unreplied ones. The oldest is dropped, with a warning, to make room.
const MAX_PENDING: usize = 64;

/// How long a server bridge waits for the dataflow's answer to a request before forgetting it.
const ANSWER_WAIT: Duration = Duration::from_secs(30);

/// The side of a service the bridge plays, with what it is waiting for.
pub(crate) enum ServiceBridge {
    /// ROS 2 calls the dataflow.
    Server(Server),
    /// The dataflow calls ROS 2.
    Client(Client),
}

/// The DDS endpoints and codecs of one service.
pub(crate) struct Endpoints {
    /// `rr/…Reply` for a server, `rq/…Request` for a client.
    pub(crate) writer: Writer,
    /// `rq/…Request` for a server, `rr/…Reply` for a client.
    pub(crate) reader: Reader,
    /// Encodes what the bridge writes.
    pub(crate) codec: Codec,
    /// Decodes what it reads.
    pub(crate) decoder: ArrowDecoder,
}

/// A server bridge's requests waiting for the dataflow's answer.
pub(crate) struct Server {
    name: String,
    writer: Writer,
    codec: Codec,
    waiting: Arc<Mutex<Waiting<String, SampleIdentity>>>,
}

/// A client bridge's requests: held until a server matches, then waiting for the reply.
pub(crate) struct Client {
    name: String,
    writer: Writer,
    codec: Codec,
    held: VecDeque<(Bytes, Parameters)>,
    /// ROS 2 servers whose request reader matched ours (from the writer's match events).
    servers: i32,
    waiting: Arc<Mutex<Waiting<SampleIdentity, Parameters>>>,
}

/// Keys waiting for an answer (requests, goals), oldest first, at most [`MAX_PENDING`].
pub(crate) struct Waiting<K, V> {
    /// What waits, for warnings: `requests`, `goals`.
    what: &'static str,
    entries: HashMap<K, (V, Instant)>,
    order: VecDeque<K>,
}

impl<K: std::hash::Hash + Eq + Clone + std::fmt::Debug, V> Waiting<K, V> {
    pub(crate) fn new(what: &'static str) -> Self {
        Self { what, entries: HashMap::new(), order: VecDeque::new() }
    }

    /// Adds `key`; past [`MAX_PENDING`], the oldest is forgotten with a warning naming `name`
    /// (a service or an action).
    pub(crate) fn insert(&mut self, name: &str, key: K, value: V) {
        while self.entries.len() >= MAX_PENDING {
            let Some(oldest) = self.order.pop_front() else { break };
            if self.entries.remove(&oldest).is_some() {
                warn!("{name}: {MAX_PENDING} {} are waiting; the oldest, {oldest:?}, is forgotten", self.what);
            }
        }
        self.order.push_back(key.clone());
        self.entries.insert(key, (value, Instant::now()));
    }

    pub(crate) fn get(&self, key: &K) -> Option<&V> {
        self.entries.get(key).map(|(value, _)| value)
    }

    pub(crate) fn take(&mut self, key: &K) -> Option<V> {
        self.entries.remove(key).map(|(value, _)| value)
    }

    /// Forgets what has waited longer than `wait`, naming it.
    fn expire(&mut self, service: &str, wait: Duration) {
        while let Some(oldest) = self.order.front() {
            match self.entries.get(oldest) {
                Some((_, since)) if since.elapsed() < wait => break,
                Some(_) => {
                    warn!("{service}: no answer to request {oldest:?} within {}s; it is forgotten", wait.as_secs());
                    self.entries.remove(oldest);
                }
                None => {}
            }
            self.order.pop_front();
        }
    }
}

/// The identity a reply to the request `sample` must name.
pub(crate) fn request_identity<T>(sample: &DeserializedCacheChange<T>) -> SampleIdentity {
    // Fast DDS clients name the request in its related sample identity, with an unknown
    // sequence number; others leave it out: the sample's own identity.
    match sample.write_options.related_sample_identity() {
        Some(related) if related.sequence_number == SequenceNumber::UNKNOWN => {
            SampleIdentity { sequence_number: sample.sequence_number, ..related }
        }
        Some(related) => related,
        None => SampleIdentity { writer_guid: sample.writer_guid, sequence_number: sample.sequence_number },
    }
}

impl ServiceBridge {
    /// A server bridge: starts the thread that sends ROS 2 requests on `port`.
    pub(crate) fn server(name: String, ends: Endpoints, node: &Arc<Node>, port: String) -> std::io::Result<Self> {
        let waiting = Arc::new(Mutex::new(Waiting::new("requests")));
        let (node, pending) = (Arc::clone(node), Arc::clone(&waiting));
        on_samples(name.clone(), (ends.reader, ends.decoder), "request", move |service, sample| {
            let id = request_identity(&sample);
            let request_id = uuid::Uuid::now_v7().to_string();
            let mut parameters = Parameters::new();
            parameters.insert(REQUEST_ID.to_owned(), request_id.clone().into());
            lock(&pending).insert(service, request_id, id);
            if let Err(e) = node.send_output(&port, &parameters, sample.sample.as_ref()) {
                warn!("{service}: cannot send a request on `{port}`: {e}");
            }
        })?;
        Ok(Self::Server(Server { name, writer: ends.writer, codec: ends.codec, waiting }))
    }

    /// A client bridge: starts the thread that sends ROS 2 replies on `port`.
    pub(crate) fn client(name: String, ends: Endpoints, node: &Arc<Node>, port: String) -> std::io::Result<Self> {
        let waiting = Arc::new(Mutex::new(Waiting::new("requests")));
        let (node, pending) = (Arc::clone(node), Arc::clone(&waiting));
        on_samples(name.clone(), (ends.reader, ends.decoder), "reply", move |service, sample| {
            // Every client of the service reads every reply: keep only those to our requests.
            let Some(parameters) =
                sample.write_options.related_sample_identity().and_then(|id| lock(&pending).take(&id))
            else {
                return;
            };
            if let Err(e) = node.send_output(&port, &parameters, sample.sample.as_ref()) {
                warn!("{service}: cannot send a reply on `{port}`: {e}");
            }
        })?;
        Ok(Self::Client(Client {
            name,
            writer: ends.writer,
            codec: ends.codec,
            held: VecDeque::new(),
            servers: 0,
            waiting,
        }))
    }

    /// What reached the bridge's input: an answer (server) or a request (client).
    pub(crate) fn on_input(&mut self, message: &Message) {
        match self {
            Self::Server(server) => server.answer(message),
            Self::Client(client) => {
                for row in 0..message.data.len() {
                    match encode_body(&client.codec, message.data.as_ref(), row) {
                        Ok(body) => client.held.push_back((body, message.metadata.parameters.clone())),
                        Err(e) => warn!("{}: request dropped: {e}", client.name),
                    }
                }
                while client.held.len() > MAX_PENDING {
                    client.held.pop_front();
                    warn!(
                        "{}: no ROS 2 server yet and {MAX_PENDING} requests held; the oldest is dropped",
                        client.name
                    );
                }
                client.flush();
            }
        }
    }

    /// Housekeeping between inputs: reports the writer's match status, sends held requests
    /// once a server matched, forgets answers that never came.
    pub(crate) fn on_poll(&mut self) {
        match self {
            Self::Server(server) => {
                while let Some(status) = server.writer.try_recv_status() {
                    writer_status(&server.name, &status);
                }
                lock(&server.waiting).expire(&server.name, ANSWER_WAIT);
            }
            Self::Client(client) => {
                while let Some(status) = client.writer.try_recv_status() {
                    if let DataWriterStatus::PublicationMatched { current, .. } = &status {
                        client.servers = current.count();
                    }
                    writer_status(&client.name, &status);
                }
                client.flush();
                lock(&client.waiting).expire(&client.name, ANSWER_WAIT);
            }
        }
    }
}

impl Server {
    fn answer(&self, message: &Message) {
        let Some(request_id) = message.metadata.parameters.get(REQUEST_ID).and_then(|v| v.as_str()) else {
            warn!(
                "{}: an answer without the `{REQUEST_ID}` parameter of its request was dropped (send it with the \
                 request's metadata)",
                self.name
            );
            return;
        };
        let Some(id) = lock(&self.waiting).take(&request_id.to_owned()) else {
            warn!(
                "{}: no request `{request_id}` is waiting (answered already, or forgotten); answer dropped",
                self.name
            );
            return;
        };
        if message.data.len() != 1 {
            warn!(
                "{}: an answer is one message, not {} rows; answer to `{request_id}` dropped",
                self.name,
                message.data.len()
            );
            return;
        }
        let written = encode_body(&self.codec, message.data.as_ref(), 0).map_err(|e| e.to_string()).and_then(|body| {
            let options = WriteOptionsBuilder::new().related_sample_identity(id).build();
            self.writer.write_with_options(body, options).map(drop).map_err(|e| format!("{e:?}"))
        });
        if let Err(why) = written {
            warn!("{}: answer to `{request_id}` dropped: {why}", self.name);
        }
    }
}

impl Client {
    fn flush(&mut self) {
        if self.servers == 0 {
            return;
        }
        while let Some((body, parameters)) = self.held.pop_front() {
            match self.writer.write_with_options(body, WriteOptionsBuilder::new().build()) {
                Ok(id) => lock(&self.waiting).insert(&self.name, id, parameters),
                Err(e) => warn!("{}: request dropped: {e:?}", self.name),
            }
        }
    }
}

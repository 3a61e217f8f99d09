//! The bridge: the Foxglove WebSocket server, and the thread that keeps its channels in step
//! with the topics of this host and moves messages both ways.
//!
//! The server's callbacks run on its tokio runtime and must not block, so they only hand what
//! the client asked for to the bridge's own thread (a channel of [`Command`]s); subscribing,
//! publishing and the registry's files are dealt with there.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use foxglove::messages::{FrameTransform, FrameTransforms, Quaternion, Timestamp, Vector3};
use foxglove::websocket::{
    Capability, ChannelView, Client, ClientChannel, ClientChannelId, ClientId, ServerListener, Status,
};
use foxglove::{
    ChannelId, Context, Encode, PartialMetadata, RawChannel, Schema, WebSocketServer, WebSocketServerHandle,
};
use nerve_shm::sim_clock::SimClock;
use nerve_shm::sync::lock;
use nerve_tf::StampedTransform;
use nerve_topic::{CallbackMode, Callbacks, Message, Publisher, PublisherOptions, Subscriber, SubscriberOptions};
use nerve_types::{Codec, Registry, TypeName};

use crate::channels::{self, Encoding, Types};
use crate::error::{ChannelError, PublishError, StartError};
use crate::{json, params, services};

/// How [`Bridge::start`] serves.
#[derive(Debug, Clone)]
pub struct Options {
    /// The address to listen on: loopback unless another is asked for, as anyone who reaches
    /// the port can read every topic and publish on any.
    pub address: String,
    /// The port; 0 picks a free one ([`Bridge::port`] tells which).
    pub port: u16,
    /// The topics' and services' domain.
    pub domain: u32,
    /// Messages the server holds for a client that reads slowly, all its channels together;
    /// past it, the oldest are dropped. No node ever waits for a client.
    pub backlog: usize,
    /// How often the bridge looks for new and gone topics and services.
    pub rediscover: Duration,
    /// The server's time, and the stamps of the messages it sends.
    pub time: TimeSource,
}

/// [`Options::backlog`] unless set: four seconds of a 30 Hz camera, an eighth of a second of a
/// 1 kHz sensor. The server holds each message whole, so more costs memory quickly.
pub const DEFAULT_BACKLOG: usize = 128;

/// Messages the bridge's subscriber to a topic holds while it converts them; past it, the
/// oldest are dropped. Few: each holds a block of the publisher's shared memory.
const TOPIC_QUEUE: usize = 16;

impl Default for Options {
    fn default() -> Self {
        Self {
            address: "127.0.0.1".to_owned(),
            port: 8765,
            domain: 0,
            backlog: DEFAULT_BACKLOG,
            rediscover: Duration::from_secs(1),
            time: TimeSource::Wall,
        }
    }
}

/// Where the bridge's time comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeSource {
    /// The wall clock; the server announces no time of its own (Foxglove shows the receive time).
    Wall,
    /// The simulated time of the run of that name (its `--name`, or run id), once it runs:
    /// the server announces it as it moves, and stamps the messages with it.
    SimulatedRun(String),
    /// The simulated time of the run this process runs (`nerve run --sim-time --foxglove`).
    SimulatedOwnRun,
}

/// A running Foxglove server over this host's topics; it stops when dropped.
#[derive(Debug)]
pub struct Bridge {
    port: u16,
    stop: Arc<AtomicBool>,
    commands: Sender<Command>,
    threads: Vec<JoinHandle<()>>,
    /// The thread of [`services::keep_in_step`], joined only if it has ended: it may be waiting
    /// on the network.
    services: Option<JoinHandle<()>>,
    /// Held by the services thread while it updates the server, and by the stop.
    using_server: Arc<Mutex<()>>,
    server: Option<Arc<WebSocketServerHandle>>,
}

impl Bridge {
    /// Starts the server and the threads that serve it.
    ///
    /// # Errors
    /// [`StartError`] when the address cannot be bound or a thread cannot start.
    pub fn start(options: &Options) -> Result<Self, StartError> {
        let context = Context::new();
        let (commands, inbox) = mpsc::channel();
        let mut capabilities = vec![Capability::ClientPublish, Capability::Services];
        if options.time != TimeSource::Wall {
            capabilities.push(Capability::Time);
        }
        let listener = Listener { commands: Mutex::new(commands.clone()) };
        let handle = WebSocketServer::new()
            .name("nerve")
            .bind(&options.address, options.port)
            .context(&context)
            .listener(Arc::new(listener))
            .capabilities(capabilities)
            .supported_encodings(["json", "cdr"])
            .message_backlog_size(options.backlog)
            .parameter_handler(Arc::new(params::Handler))
            .start_blocking()
            .map_err(|source| StartError::Server { address: options.address.clone(), port: options.port, source })?;
        let mut bridge = Self {
            port: handle.port(),
            stop: Arc::default(),
            commands,
            threads: Vec::new(),
            services: None,
            using_server: Arc::default(),
            server: None,
        };
        // Declared after `bridge`, so dropped before it: a failed start stops the server.
        let server = Arc::new(handle);
        bridge.server = Some(Arc::clone(&server));
        let clock = Arc::new(Clock::default());
        let worker = Worker {
            context,
            domain: options.domain,
            clock: Arc::clone(&clock),
            types: Types::default(),
            offered: BTreeMap::new(),
            ids: HashMap::new(),
            outlets: HashMap::new(),
        };
        let rediscover = options.rediscover;
        bridge.spawn("channels", move || worker.run(&inbox, rediscover))?;
        let (stop, server_ref, domain) = (Arc::clone(&bridge.stop), Arc::downgrade(&server), options.domain);
        let using = Arc::clone(&bridge.using_server);
        let listing = std::thread::Builder::new()
            .name("foxglove-services".to_owned())
            .spawn(move || services::keep_in_step(&server_ref, &using, domain, rediscover, &stop))
            .map_err(|source| StartError::Thread { what: "services", source })?;
        bridge.services = Some(listing);
        if options.time != TimeSource::Wall {
            let (stop, server_ref, source) = (Arc::clone(&bridge.stop), Arc::clone(&server), options.time.clone());
            bridge.spawn("time", move || follow_time(&server_ref, &source, &clock, &stop))?;
        }
        Ok(bridge)
    }

    fn spawn(&mut self, what: &'static str, f: impl FnOnce() + Send + 'static) -> Result<(), StartError> {
        let thread = std::thread::Builder::new()
            .name(format!("foxglove-{what}"))
            .spawn(f)
            .map_err(|source| StartError::Thread { what, source })?;
        self.threads.push(thread);
        Ok(())
    }

    /// The port the server listens on.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        {
            // Under the lock, so that no update of the services holds the server past here.
            let _using = lock(&self.using_server);
            self.stop.store(true, Ordering::SeqCst);
        }
        let _ = self.commands.send(Command::Stop);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
        // Left to end on its own (it sees the stop) if a listing still waits on the network;
        // between listings it holds no reference to the server.
        if let Some(services) = self.services.take().filter(JoinHandle::is_finished) {
            let _ = services.join();
        }
        // The threads held the only other references.
        if let Some(server) = self.server.take().and_then(|s| Arc::try_unwrap(s).ok()) {
            server.stop().wait_blocking();
        }
    }
}

/// What a client asked for, handed from the server's callbacks to the bridge's thread.
enum Command {
    Subscribe(ChannelId),
    Unsubscribe(ChannelId),
    Advertise(Client, ClientChannel),
    Unadvertise(ClientId, ClientChannelId),
    Publish(Client, ClientChannelId, Vec<u8>),
    Stop,
}

/// The server's callbacks.
struct Listener {
    commands: Mutex<Sender<Command>>,
}

impl Listener {
    fn send(&self, command: Command) {
        // Only fails once the bridge is stopping: nothing is left to do then.
        let _ = lock(&self.commands).send(command);
    }
}

impl ServerListener for Listener {
    fn on_subscribe(&self, _client: Client, channel: ChannelView) {
        self.send(Command::Subscribe(channel.id()));
    }

    fn on_unsubscribe(&self, _client: Client, channel: ChannelView) {
        self.send(Command::Unsubscribe(channel.id()));
    }

    fn on_client_advertise(&self, client: Client, channel: &ClientChannel) {
        self.send(Command::Advertise(client, channel.clone()));
    }

    fn on_client_unadvertise(&self, client: Client, channel: &ClientChannel) {
        self.send(Command::Unadvertise(client.id(), channel.id));
    }

    fn on_message_data(&self, client: Client, channel: &ClientChannel, payload: &[u8]) {
        self.send(Command::Publish(client, channel.id, payload.to_vec()));
    }
}

/// The bridge's time: the wall clock, or a run's simulated clock once found.
#[derive(Debug, Default)]
struct Clock {
    simulated: OnceLock<Arc<SimClock>>,
}

impl Clock {
    fn now_ns(&self) -> u64 {
        match self.simulated.get() {
            Some(clock) => clock.now_ns(),
            None => wall_ns(),
        }
    }
}

fn wall_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// How long the time thread waits at most before it looks at the stop flag again.
const TIME_WAIT: Duration = Duration::from_millis(200);

/// Announces the simulated time of `source` to every client each time it is set, until `stop`.
fn follow_time(server: &WebSocketServerHandle, source: &TimeSource, clock: &Clock, stop: &AtomicBool) {
    let mut last = None;
    while !stop.load(Ordering::SeqCst) {
        let Some(simulated) = clock.simulated.get().cloned().or_else(|| find_clock(source, clock)) else {
            // The run has not started yet (or keeps no simulated time): look again shortly.
            std::thread::sleep(TIME_WAIT);
            continue;
        };
        // Woken by every set of the clock, not by a timer.
        let now = simulated.wait_until(Some(Instant::now() + TIME_WAIT), || {
            let now = simulated.now_ns();
            (Some(now) != last).then_some(now)
        });
        if let Some(now) = now {
            server.broadcast_time(now);
            last = Some(now);
        }
    }
}

/// The simulated clock of the run `source` names, when it runs and keeps one.
fn find_clock(source: &TimeSource, clock: &Clock) -> Option<Arc<SimClock>> {
    let run = match source {
        TimeSource::Wall => return None,
        TimeSource::SimulatedRun(name) => nerve_runtime::inspect::find(name).ok()?,
        TimeSource::SimulatedOwnRun => {
            nerve_runtime::inspect::running().into_iter().find(|r| r.pid == std::process::id())?
        }
    };
    let names = nerve_shm::names::RunNames::new(&run.run_id);
    let simulated = Arc::new(SimClock::open(&names.clock()).ok()?);
    tracing::info!(run = %run.run_id, "Foxglove follows the run's simulated time");
    Some(Arc::clone(clock.simulated.get_or_init(|| simulated)))
}

/// A channel offered to clients.
struct Offered {
    encoding: Encoding,
    channel: Arc<RawChannel>,
    /// Clients subscribed to it.
    subscribers: usize,
    /// The topic's messages flowing into the channel, while a client subscribes.
    flow: Option<Callbacks>,
}

/// A client's channel, published on a nerve topic.
struct Outlet {
    publisher: Publisher,
    decode: Decode,
}

/// How a client's messages become nerve values.
enum Decode {
    Json,
    Cdr(Codec),
}

/// The bridge's thread: channels, subscriptions, client publishers.
struct Worker {
    context: Arc<Context>,
    domain: u32,
    clock: Arc<Clock>,
    types: Types,
    offered: BTreeMap<String, Offered>,
    ids: HashMap<ChannelId, String>,
    outlets: HashMap<(ClientId, ClientChannelId), Outlet>,
}

impl Worker {
    fn run(mut self, inbox: &Receiver<Command>, rediscover: Duration) {
        let mut next = Instant::now();
        loop {
            if Instant::now() >= next {
                self.rediscover();
                next = Instant::now() + rediscover;
            }
            match inbox.recv_timeout(next.saturating_duration_since(Instant::now())) {
                Ok(Command::Stop) | Err(RecvTimeoutError::Disconnected) => break,
                Ok(command) => self.handle(command),
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
        for offered in self.offered.values() {
            offered.channel.close();
        }
    }

    fn handle(&mut self, command: Command) {
        match command {
            Command::Subscribe(id) => self.subscribe(id),
            Command::Unsubscribe(id) => {
                if let Some(offered) = self.ids.get(&id).and_then(|key| self.offered.get_mut(key)) {
                    offered.subscribers = offered.subscribers.saturating_sub(1);
                    if offered.subscribers == 0 {
                        // Dropping the callbacks ends the subscription: nothing flows unasked.
                        offered.flow = None;
                    }
                }
            }
            Command::Advertise(client, channel) => match self.outlet(&channel) {
                Ok(outlet) => {
                    self.outlets.insert((client.id(), channel.id), outlet);
                }
                Err(why) => client.send_status(Status::error(format!("cannot publish on `{}`: {why}", channel.topic))),
            },
            Command::Unadvertise(client, id) => {
                self.outlets.remove(&(client, id));
            }
            Command::Publish(client, id, payload) => {
                let Some(outlet) = self.outlets.get(&(client.id(), id)) else { return };
                if let Err(why) = outlet.publish(&payload) {
                    let topic = outlet.publisher.topic().to_owned();
                    client.send_status(Status::warning(format!("a message for `{topic}` was dropped: {why}")));
                }
            }
            Command::Stop => {}
        }
    }

    /// Advertises the topics found now and withdraws those gone.
    fn rediscover(&mut self) {
        self.types.update(&nerve_runtime::inspect::running());
        let found: BTreeMap<String, Encoding> =
            channels::published(self.domain).into_iter().map(|key| (key.clone(), self.types.encoding(&key))).collect();
        let current: BTreeMap<String, Encoding> =
            self.offered.iter().map(|(k, o)| (k.clone(), o.encoding.clone())).collect();
        let (withdraw, advertise) = channels::changes(&current, &found);
        for key in withdraw {
            if let Some(offered) = self.offered.remove(&key) {
                self.ids.remove(&offered.channel.id());
                offered.channel.close();
            }
        }
        for key in advertise {
            let Some(encoding) = found.get(&key) else { continue };
            match self.channel(&key, encoding) {
                Ok(channel) => {
                    self.ids.insert(channel.id(), key.clone());
                    let offered = Offered { encoding: encoding.clone(), channel, subscribers: 0, flow: None };
                    self.offered.insert(key, offered);
                }
                Err(e) => tracing::warn!(topic = %key, "cannot offer the topic to Foxglove: {e}"),
            }
        }
    }

    /// The Foxglove channel of topic `key`.
    fn channel(&self, key: &str, encoding: &Encoding) -> Result<Arc<RawChannel>, ChannelError> {
        let builder = self.context.channel_builder(key);
        let builder = match encoding {
            Encoding::Cdr { name, registry } => {
                let definition = nerve_types::ros2msg(registry, name)?;
                builder.message_encoding("cdr").schema(Schema::new(
                    name.to_string(),
                    "ros2msg",
                    definition.into_bytes(),
                ))
            }
            Encoding::FrameTransforms => {
                builder.message_encoding(FrameTransforms::get_message_encoding()).schema(FrameTransforms::get_schema())
            }
            Encoding::Json => builder.message_encoding("json").schema(Schema::new(
                json::MESSAGE_SCHEMA_NAME,
                "jsonschema",
                json::MESSAGE_SCHEMA.as_bytes(),
            )),
        };
        Ok(builder.build_raw()?)
    }

    fn subscribe(&mut self, id: ChannelId) {
        let Some(key) = self.ids.get(&id) else { return };
        let Some(offered) = self.offered.get_mut(key) else { return };
        offered.subscribers += 1;
        if offered.flow.is_some() {
            return;
        }
        let (topic, run) = channels::scope_of(key);
        let scope = channels::reach(self.domain, key);
        let options =
            SubscriberOptions { domain: self.domain, scope, queue_size: TOPIC_QUEUE, run, ..Default::default() };
        let encoder = match &offered.encoding {
            Encoding::Cdr { name, registry } => match Codec::new(registry, name) {
                Ok(codec) => Encoder::Cdr(codec),
                Err(e) => {
                    tracing::warn!(topic = %key, "cannot encode the topic as CDR: {e}");
                    return;
                }
            },
            Encoding::FrameTransforms => Encoder::FrameTransforms,
            Encoding::Json => Encoder::Json,
        };
        let (channel, clock) = (Arc::clone(&offered.channel), Arc::clone(&self.clock));
        let flow = Subscriber::new(&topic, options)
            .and_then(|s| s.on_message(CallbackMode::Serial, move |m| forward(&channel, &encoder, &clock, &m)));
        match flow {
            Ok(flow) => offered.flow = Some(flow),
            Err(e) => tracing::warn!(topic = %key, "cannot subscribe for Foxglove: {e}"),
        }
    }

    /// A publisher for a client's channel: JSON values, or CDR of the ROS 2 type the client
    /// names (defined by the `ros2msg` schema it sends, else by the types this host knows).
    fn outlet(&self, channel: &ClientChannel) -> Result<Outlet, PublishError> {
        let decode = match channel.encoding.as_str() {
            "json" => Decode::Json,
            "cdr" => {
                let name = TypeName::parse(&channel.schema_name)
                    .map_err(|source| PublishError::TypeName { schema: channel.schema_name.clone(), source })?;
                let registry = match (&channel.schema_encoding, &channel.schema) {
                    (Some(encoding), Some(text)) if encoding == "ros2msg" => {
                        nerve_types::registry_of(&name, &String::from_utf8_lossy(text))?
                    }
                    _ => Registry::new(&[]),
                };
                Decode::Cdr(Codec::new(&registry, &name)?)
            }
            other => return Err(PublishError::Encoding { encoding: other.to_owned() }),
        };
        let (topic, run) = channels::scope_of(&channel.topic);
        let publisher = Publisher::new(&topic, PublisherOptions { domain: self.domain, run, ..Default::default() })?;
        Ok(Outlet { publisher, decode })
    }
}

impl Outlet {
    fn publish(&self, payload: &[u8]) -> Result<(), PublishError> {
        let (value, parameters) = match &self.decode {
            Decode::Json => json::parse(payload)?,
            Decode::Cdr(codec) => (codec.decode(payload)?, nerve_topic::Parameters::new()),
        };
        Ok(self.publisher.send(&value, &parameters)?)
    }
}

/// How a topic's messages become a channel's.
enum Encoder {
    /// A CDR message per row of the value.
    Cdr(Codec),
    /// A `foxglove.FrameTransforms` per message of transforms.
    FrameTransforms,
    /// A JSON object per message.
    Json,
}

/// Sends one nerve message on its channel.
fn forward(channel: &RawChannel, encoder: &Encoder, clock: &Clock, message: &Message) {
    let stamp = PartialMetadata::with_log_time(clock.now_ns());
    match encoder {
        Encoder::Json => channel.log_with_meta(&json::message(message), stamp),
        Encoder::Cdr(codec) => {
            for row in 0..message.data.len() {
                match codec.encode(message.data.as_ref(), row) {
                    Ok(bytes) => channel.log_with_meta(&bytes, stamp),
                    // The node checks its typed outputs, so this is a topic of another sender.
                    Err(e) => tracing::warn!(topic = channel.topic(), "message not sent to Foxglove: {e}"),
                }
            }
        }
        Encoder::FrameTransforms => match nerve_tf::wire::decode(&message.data) {
            Ok(transforms) => {
                let mut bytes = Vec::new();
                match frame_transforms(&transforms).encode(&mut bytes) {
                    Ok(()) => channel.log_with_meta(&bytes, stamp),
                    Err(e) => tracing::warn!(topic = channel.topic(), "transforms not sent to Foxglove: {e}"),
                }
            }
            // Someone else's message on a transform topic: the tree's own listeners skip it too.
            Err(e) => tracing::warn!(topic = channel.topic(), "not transforms, not sent to Foxglove: {e}"),
        },
    }
}

/// nerve's transforms as Foxglove's.
fn frame_transforms(transforms: &[StampedTransform]) -> FrameTransforms {
    let transforms = transforms
        .iter()
        .map(|t| {
            let [x, y, z] = t.transform.translation;
            let rotation = t.transform.rotation;
            FrameTransform {
                timestamp: Some(timestamp(t.stamp_ns)),
                parent_frame_id: t.parent.clone(),
                child_frame_id: t.child.clone(),
                translation: Some(Vector3 { x, y, z }),
                rotation: Some(Quaternion { x: rotation[0], y: rotation[1], z: rotation[2], w: rotation[3] }),
            }
        })
        .collect();
    FrameTransforms { transforms }
}

/// A stamp in nanoseconds as Foxglove's seconds and nanoseconds (a stamp before the epoch, or
/// past 2106, at the nearest end).
fn timestamp(ns: i64) -> Timestamp {
    let ns = u64::try_from(ns).unwrap_or(0);
    let sec = u32::try_from(ns / 1_000_000_000).unwrap_or(u32::MAX);
    // Below 10^9: fits.
    let nsec = u32::try_from(ns % 1_000_000_000).unwrap_or(0);
    Timestamp::new(sec, nsec)
}

#[cfg(test)]
mod tests {
    use nerve_tf::Transform;

    use super::*;

    #[test]
    fn transforms_keep_frames_stamps_and_poses() {
        let moving = StampedTransform {
            parent: "world".into(),
            child: "base".into(),
            stamp_ns: 3_000_000_007,
            transform: Transform { translation: [1.0, 2.0, 3.0], rotation: [0.0, 0.0, 0.6, 0.8] },
        };
        let ours = frame_transforms(&[moving]);
        let [t] = &ours.transforms[..] else { panic!("{ours:?}") };
        assert_eq!((t.parent_frame_id.as_str(), t.child_frame_id.as_str()), ("world", "base"));
        assert_eq!(t.timestamp, Some(Timestamp::new(3, 7)));
        assert_eq!(t.translation, Some(Vector3 { x: 1.0, y: 2.0, z: 3.0 }));
        assert_eq!(t.rotation, Some(Quaternion { x: 0.0, y: 0.0, z: 0.6, w: 0.8 }));
        assert_eq!(timestamp(-5), Timestamp::new(0, 0));
    }
}

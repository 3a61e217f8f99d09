//! nerve's services as Foxglove services: every service with a server is advertised under its
//! key (`math/add`, `~demo/plan` for a run's own), and a call from a client is a nerve call.
//!
//! Requests and replies are JSON ([`crate::json`]): a request is `{"value": …, "parameters":
//! {…}, "type": …}` or the values alone; the reply is `{"timestamp", "parameters", "value"}`,
//! as a message of a JSON channel.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Weak};
use std::time::{Duration, Instant};

use foxglove::websocket::service::{Handler, Request, Responder, Service, ServiceSchema};
use foxglove::{Schema, WebSocketServerHandle};
use nerve_shm::sync::lock;
use nerve_topic::Message;
use nerve_topic::service::{Client, ServiceOptions};

use crate::error::CallError;
use crate::{channels, json};

/// How long a call waits for the reply.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// The JSON schema of a request, which Foxglove's Service Call panel shows (the reply is a
/// [`json::MESSAGE_SCHEMA`]).
const REQUEST_SCHEMA: &str = r#"{"type":"object","properties":{"value":{},"parameters":{"type":"object"},"type":{"type":"string"}},"required":["value"]}"#;

/// Keeps the server's services those that have a server now, looking every `period`, until
/// `stop` or until the server is gone.
///
/// The thread holds the server only between two listings: a listing can wait on the network
/// for as long as another process of the host takes to open its own session, and the bridge
/// does not wait for that to stop the server.
pub fn keep_in_step(
    server: &Weak<WebSocketServerHandle>,
    using: &Mutex<()>,
    domain: u32,
    period: Duration,
    stop: &AtomicBool,
) {
    // One network session for as long as the bridge runs: each listing would otherwise open and
    // close one, and an opening waits its turn among every process of the host.
    let _session = nerve_topic::session::network()
        .inspect_err(|e| tracing::warn!("no network session, so no services for Foxglove: {e}"));
    let mut advertised = BTreeSet::new();
    while !stop.load(Ordering::SeqCst) {
        let started = Instant::now();
        let listed = nerve_topic::service::list(domain);
        // The bridge stops under this lock: once it has, no update holds the server any more.
        let _using = lock(using);
        let Some(server) = server.upgrade().filter(|_| !stop.load(Ordering::SeqCst)) else { return };
        match listed {
            Ok(servers) => {
                let found: BTreeSet<String> = servers.into_iter().map(|(_, key)| key).collect();
                let gone: Vec<&String> = advertised.difference(&found).collect();
                if !gone.is_empty() {
                    server.remove_services(gone);
                }
                let new = found.difference(&advertised).map(|key| service(key, domain));
                if let Err(e) = server.add_services(new) {
                    tracing::warn!("cannot advertise services to Foxglove: {e}");
                }
                advertised = found;
            }
            Err(e) => tracing::warn!("cannot list the services: {e}"),
        }
        drop((server, _using));
        // In short steps, so a stop is seen at once.
        while !stop.load(Ordering::SeqCst) && started.elapsed() < period {
            std::thread::sleep(period.saturating_sub(started.elapsed()).min(Duration::from_millis(100)));
        }
    }
}

/// The Foxglove service of the nerve service `key`.
fn service(key: &str, domain: u32) -> Service {
    let schema = ServiceSchema::new("nerve.Values")
        .with_request("json", Schema::new("nerve.Request", "jsonschema", REQUEST_SCHEMA.as_bytes()))
        .with_response("json", Schema::new(json::MESSAGE_SCHEMA_NAME, "jsonschema", json::MESSAGE_SCHEMA.as_bytes()));
    Service::builder(key, schema).handler(Caller { key: key.to_owned(), domain })
}

/// Calls a nerve service for a client.
struct Caller {
    key: String,
    domain: u32,
}

impl Handler for Caller {
    fn call(&self, request: Request, responder: Responder) {
        let (key, domain) = (self.key.clone(), self.domain);
        // A call waits for its reply: on a thread of its own, not the server's runtime.
        let spawned = std::thread::Builder::new()
            .name("foxglove-call".into())
            .spawn(move || responder.respond(call(&key, domain, request.payload())));
        if let Err(e) = spawned {
            tracing::warn!(service = %self.key, "cannot start a call: {e}");
        }
    }
}

/// One call of service `key` with a JSON request; the JSON reply, or why not.
fn call(key: &str, domain: u32, payload: &[u8]) -> Result<Vec<u8>, CallError> {
    let (request, parameters) = json::parse(payload)?;
    let (name, run) = channels::scope_of(key);
    let client = Client::new(&name, ServiceOptions { domain, run, ..Default::default() })?;
    // A new client hears of the servers a moment after it starts.
    if !client.wait_for_server(CALL_TIMEOUT) {
        return Err(CallError::NoServer { service: key.to_owned(), seconds: CALL_TIMEOUT.as_secs() });
    }
    let reply = client.call(&request.to_data(), &parameters, CALL_TIMEOUT)?;
    Ok(json::message(&Message::new(name.as_str().into(), reply.metadata, reply.data)))
}

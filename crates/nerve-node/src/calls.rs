//! A node that declares the services and actions it calls (`services: {call: [...]}`,
//! `actions: {call: [...]}`) starts once each has a server, so its first call does not fail
//! with "no server" because the node serving it has not got that far yet.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use nerve_message::channel_table::{Called, CalledKind};
use nerve_shm::sync::lock;
use nerve_topic::action::ActionClient;
use nerve_topic::service::{Client, ServiceOptions};

use crate::error::NodeError;
use crate::shared::Shared;

/// How long a node waits for its servers when the runtime does not say.
const DEFAULT_WAIT: Duration = Duration::from_secs(60);

/// How long one wait for a server goes without looking at the runtime's news (a stop, a
/// serving node that ended); a server that appears ends it at once.
const NEWS_CHECK: Duration = Duration::from_millis(100);

/// Waits until every service and action of the node's `calls` has a server (domain 0, as
/// topics of dataflows), or the run stops.
///
/// # Errors
/// [`NodeError::ServerEnded`] when every node declared to serve one ended before it served;
/// [`NodeError::NoServer`] when one has no server within the run's ready timeout.
pub(crate) fn wait_for_servers(shared: &Shared) -> Result<(), NodeError> {
    let table = &shared.table;
    let waited = table.server_wait_ms.map_or(DEFAULT_WAIT, Duration::from_millis);
    let deadline = Instant::now() + waited;
    for called in &table.calls {
        let server = Server::watch(shared, called)?;
        tracing::debug!(node = %table.node_id, kind = %called.kind, name = %called.name, "waiting for a server");
        loop {
            let chunk = deadline.saturating_duration_since(Instant::now()).min(NEWS_CHECK);
            if server.wait(chunk) {
                break;
            }
            if shared.stop.load(Ordering::Acquire) {
                return Ok(());
            }
            if let Some((server, outcome)) = all_ended(shared, called) {
                return Err(NodeError::ServerEnded {
                    node: table.node_id.clone(),
                    kind: called.kind.to_string(),
                    name: called.name.clone(),
                    server,
                    outcome,
                });
            }
            if Instant::now() >= deadline {
                return Err(NodeError::NoServer {
                    node: table.node_id.clone(),
                    kind: called.kind.to_string(),
                    name: called.name.clone(),
                    waited,
                    hint: hint(called),
                });
            }
        }
    }
    Ok(())
}

/// A client that only watches for servers.
enum Server {
    Service(Client),
    Action(ActionClient),
}

impl Server {
    fn watch(shared: &Shared, called: &Called) -> Result<Self, NodeError> {
        let options = ServiceOptions { run: shared.run_scope(&called.name), ..ServiceOptions::default() };
        Ok(match called.kind {
            CalledKind::Service => Self::Service(Client::new(&called.name, options)?),
            CalledKind::Action => Self::Action(ActionClient::new(&called.name, options)?),
        })
    }

    fn wait(&self, timeout: Duration) -> bool {
        match self {
            Self::Service(c) => c.wait_for_server(timeout),
            Self::Action(c) => c.wait_for_server(timeout),
        }
    }
}

/// The last of the nodes declared to serve `called` and how it ended, once all have ended.
fn all_ended(shared: &Shared, called: &Called) -> Option<(String, String)> {
    let ended = lock(&shared.ended_servers);
    let mut last = None;
    for node in &called.served_by {
        last = Some((node.clone(), ended.get(node)?.clone()));
    }
    last
}

fn hint(called: &Called) -> String {
    if called.served_by.is_empty() {
        format!(
            "no node of the dataflow declares serving it (`{}s: {{serve: [{}]}}`): is the process that serves it \
             running, in domain 0?",
            called.kind, called.name
        )
    } else {
        let nodes: Vec<String> = called.served_by.iter().map(|n| format!("`{n}`")).collect();
        format!(
            "node(s) {} declare serving it: does it create its server, under that name, in domain 0? (a node that \
             waits for a server in turn, before serving, never gets there)",
            nodes.join(", ")
        )
    }
}

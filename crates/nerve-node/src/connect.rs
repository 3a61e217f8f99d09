//! Registration with the runtime and mapping of the node's channels.

use std::collections::HashMap;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::Arc;

use nerve_message::channel_table::InboxSpec;
use nerve_message::node_to_runtime::NodeRequest;
use nerve_message::runtime_to_node::RuntimeMessage;
use nerve_message::{ChannelTable, NERVE_VERSION, frame, versions_compatible};
use nerve_shm::inbox::Inbox;

use crate::error::NodeError;

/// A registered connection: the socket, the table, and whether start already came.
pub(crate) struct Registration {
    pub stream: UnixStream,
    pub table: ChannelTable,
}

/// Connects to the runtime at `socket` and registers `node_id`.
pub(crate) fn register(socket: &Path, node_id: &str) -> Result<Registration, NodeError> {
    let mut stream =
        UnixStream::connect(socket).map_err(|source| NodeError::Connect { path: socket.to_owned(), source })?;
    frame::write(
        &mut stream,
        &NodeRequest::Register {
            node_id: node_id.to_owned(),
            nerve_version: NERVE_VERSION.to_owned(),
            pid: std::process::id(),
        },
    )?;
    // Unbuffered: what the runtime sends right after (inputs already closed, servers already
    // ended) must stay in the socket for the node's own reader, not in a dropped buffer.
    match frame::read(&mut stream)? {
        RuntimeMessage::Registered(table) => {
            if !versions_compatible(NERVE_VERSION, &table.nerve_version) {
                return Err(NodeError::VersionMismatch {
                    node: NERVE_VERSION.to_owned(),
                    runtime: table.nerve_version.clone(),
                });
            }
            Ok(Registration { stream, table: *table })
        }
        RuntimeMessage::Refused { reason } => Err(NodeError::Refused { node: node_id.to_owned(), reason }),
        other => Err(NodeError::Protocol(format!("expected registration reply, got {other:?}"))),
    }
}

/// Finds the running dataflow that declares `node_id` as a dynamic node.
pub(crate) fn register_dynamic(node_id: &str) -> Result<Registration, NodeError> {
    let mut details = String::new();
    for socket in nerve_message::run_sockets() {
        match register(&socket, node_id) {
            Ok(r) => return Ok(r),
            Err(NodeError::Connect { .. }) => {} // a dataflow that already ended
            Err(e) => details.push_str(&format!("\n  {}: {e}", socket.display())),
        }
    }
    if details.is_empty() {
        details =
            format!(" (no dataflow is running; sockets are looked for in {})", nerve_message::runtime_dir().display());
    }
    Err(NodeError::NoDataflow { node: node_id.to_owned(), details })
}

/// Maps every inbox the table names, by node index.
pub(crate) fn map_inboxes(
    names: &nerve_shm::names::RunNames,
    inboxes: &[InboxSpec],
) -> Result<HashMap<usize, Arc<Inbox>>, NodeError> {
    let mut mapped = HashMap::new();
    for spec in inboxes {
        let inbox = Inbox::open(&names.inbox(spec.node), &spec.queues)?;
        mapped.insert(spec.node, Arc::new(inbox));
    }
    Ok(mapped)
}

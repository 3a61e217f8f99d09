//! nerve's wire protocols, one module per direction: every message one process sends another,
//! in one place. Data never travels in any of them: messages move through shared memory, and
//! these only set up, tear down, and report.
//!
//! | between | one way | the other way | carried by |
//! |---|---|---|---|
//! | a node and the runtime of its run | [`node_to_runtime`] | [`runtime_to_node`] | [`frame`]s on the run's Unix socket |
//! | a tool and a run (`nerve list`, `nerve param`, `nerve node add`) | [`node_to_runtime`] | [`runtime_to_node`] | the same socket, one request per connection |
//! | a tool and the cluster's coordinator | [`tool_to_coordinator`] | [`coordinator_to_tool`] | Zenoh queries (`nerve_cluster::protocol`) |
//! | the coordinator and a machine's daemon | [`coordinator_to_daemon`] | [`daemon_to_coordinator`] | Zenoh queries (`nerve_cluster::protocol`) |
//! | a topic subscriber and a publisher of another process | [`subscriber_to_publisher`] | [`publisher_to_subscriber`] | `SOCK_SEQPACKET`, descriptors attached (`nerve_topic::wire`) |
//!
//! Shared by several directions: [`channel_table`] (a node's queues and pools),
//! [`run_status`] (how a run is doing) and [`param`] (parameter requests and answers). A
//! cluster answer is a `Result` as JSON, `{"Ok": …}` or `{"Err": "why"}`, the text meant for
//! the user.
//!
//! On the node's side: it registers, receives its [`ChannelTable`] (which shared-memory queues
//! and pools are its own), reports ready, and waits for the start signal; afterwards the runtime
//! only sends stop and input-closed notices, and forwards tools' [parameter](param) requests.
//!
//! ```
//! use nerve_message::{frame, node_to_runtime::NodeRequest};
//! let mut wire = Vec::new();
//! frame::write(&mut wire, &NodeRequest::Ready)?;
//! let back: NodeRequest = frame::read(&mut wire.as_slice())?;
//! assert_eq!(back, NodeRequest::Ready);
//! # Ok::<(), nerve_message::frame::FrameError>(())
//! ```

pub mod channel_table;
pub mod coordinator_to_daemon;
pub mod coordinator_to_tool;
pub mod daemon_to_coordinator;
pub mod frame;
pub mod graph_edit;
pub mod log_record;
pub mod node_to_runtime;
pub mod param;
pub mod publisher_to_subscriber;
pub mod run_status;
pub mod runtime_to_node;
pub mod subscriber_to_publisher;
pub mod tool_to_coordinator;

pub use channel_table::ChannelTable;

/// Version of nerve this crate belongs to; node library and runtime must agree on it.
pub const NERVE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Whether a node library of version `node` may talk to a runtime of version `runtime`:
/// same major version, and same minor while the major is 0 (semver).
#[must_use]
pub fn versions_compatible(node: &str, runtime: &str) -> bool {
    fn major_minor(v: &str) -> Option<(u64, u64)> {
        let mut it = v.split('.');
        Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
    }
    match (major_minor(node), major_minor(runtime)) {
        (Some((0, a)), Some((0, b))) => a == b,
        (Some((a, _)), Some((b, _))) => a == b,
        _ => false,
    }
}

/// Environment variables the runtime sets for every node it spawns.
pub mod env {
    /// Path of the runtime's Unix socket. The variable keeps the name it had when the runtime
    /// was called the daemon: nodes and their scripts look for it to tell whether nerve
    /// started them.
    pub const SOCKET: &str = "NERVE_DAEMON_SOCKET";
    /// The node's id in the dataflow.
    pub const NODE_ID: &str = "NERVE_NODE_ID";
    /// The run's id.
    pub const RUN_ID: &str = "NERVE_RUN_ID";
    /// The run's name as the scope of its topics, services and actions: its `--name`, else its
    /// run id (a cluster's dataflow id on every machine). Endpoints the process creates belong
    /// to that run unless shared.
    pub const RUN: &str = "NERVE_RUN";
    /// The names the run shares (the dataflow's `share:`), separated by `,` (which names
    /// cannot hold).
    pub const SHARE: &str = "NERVE_SHARE";
    /// Set (to `1`) when the runtime reads the node's log records from its standard error
    /// ([`crate::log_record`]).
    pub const LOG_RECORDS: &str = "NERVE_LOG_RECORDS";
    /// The node's `min_log_level`, when the dataflow sets one: a language's own logging need
    /// not make the records the runtime would drop.
    pub const MIN_LOG_LEVEL: &str = "NERVE_MIN_LOG_LEVEL";
}

/// The control socket of run `run_id`, in [`runtime_dir`].
#[must_use]
pub fn run_socket(run_id: &str) -> std::path::PathBuf {
    runtime_dir().join(format!("{run_id}.sock"))
}

/// The control sockets of the runs in [`runtime_dir`], oldest run first (run ids sort by time).
/// Some may belong to runs that are ending: a connection tells.
#[must_use]
pub fn run_sockets() -> Vec<std::path::PathBuf> {
    let mut sockets: Vec<std::path::PathBuf> = std::fs::read_dir(runtime_dir())
        .map(|entries| {
            entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "sock")).collect()
        })
        .unwrap_or_default();
    sockets.sort();
    sockets
}

/// Per-user directory holding the sockets of running dataflows (mode 0700).
///
/// `$XDG_RUNTIME_DIR/nerve` when that is set, else `/tmp/nerve-<uid>`.
#[must_use]
pub fn runtime_dir() -> std::path::PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(d) if !d.is_empty() => std::path::Path::new(&d).join("nerve"),
        _ => std::path::PathBuf::from(format!("/tmp/nerve-{}", current_uid())),
    }
}

/// Creates `dir` and its missing parents, private to the user (mode 0700 on `dir` even if it
/// existed with wider access): the runtime's sockets and the topic registry live in such folders.
///
/// # Errors
/// When it cannot be created or its mode set.
pub fn private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

fn current_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    // The uid owning /proc/self is the process's uid, without an unsafe libc call.
    std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::versions_compatible;

    #[test]
    fn version_rules() {
        assert!(versions_compatible("0.1.0", "0.1.7"));
        assert!(!versions_compatible("0.1.0", "0.2.0"));
        assert!(versions_compatible("1.2.0", "1.9.1"));
        assert!(!versions_compatible("1.2.0", "2.0.0"));
        assert!(!versions_compatible("garbage", "0.1.0"));
    }
}

//! The Zenoh key expressions of the cluster.
//!
//! ```text
//! nerve/cluster/coordinator                    the coordinator's requests (queryable)
//! nerve/cluster/daemon/<machine>               a daemon's requests (queryable)
//! nerve/cluster/alive/coordinator              liveliness: the coordinator is up
//! nerve/cluster/alive/daemon/<machine>         liveliness: the machine's daemon is up
//! nerve/cluster/alive/in/<uuid>/<machine>      liveliness: the machine receives its inputs of dataflow <uuid>
//! nerve/cluster/data/<uuid>/<node>/<output>    an output's messages, sent once to every machine that reads it
//! nerve/cluster/log/<uuid>/<node>              a node's output lines, for whoever follows the dataflow
//! ```
//!
//! Node, output and machine ids use letters, digits, `_`, `.` and `-` only, so each is one
//! chunk of a key.

/// The coordinator's requests.
pub const COORDINATOR: &str = "nerve/cluster/coordinator";

/// The coordinator's liveliness token.
pub const ALIVE_COORDINATOR: &str = "nerve/cluster/alive/coordinator";

/// Every daemon's liveliness token.
pub const ALIVE_DAEMONS: &str = "nerve/cluster/alive/daemon/*";

/// The requests of `machine`'s daemon.
#[must_use]
pub fn daemon(machine: &str) -> String {
    format!("nerve/cluster/daemon/{machine}")
}

/// The liveliness token of `machine`'s daemon.
#[must_use]
pub fn alive_daemon(machine: &str) -> String {
    format!("nerve/cluster/alive/daemon/{machine}")
}

/// The machine a daemon's liveliness key names.
#[must_use]
pub fn machine_of_alive(key: &str) -> Option<&str> {
    key.strip_prefix("nerve/cluster/alive/daemon/")
}

/// The token `machine` declares once it receives its inputs of dataflow `uuid`.
#[must_use]
pub fn inbound(uuid: &str, machine: &str) -> String {
    format!("nerve/cluster/alive/in/{uuid}/{machine}")
}

/// The messages of `node`'s `output` in dataflow `uuid`.
#[must_use]
pub fn data(uuid: &str, node: &str, output: &str) -> String {
    format!("nerve/cluster/data/{uuid}/{node}/{output}")
}

/// The output lines of `node` in dataflow `uuid` (`*` for every node).
#[must_use]
pub fn log(uuid: &str, node: &str) -> String {
    format!("nerve/cluster/log/{uuid}/{node}")
}

/// The node a log key names.
#[must_use]
pub fn node_of_log(key: &str) -> Option<&str> {
    key.rsplit('/').next()
}

//! Errors of the cluster: its network, its coordinator and its daemons.

/// What went wrong reaching, asking or running the cluster.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// An address or endpoint nerve cannot use.
    #[error("invalid address `{address}`: {why}")]
    BadAddress {
        /// As given.
        address: String,
        /// What is wrong with it.
        why: String,
    },
    /// A machine id that cannot name a daemon.
    #[error("invalid machine id `{id}`: {why}")]
    BadMachineId {
        /// As given.
        id: String,
        /// What is wrong with it.
        why: String,
    },
    /// The Zenoh session could not be configured or opened.
    #[error("network: {0}")]
    Network(String),
    /// Nothing answered at the coordinator's address.
    #[error(
        "no coordinator answers at {endpoint}: start one with `nerve up` (this machine) or `nerve coordinator`, \
         or name it with --coordinator"
    )]
    NoCoordinator {
        /// Where it was looked for.
        endpoint: String,
    },
    /// A daemon with this machine id is already connected.
    #[error("a daemon for machine `{machine}` is already connected to the cluster (pid {pid} on host {host})")]
    DuplicateMachine {
        /// Machine id.
        machine: String,
        /// The other daemon's process id.
        pid: u32,
        /// The other daemon's host.
        host: String,
    },
    /// A peer answered with something this version cannot read.
    #[error("unexpected answer from {from}: {why}")]
    Protocol {
        /// Who answered.
        from: String,
        /// What could not be read.
        why: String,
    },
    /// A peer refused or failed a request; the text is its reason.
    #[error("{0}")]
    Refused(String),
    /// A thread could not be started.
    #[error("cannot start a thread: {0}")]
    Thread(#[source] std::io::Error),
    /// The local runtime failed.
    #[error(transparent)]
    Runtime(#[from] nerve_runtime::RuntimeError),
}

impl From<zenoh::Error> for ClusterError {
    fn from(e: zenoh::Error) -> Self {
        Self::Network(e.to_string())
    }
}

//! The cluster's Zenoh sessions: who listens where, who connects to whom. Each is its
//! process's one session ([`nerve_topic::session`]), built from the same options as any
//! topic's, TLS included.
//!
//! The coordinator is a Zenoh router; by default it listens on `tcp/127.0.0.1:53290` only, so
//! nothing is reachable from another machine until asked (`--interface`, `--listen`). A
//! daemon is a peer: it connects to the coordinator's endpoint (or finds it by multicast
//! scouting) and listens on the address through which it reaches the coordinator, so the
//! daemons of a dataflow connect to each other directly and data between two machines never
//! goes through a third. Tools (`nerve list`, `nerve start`…) are clients of the coordinator.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs, UdpSocket};
use std::sync::Arc;
use std::time::Duration;

use nerve_topic::TopicError;
use nerve_topic::session::{self, Network, NetworkOptions, SessionMode};
use zenoh::Wait;
use zenoh::config::WhatAmI;

use crate::error::ClusterError;

/// The coordinator's default port (dora's daemon port).
pub const DEFAULT_PORT: u16 = 53290;

/// Environment variable naming the coordinator for the tools, as `--coordinator` does.
pub const COORDINATOR_ENV: &str = "NERVE_COORDINATOR";

/// How long a link stays up without hearing from its peer: a machine that vanishes (power,
/// cable) is declared lost after this long; one whose daemon dies, at once.
const LEASE: Duration = Duration::from_secs(4);

/// Where a process of the cluster meets the others: the coordinator, and the network options
/// every session of nerve is built from (listen endpoints, TLS, a Zenoh file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetOptions {
    /// The coordinator's address (see [`endpoint`]). Without it, a daemon uses the
    /// coordinator of its own machine at the default port if one listens there, and else looks
    /// for one by multicast scouting; tools use `127.0.0.1`.
    pub coordinator: Option<String>,
    /// Listen endpoints (empty: the role's default), extra peers to connect to, TLS and the
    /// Zenoh file; the discovery range does not apply to the cluster's roles, whose links are
    /// set by their role.
    pub network: NetworkOptions,
}

/// What a process is to the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The coordinator: a Zenoh router.
    Coordinator,
    /// A machine's daemon: a Zenoh peer.
    Daemon,
    /// A tool asking the coordinator: a Zenoh client.
    Tool,
}

impl NetOptions {
    fn scheme(&self) -> &'static str {
        self.network.scheme()
    }

    /// The coordinator's endpoint as tools reach it.
    ///
    /// # Errors
    /// An address [`endpoint`] cannot read.
    pub fn coordinator_endpoint(&self) -> Result<String, ClusterError> {
        let given = self.coordinator.clone().or_else(|| std::env::var(COORDINATOR_ENV).ok());
        endpoint(given.as_deref().unwrap_or("127.0.0.1"), self.scheme())
    }

    /// Opens this process's session for `role` (topics, services and actions of the process
    /// share it); returns it and the endpoints it listens on.
    ///
    /// # Errors
    /// A bad address, an unreadable Zenoh config file, or a session Zenoh cannot open (for a
    /// tool: no coordinator at its endpoint).
    pub fn open(&self, role: Role) -> Result<(Arc<Network>, Vec<String>), ClusterError> {
        let config = self.config(role)?;
        let listen = config.get_json("listen/endpoints").ok().and_then(|j| serde_json::from_str(&j).ok());
        let network = nerve_topic::session::open_session(config).map_err(|e| match role {
            Role::Tool => ClusterError::NoCoordinator {
                endpoint: self.coordinator_endpoint().unwrap_or_else(|_| "the coordinator's address".into()),
            },
            Role::Coordinator | Role::Daemon => ClusterError::Network(e.to_string()),
        })?;
        Ok((network, crate::bound::with_bound_ports(listen.unwrap_or_default())))
    }

    /// The Zenoh configuration of `role`.
    ///
    /// # Errors
    /// As [`NetOptions::open`].
    pub fn config(&self, role: Role) -> Result<zenoh::Config, ClusterError> {
        let mode = match role {
            Role::Coordinator => SessionMode::Router,
            Role::Daemon => SessionMode::Peer,
            Role::Tool => SessionMode::Client,
        };
        let mut config = self.network.zenoh_config(mode).map_err(|e| ClusterError::Network(e.to_string()))?;
        let set = |config: &mut zenoh::Config, key: &str, value: serde_json::Value| {
            session::set(config, key, value).map_err(|e| ClusterError::Network(e.to_string()))
        };
        let given = &self.network.listen;
        let (listen, mut connect, scout) = match role {
            Role::Coordinator => {
                let listen = if given.is_empty() {
                    vec![endpoint(&format!("127.0.0.1:{DEFAULT_PORT}"), self.scheme())?]
                } else {
                    given.iter().map(|a| endpoint(a, self.scheme())).collect::<Result<_, _>>()?
                };
                // Daemons elsewhere find a coordinator that listens beyond this machine.
                let reachable = listen.iter().any(|e| !is_loopback(e));
                (listen, Vec::new(), reachable)
            }
            Role::Daemon => {
                let coordinator = match &self.coordinator {
                    Some(address) => endpoint(address, self.scheme())?,
                    None => self.find_coordinator()?,
                };
                let listen = if given.is_empty() {
                    vec![listen_toward(&coordinator)?]
                } else {
                    given.iter().map(|a| endpoint(a, self.scheme())).collect::<Result<_, _>>()?
                };
                (listen, vec![coordinator], false)
            }
            Role::Tool => (Vec::new(), vec![self.coordinator_endpoint()?], false),
        };
        for extra in &self.network.connect {
            connect.push(endpoint(extra, self.scheme())?);
        }
        set(&mut config, "listen/endpoints", listen.into())?;
        set(&mut config, "connect/endpoints", connect.into())?;
        set(&mut config, "scouting/multicast/enabled", scout.into())?;
        if role == Role::Daemon {
            // The daemons of a dataflow connect to each other as soon as the coordinator tells
            // them where the others listen.
            set(&mut config, "scouting/gossip/enabled", true.into())?;
            // A coordinator that restarts is found again within a second.
            set(
                &mut config,
                "connect/retry",
                serde_json::json!({"period_init_ms": 250, "period_max_ms": 1000, "period_increase_factor": 2.0}),
            )?;
        }
        set(&mut config, "transport/link/tx/lease", u64::try_from(LEASE.as_millis()).unwrap_or(4000).into())?;
        Ok(config)
    }

    /// Where the coordinator is when no address was given: on this machine at the default
    /// port, or else wherever multicast scouting finds one.
    fn find_coordinator(&self) -> Result<String, ClusterError> {
        let local = endpoint(&format!("127.0.0.1:{DEFAULT_PORT}"), self.scheme())?;
        let here = SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT));
        if std::net::TcpStream::connect_timeout(&here, Duration::from_millis(500)).is_ok() {
            return Ok(local);
        }
        self.scout_coordinator()
    }

    /// The coordinator's endpoint, found by multicast scouting.
    fn scout_coordinator(&self) -> Result<String, ClusterError> {
        let mut config = self.config(Role::Tool)?;
        config
            .insert_json5("scouting/multicast/enabled", "true")
            .map_err(|e| ClusterError::Network(format!("Zenoh setting scouting/multicast/enabled: {e}")))?;
        let scout = zenoh::scout(WhatAmI::Router, config)
            .wait()
            .map_err(|e| ClusterError::Network(format!("cannot scout for the coordinator: {e}")))?;
        let wanted = self.scheme();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            let Ok(Some(hello)) = scout.recv_timeout(left) else { break };
            if let Some(found) = hello
                .locators()
                .iter()
                .map(ToString::to_string)
                .find(|l| l.starts_with(&format!("{wanted}/")) && !is_loopback(l))
            {
                tracing::info!(coordinator = %found, "found the coordinator by multicast scouting");
                return Ok(found);
            }
        }
        Err(ClusterError::Network(
            "no coordinator answered multicast scouting within 10 s: name it with --coordinator ADDRESS \
             (multicast may be filtered on this network)"
                .into(),
        ))
    }
}

/// A Zenoh endpoint from what a user writes (see [`nerve_topic::session::endpoint`]); a plain
/// address without a port gets [`DEFAULT_PORT`].
///
/// # Errors
/// When the result is not an endpoint Zenoh accepts.
pub fn endpoint(address: &str, scheme: &str) -> Result<String, ClusterError> {
    session::endpoint(address, scheme, Some(DEFAULT_PORT)).map_err(|e| match e {
        TopicError::BadAddress { address, why } => ClusterError::BadAddress { address, why },
        other => ClusterError::Network(other.to_string()),
    })
}

/// The `host:port` of an endpoint.
fn socket_part(endpoint: &str) -> Option<&str> {
    let rest = endpoint.split_once('/')?.1;
    Some(rest.split(['?', '#']).next().unwrap_or(rest))
}

fn is_loopback(endpoint: &str) -> bool {
    socket_part(endpoint)
        .and_then(|s| s.to_socket_addrs().ok())
        .is_some_and(|mut addrs| addrs.all(|a| a.ip().is_loopback()))
}

/// The endpoint a daemon listens on: the same protocol as `coordinator`, on the local
/// address of the route to it, with a port the system picks. So a daemon is reachable exactly
/// where it reaches the coordinator, and only there.
fn listen_toward(coordinator: &str) -> Result<String, ClusterError> {
    let bad = |why: String| ClusterError::BadAddress { address: coordinator.to_owned(), why };
    let scheme = coordinator.split_once('/').map_or("tcp", |(s, _)| s);
    let target = socket_part(coordinator)
        .and_then(|s| s.to_socket_addrs().ok())
        .and_then(|mut addrs| addrs.next())
        .ok_or_else(|| bad("cannot resolve its host".into()))?;
    let local = local_address_toward(target).map_err(|e| bad(format!("no route to it: {e}")))?;
    Ok(format!("{scheme}/{}", SocketAddr::new(local, 0)))
}

/// The address this machine uses to reach `target` (no packet is sent).
fn local_address_toward(target: SocketAddr) -> std::io::Result<IpAddr> {
    let unspecified: IpAddr = if target.is_ipv4() { [0, 0, 0, 0].into() } else { [0u16; 8].into() };
    let socket = UdpSocket::bind(SocketAddr::new(unspecified, 0))?;
    socket.connect(target)?;
    Ok(socket.local_addr()?.ip())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_become_endpoints() {
        assert_eq!(endpoint("10.0.0.1", "tcp").ok(), Some("tcp/10.0.0.1:53290".into()));
        assert_eq!(endpoint("10.0.0.1:7000", "tls").ok(), Some("tls/10.0.0.1:7000".into()));
        assert_eq!(endpoint("localhost", "tcp").ok(), Some("tcp/localhost:53290".into()));
        assert_eq!(endpoint("[::1]:9", "tcp").ok(), Some("tcp/[::1]:9".into()));
        assert_eq!(endpoint("quic/10.0.0.1:7000", "tcp").ok(), Some("quic/10.0.0.1:7000".into()));
        assert!(endpoint("", "tcp").is_err());
        assert!(endpoint("nonsense/", "tcp").is_err());
    }

    #[test]
    fn a_daemon_listens_where_it_reaches_the_coordinator() {
        assert_eq!(listen_toward("tcp/127.0.0.1:53290").ok(), Some("tcp/127.0.0.1:0".into()));
        assert_eq!(listen_toward("tls/127.0.0.1:7000").ok(), Some("tls/127.0.0.1:0".into()));
        assert!(is_loopback("tcp/127.0.0.1:53290"));
        assert!(!is_loopback("tcp/10.1.2.3:53290"));
    }
}

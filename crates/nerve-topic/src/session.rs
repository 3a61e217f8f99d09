//! This process's one Zenoh session, and the one set of options every session is built from.
//!
//! Topics, services and actions of network scope, and a cluster's coordinator, daemons and
//! tools, all reach other hosts through the same session of their process, configured by
//! [`NetworkOptions`]: how far discovery goes ([`DiscoveryRange`]), where to listen, which
//! peers to connect to, TLS or mutual TLS, and a Zenoh file for anything else. Each option is
//! read from the environment ([`NetworkOptions::from_env`]), so the nodes a command starts get
//! the command's settings ([`NetworkOptions::to_env`]).
//!
//! By default discovery stays on this host: sessions meet through Unix sockets in the user's
//! registry (see [`crate::rendezvous`]), nothing listens on a network interface and nothing
//! answers or sends multicast scouting. `NERVE_DISCOVERY_RANGE=subnet` (or `--discovery-range
//! subnet`) opens it to the LAN, as ROS 2's `ROS_AUTOMATIC_DISCOVERY_RANGE` does.

use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use zenoh::Wait;
use zenoh::config::EndPoint;

use crate::error::TopicError;
use crate::rendezvous::Rendezvous;
use nerve_shm::sync::lock;

/// Names a Zenoh configuration file (JSON5) under nerve's own settings.
pub const CONFIG_ENV: &str = "NERVE_ZENOH_CONFIG";
/// How far discovery reaches: `host` (the default) or `subnet`.
pub const RANGE_ENV: &str = "NERVE_DISCOVERY_RANGE";
/// Endpoints to listen on, comma-separated (`tcp/0.0.0.0:7447`, `10.0.0.2:7447`).
pub const LISTEN_ENV: &str = "NERVE_LISTEN";
/// Peers to connect to, comma-separated, whatever the range (ROS 2's static peers).
pub const CONNECT_ENV: &str = "NERVE_CONNECT";
/// PEM file of the authority that signed the certificates: turns TLS on.
pub const TLS_CA_ENV: &str = "NERVE_TLS_CA";
/// This process's certificate (PEM).
pub const TLS_CERT_ENV: &str = "NERVE_TLS_CERT";
/// The certificate's private key (PEM).
pub const TLS_KEY_ENV: &str = "NERVE_TLS_KEY";
/// `1` (or `true`): every end of every link shows a certificate (mutual TLS).
pub const MTLS_ENV: &str = "NERVE_MTLS";

/// How far a session finds other sessions without being told where they are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DiscoveryRange {
    /// Only the sessions of this host (through the registry's Unix sockets): nothing listens on
    /// a network interface, no multicast scouting.
    #[default]
    Host,
    /// The local network too: listen on every interface, find peers by UDP multicast scouting.
    Subnet,
}

impl FromStr for DiscoveryRange {
    type Err = TopicError;

    fn from_str(s: &str) -> Result<Self, TopicError> {
        match s.to_ascii_lowercase().as_str() {
            "host" | "localhost" => Ok(Self::Host),
            "subnet" => Ok(Self::Subnet),
            _ => Err(TopicError::BadOption {
                option: "discovery range".into(),
                value: s.to_owned(),
                why: "expected `host` or `subnet`".into(),
            }),
        }
    }
}

impl std::fmt::Display for DiscoveryRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Host => "host",
            Self::Subnet => "subnet",
        })
    }
}

/// TLS on every link: each end checks the other's certificate against `ca`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tls {
    /// PEM file of the authority that signed the certificates.
    pub ca: PathBuf,
    /// This process's certificate (PEM): needed to listen, and to connect under `mutual`.
    pub cert: Option<PathBuf>,
    /// The certificate's private key (PEM).
    pub key: Option<PathBuf>,
    /// Both ends of every link present a certificate (mutual TLS): only holders of a
    /// certificate the authority signed can connect.
    pub mutual: bool,
}

/// What a session is to the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionMode {
    /// A peer: a process with topics, services or actions, or a cluster's daemon.
    Peer,
    /// A router: a cluster's coordinator.
    Router,
    /// A client of a router: a cluster tool (`nerve list`, `nerve start`…).
    Client,
}

/// Everything a session is built from: one type for topics, services, actions and the cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkOptions {
    /// How far discovery reaches without named peers; `None`: this host only, unless a Zenoh
    /// file says otherwise.
    pub range: Option<DiscoveryRange>,
    /// Endpoints to listen on; empty: none beyond the host's rendezvous (`host` range), or
    /// every interface (`subnet` range).
    pub listen: Vec<String>,
    /// Peers to connect to.
    pub connect: Vec<String>,
    /// TLS on every link; endpoints written as plain addresses then use `tls/`.
    pub tls: Option<Tls>,
    /// A Zenoh configuration file (JSON5) under these settings, for anything they don't cover
    /// (its listen and connect endpoints stand where `listen` and `connect` are empty; its
    /// multicast scouting unless `range` is set).
    pub zenoh_config: Option<PathBuf>,
}

impl NetworkOptions {
    /// The options the environment gives ([`RANGE_ENV`], [`LISTEN_ENV`], [`CONNECT_ENV`],
    /// [`TLS_CA_ENV`], [`TLS_CERT_ENV`], [`TLS_KEY_ENV`], [`MTLS_ENV`], [`CONFIG_ENV`]).
    ///
    /// # Errors
    /// [`TopicError::BadOption`] for a value that cannot be read, naming the variable.
    pub fn from_env() -> Result<Self, TopicError> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// The options variables give, read by `var` (see [`NetworkOptions::from_env`]).
    fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self, TopicError> {
        let var = |name: &str| var(name).filter(|v| !v.is_empty());
        let list = |name: &str| {
            var(name).map(|v| v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect())
        };
        let range = var(RANGE_ENV).map(|v| v.parse().map_err(|e| at_variable(RANGE_ENV, e))).transpose()?;
        let mutual = match var(MTLS_ENV).as_deref() {
            None | Some("0" | "false") => false,
            Some("1" | "true") => true,
            Some(other) => {
                return Err(TopicError::BadOption {
                    option: MTLS_ENV.into(),
                    value: other.into(),
                    why: "expected 1 or 0".into(),
                });
            }
        };
        let tls = var(TLS_CA_ENV).map(|ca| Tls {
            ca: ca.into(),
            cert: var(TLS_CERT_ENV).map(PathBuf::from),
            key: var(TLS_KEY_ENV).map(PathBuf::from),
            mutual,
        });
        let options = Self {
            range,
            listen: list(LISTEN_ENV).unwrap_or_default(),
            connect: list(CONNECT_ENV).unwrap_or_default(),
            tls,
            zenoh_config: var(CONFIG_ENV).map(PathBuf::from),
        };
        options.check()?;
        Ok(options)
    }

    /// The environment that gives a process this one starts (a node, a cluster's daemon) the
    /// same options, as [`NetworkOptions::from_env`] reads them: every variable set, empty where
    /// unset; all but where to listen, which is one process's.
    #[must_use]
    pub fn to_env(&self) -> Vec<(String, String)> {
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
        let tls = self.tls.as_ref();
        [
            (RANGE_ENV, self.range.map(|r| r.to_string()).unwrap_or_default()),
            (LISTEN_ENV, String::new()),
            (CONNECT_ENV, self.connect.join(",")),
            (TLS_CA_ENV, tls.map(|t| t.ca.display().to_string()).unwrap_or_default()),
            (TLS_CERT_ENV, tls.map(|t| path(&t.cert)).unwrap_or_default()),
            (TLS_KEY_ENV, tls.map(|t| path(&t.key)).unwrap_or_default()),
            (MTLS_ENV, if tls.is_some_and(|t| t.mutual) { "1" } else { "0" }.into()),
            (CONFIG_ENV, path(&self.zenoh_config)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// The scheme of endpoints written as plain addresses.
    #[must_use]
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "tls" } else { "tcp" }
    }

    fn check(&self) -> Result<(), TopicError> {
        if let Some(tls) = &self.tls
            && (tls.cert.is_some() != tls.key.is_some() || (tls.mutual && tls.cert.is_none()))
        {
            return Err(TopicError::BadOption {
                option: "TLS".into(),
                value: tls.ca.display().to_string(),
                why: "a certificate needs its key and a key its certificate; mutual TLS needs both".into(),
            });
        }
        Ok(())
    }

    /// The Zenoh configuration of a session in `mode`: the Zenoh file if any, then these
    /// options. A cluster role sets its own listen and connect endpoints on top.
    ///
    /// # Errors
    /// An unreadable Zenoh file, an endpoint Zenoh does not accept, or half a TLS setting.
    pub fn zenoh_config(&self, mode: SessionMode) -> Result<zenoh::Config, TopicError> {
        self.check()?;
        let mut config = match &self.zenoh_config {
            Some(path) => zenoh::Config::from_file(path).map_err(|e| {
                TopicError::Network(format!("cannot read the Zenoh config {} ({CONFIG_ENV}): {e}", path.display()))
            })?,
            None => zenoh::Config::default(),
        };
        let mode_name = match mode {
            SessionMode::Peer => "peer",
            SessionMode::Router => "router",
            SessionMode::Client => "client",
        };
        set(&mut config, "mode", mode_name.into())?;
        let scheme = self.scheme();
        let endpoints = |list: &[String]| list.iter().map(|a| endpoint(a, scheme, None)).collect::<Result<Vec<_>, _>>();
        // Where to listen and connect, a Zenoh file decides unless the options say; the range
        // decides scouting, and where to listen without a file.
        let file = self.zenoh_config.is_some();
        let listen = endpoints(&self.listen)?;
        if !listen.is_empty() {
            set(&mut config, "listen/endpoints", listen.into())?;
        } else if !file {
            let default = match self.range.unwrap_or_default() {
                DiscoveryRange::Host => Vec::new(),
                DiscoveryRange::Subnet => vec![format!("{scheme}/[::]:0")],
            };
            set(&mut config, "listen/endpoints", default.into())?;
        }
        let connect = endpoints(&self.connect)?;
        if !connect.is_empty() || !file {
            set(&mut config, "connect/endpoints", connect.into())?;
        }
        if !file || self.range.is_some() {
            let subnet = self.range == Some(DiscoveryRange::Subnet);
            set(&mut config, "scouting/multicast/enabled", subnet.into())?;
        }
        // Zenoh reassembles what it fragmented up to this size; nerve's own limit applies first.
        set(&mut config, "transport/link/rx/max_message_size", u64::from(u32::MAX).into())?;
        if let Some(tls) = &self.tls {
            let path = |p: &PathBuf| serde_json::Value::from(p.to_string_lossy().into_owned());
            set(&mut config, "transport/link/tls/root_ca_certificate", path(&tls.ca))?;
            if let (Some(cert), Some(key)) = (&tls.cert, &tls.key) {
                set(&mut config, "transport/link/tls/listen_certificate", path(cert))?;
                set(&mut config, "transport/link/tls/listen_private_key", path(key))?;
                set(&mut config, "transport/link/tls/connect_certificate", path(cert))?;
                set(&mut config, "transport/link/tls/connect_private_key", path(key))?;
            }
            set(&mut config, "transport/link/tls/enable_mtls", tls.mutual.into())?;
        }
        Ok(config)
    }
}

fn at_variable(name: &str, e: TopicError) -> TopicError {
    match e {
        TopicError::BadOption { value, why, .. } => TopicError::BadOption { option: name.into(), value, why },
        other => other,
    }
}

/// Sets `key` of a Zenoh configuration.
///
/// # Errors
/// [`TopicError::Network`] naming the setting Zenoh refused.
pub fn set(config: &mut zenoh::Config, key: &str, value: serde_json::Value) -> Result<(), TopicError> {
    config
        .insert_json5(key, &value.to_string())
        .map_err(|e| TopicError::Network(format!("Zenoh setting {key} = {value}: {e}")))
}

/// A Zenoh endpoint from what a user writes: `10.0.0.1:7000`, `robot.local:7000`,
/// `[fe80::1]:7000`, `10.0.0.1` with a `default_port`, or an endpoint already (`tcp/…`,
/// `tls/…`, `quic/…`, `udp/…`, `unixsock-stream/…`). A plain address gets `scheme`.
///
/// # Errors
/// [`TopicError::BadAddress`] when the result is not an endpoint Zenoh accepts, or a plain
/// address has no port and there is no default.
pub fn endpoint(address: &str, scheme: &str, default_port: Option<u16>) -> Result<String, TopicError> {
    let bad = |why: String| TopicError::BadAddress { address: address.to_owned(), why };
    let no_port = || bad("no port (write ADDRESS:PORT)".into());
    let text = if address.contains('/') {
        address.to_owned()
    } else if address.parse::<SocketAddr>().is_ok() {
        format!("{scheme}/{address}")
    } else if let Ok(ip) = address.parse::<IpAddr>() {
        format!("{scheme}/{}", SocketAddr::new(ip, default_port.ok_or_else(no_port)?))
    } else if address.rsplit_once(':').is_some_and(|(_, port)| port.parse::<u16>().is_ok()) {
        format!("{scheme}/{address}")
    } else if !address.is_empty() {
        format!("{scheme}/{address}:{}", default_port.ok_or_else(no_port)?)
    } else {
        return Err(bad("empty".into()));
    };
    EndPoint::from_str(&text).map_err(|e| bad(e.to_string()))?;
    Ok(text)
}

/// This process's Zenoh session and host identity.
pub struct Network {
    pid: u32,
    pub(crate) session: zenoh::Session,
    pub(crate) host: String,
    /// Hosts this process sent messages to: closing waits until each has taken them all.
    sent_to: Mutex<HashSet<String>>,
    /// Answers another host's closing session once everything it sent here was taken.
    _drained: zenoh::query::Queryable<()>,
    /// Dropped after the session closes (see `Drop`), so the socket file goes last.
    _rendezvous: Option<Rendezvous>,
}

/// The key under which the sessions of `host` answer once they have taken every message sent
/// to them before the query; each session answers on `<key>/<its id>`.
fn drained_key(host: &str) -> String {
    format!("nerve/drained/h{host}")
}

/// Longest a closing session waits for the hosts it sent to: a host that is gone or cut off
/// must not hold its exit for good.
const DRAIN_WAIT: Duration = Duration::from_secs(2);

impl Network {
    /// The Zenoh session (a cheap handle; it stays open while this `Network` lives).
    #[must_use]
    pub fn session(&self) -> &zenoh::Session {
        &self.session
    }

    /// This host's identity on the network (see [`crate::network::host_id`]).
    #[must_use]
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Notes that messages went to `host` (see `Drop`).
    pub(crate) fn sent_to(&self, host: &str) {
        let mut hosts = lock(&self.sent_to);
        if !hosts.contains(host) {
            hosts.insert(host.to_owned());
        }
    }

    /// Waits until every host this session sent messages to has taken them: a query to each
    /// of their sessions travels behind the messages, on the same links and at the same
    /// priority, so its answer comes once they were handed over. Zenoh's close alone can drop
    /// what is still queued to a peer.
    fn drain(&self) {
        let hosts = std::mem::take(&mut *lock(&self.sent_to));
        let asked: Vec<_> = hosts
            .iter()
            .filter_map(|host| {
                self.session
                    .get(format!("{}/*", drained_key(host)))
                    .target(zenoh::query::QueryTarget::All)
                    .consolidation(zenoh::query::ConsolidationMode::None)
                    .timeout(DRAIN_WAIT)
                    .wait()
                    .inspect_err(|e| tracing::debug!(host, error = %e, "cannot ask a host whether it took everything"))
                    .ok()
            })
            .collect();
        for replies in asked {
            while replies.recv().is_ok() {}
        }
    }
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Network").field("host", &self.host).field("zid", &self.session.zid()).finish_non_exhaustive()
    }
}

/// The process's session, held weakly: it closes when the last endpoint of the process, or
/// the cluster role that opened it, lets go.
static NETWORK: Mutex<Weak<Network>> = Mutex::new(Weak::new());
/// Options set by the program ([`use_options`]) for the session it has not opened yet.
static OPTIONS: Mutex<Option<NetworkOptions>> = Mutex::new(None);

/// Sets the options this process's session will be opened with, in place of the
/// environment's: how a command's `--discovery-range`, `--tls-ca`… reach its topics.
///
/// # Errors
/// [`TopicError::Network`] when the session is open already (with other options, maybe).
pub fn use_options(options: NetworkOptions) -> Result<(), TopicError> {
    let current = lock(&NETWORK);
    if current.upgrade().is_some_and(|n| n.pid == std::process::id()) {
        return Err(TopicError::Network("this process's Zenoh session is open already".into()));
    }
    *lock(&OPTIONS) = Some(options);
    drop(current);
    Ok(())
}

/// The options this process's sessions are built from: those given to [`use_options`], else
/// the environment's.
///
/// # Errors
/// As [`NetworkOptions::from_env`].
pub fn options() -> Result<NetworkOptions, TopicError> {
    match lock(&OPTIONS).clone() {
        Some(options) => Ok(options),
        None => NetworkOptions::from_env(),
    }
}

/// The process's session: the one open, else one opened now as a peer, from the options given
/// to [`use_options`] or else the environment (and again in a forked child).
///
/// # Errors
/// Bad options, or a session Zenoh cannot open.
pub fn network() -> Result<Arc<Network>, TopicError> {
    let mut current = lock(&NETWORK);
    if let Some(n) = current.upgrade()
        && n.pid == std::process::id()
    {
        return Ok(n);
    }
    let n = open_with(options()?.zenoh_config(SessionMode::Peer)?)?;
    *current = Arc::downgrade(&n);
    Ok(n)
}

/// Opens this process's session from `config` (a cluster role's: see
/// [`NetworkOptions::zenoh_config`]); topics, services and actions of the process use it from
/// then on, as long as the caller keeps it.
///
/// # Errors
/// [`TopicError::Network`] when the process has a session already, or Zenoh cannot open it.
pub fn open_session(config: zenoh::Config) -> Result<Arc<Network>, TopicError> {
    let mut current = lock(&NETWORK);
    if current.upgrade().is_some_and(|n| n.pid == std::process::id()) {
        return Err(TopicError::Network("this process's Zenoh session is open already".into()));
    }
    let n = open_with(config)?;
    *current = Arc::downgrade(&n);
    Ok(n)
}

fn open_with(mut config: zenoh::Config) -> Result<Arc<Network>, TopicError> {
    let mut rendezvous = Rendezvous::join(&mut config)?;
    let session =
        zenoh::open(config).wait().map_err(|e| TopicError::Network(format!("cannot open a Zenoh session: {e}")))?;
    if let Some(r) = &mut rendezvous {
        r.listening();
    }
    let host = crate::network::host_id();
    let drained = session
        .declare_queryable(format!("{}/{}", drained_key(&host), session.zid()))
        .callback(|query| {
            if let Err(e) = query.reply(query.key_expr().clone(), zenoh::bytes::ZBytes::new()).wait() {
                tracing::debug!(error = %e, "cannot answer a closing session");
            }
        })
        .wait()
        .map_err(|e| TopicError::Network(format!("cannot declare the session's drain answer: {e}")))?;
    Ok(Arc::new(Network {
        pid: std::process::id(),
        session,
        host,
        sent_to: Mutex::new(HashSet::new()),
        _drained: drained,
        _rendezvous: rendezvous,
    }))
}

impl Drop for Network {
    fn drop(&mut self) {
        // A publisher that sends and exits delivers its last messages: every host it sent to
        // has taken them before the links go.
        if self.pid == std::process::id() {
            self.drain();
            if let Err(e) = self.session.close().wait() {
                tracing::debug!(error = %e, "closing the Zenoh session");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_become_endpoints() {
        assert_eq!(endpoint("10.0.0.1", "tcp", Some(53290)).ok(), Some("tcp/10.0.0.1:53290".into()));
        assert_eq!(endpoint("10.0.0.1:7000", "tls", None).ok(), Some("tls/10.0.0.1:7000".into()));
        assert_eq!(endpoint("localhost", "tcp", Some(9)).ok(), Some("tcp/localhost:9".into()));
        assert_eq!(endpoint("[::1]:9", "tcp", None).ok(), Some("tcp/[::1]:9".into()));
        assert_eq!(endpoint("quic/10.0.0.1:7000", "tcp", None).ok(), Some("quic/10.0.0.1:7000".into()));
        assert!(endpoint("10.0.0.1", "tcp", None).is_err_and(|e| e.to_string().contains("no port")));
        assert!(endpoint("", "tcp", None).is_err());
        assert!(endpoint("nonsense/", "tcp", None).is_err());
    }

    fn get(config: &zenoh::Config, key: &str) -> serde_json::Value {
        serde_json::from_str(&config.get_json(key).expect("key")).expect("json")
    }

    #[test]
    fn the_host_range_listens_nowhere_and_scouts_nothing() {
        let config = NetworkOptions::default().zenoh_config(SessionMode::Peer).expect("config");
        assert_eq!(get(&config, "listen/endpoints"), serde_json::json!([]));
        assert_eq!(get(&config, "scouting/multicast/enabled"), serde_json::json!(false));
        let subnet = NetworkOptions { range: Some(DiscoveryRange::Subnet), ..Default::default() };
        let config = subnet.zenoh_config(SessionMode::Peer).expect("config");
        assert_eq!(get(&config, "listen/endpoints"), serde_json::json!(["tcp/[::]:0"]));
        assert_eq!(get(&config, "scouting/multicast/enabled"), serde_json::json!(true));
    }

    #[test]
    fn options_survive_the_trip_through_the_environment() {
        let options = NetworkOptions {
            range: Some(DiscoveryRange::Subnet),
            listen: vec!["tcp/127.0.0.1:7447".into()],
            connect: vec!["10.0.0.2:7447".into(), "10.0.0.3:7447".into()],
            tls: Some(Tls { ca: "ca.pem".into(), cert: Some("c.pem".into()), key: Some("k.pem".into()), mutual: true }),
            zenoh_config: None,
        };
        let env: std::collections::HashMap<_, _> = options.to_env().into_iter().collect();
        assert_eq!(env[RANGE_ENV], "subnet");
        assert_eq!(env[LISTEN_ENV], "", "where to listen is one process's");
        assert_eq!(env[CONNECT_ENV], "10.0.0.2:7447,10.0.0.3:7447");
        assert_eq!(env[MTLS_ENV], "1");
        assert_eq!(env[CONFIG_ENV], "");
        let read = NetworkOptions::from_vars(|name| env.get(name).cloned()).expect("read back");
        assert_eq!(read, NetworkOptions { listen: Vec::new(), ..options.clone() });
        let config = options.zenoh_config(SessionMode::Peer).expect("config");
        assert_eq!(get(&config, "connect/endpoints"), serde_json::json!(["tls/10.0.0.2:7447", "tls/10.0.0.3:7447"]));
        assert_eq!(get(&config, "transport/link/tls/enable_mtls"), serde_json::json!(true));
    }

    #[test]
    fn half_a_tls_setting_and_an_unknown_range_are_refused() {
        let half = NetworkOptions {
            tls: Some(Tls { ca: "ca.pem".into(), cert: Some("c.pem".into()), key: None, mutual: false }),
            ..Default::default()
        };
        assert!(half.zenoh_config(SessionMode::Peer).is_err_and(|e| e.to_string().contains("its key")));
        let e = "lan".parse::<DiscoveryRange>().expect_err("refused");
        assert!(e.to_string().contains("`lan`") && e.to_string().contains("subnet"), "{e}");
        assert_eq!("LOCALHOST".parse::<DiscoveryRange>().ok(), Some(DiscoveryRange::Host));
    }
}

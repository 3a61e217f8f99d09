//! Topics between hosts, over Zenoh.
//!
//! Each process that has a network-scoped endpoint uses its one Zenoh session
//! ([`crate::session`]): sessions of one host meet through the registry (see
//! [`crate::rendezvous`]), others as its [`crate::session::NetworkOptions`] say. A network
//! namespace counts as a host of its own.
//!
//! Key expressions (`<topic>` keeps its `/`-separated segments):
//!
//! ```text
//! nerve/d<domain>/h<host>/<topic>                 data, addressed to one host
//! nerve/sub/d<domain>/h<host>/e<pid>x<id>/<topic>  liveliness token of one subscriber
//! nerve/pub/d<domain>/h<host>/e<pid>x<id>/<topic>  liveliness token of one publisher
//! ```
//!
//! A publisher watches the subscribers' liveliness tokens and sends each message once per
//! remote host that has subscribers — nothing at all while there is none. Subscribers on its
//! own host are served through shared memory, never through the network.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arrow_buffer::Buffer;
use nerve_shm::codec::aligned_copy;
use zenoh::Wait;
use zenoh::qos::CongestionControl;
use zenoh::sample::SampleKind;

use crate::error::TopicError;
pub(crate) use crate::session::{Network, network};
use nerve_shm::sync::lock;

/// Identity of this host: the boot (shared by every namespace of a machine) and the network
/// namespace, so two namespaces of one machine are two hosts, as they are to the network.
#[must_use]
pub fn host_id() -> String {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let boot: String = boot.trim().chars().filter(char::is_ascii_hexdigit).take(12).collect();
    let netns = std::fs::metadata("/proc/self/ns/net").map(|m| m.ino()).unwrap_or(0);
    format!("{boot}n{netns}")
}

/// Data key of `topic` for the subscribers of `host`.
pub(crate) fn data_key(domain: u32, host: &str, topic: &str) -> String {
    format!("nerve/d{domain}/h{host}/{topic}")
}

/// Which end of a topic a liveliness token announces.
#[derive(Debug, Clone, Copy)]
pub(crate) enum End {
    Publisher,
    Subscriber,
    /// A service's server (see [`crate::service`]).
    Server,
    /// An action's server (see [`crate::action`]).
    ActionServer,
}

impl End {
    pub(crate) fn chunk(self) -> &'static str {
        match self {
            Self::Publisher => "pub",
            Self::Subscriber => "sub",
            Self::Server => "srv",
            Self::ActionServer => "act",
        }
    }
}

pub(crate) fn token_key(end: End, domain: u32, host: &str, id: u64, topic: &str) -> String {
    format!("nerve/{}/d{domain}/h{host}/e{}x{id}/{topic}", end.chunk(), std::process::id())
}

/// Announces an endpoint (a topic's, or a service's or action's server) to the network for as long as the
/// token lives.
pub(crate) fn announce(
    net: &Network,
    end: End,
    domain: u32,
    id: u64,
    topic: &str,
) -> Result<zenoh::liveliness::LivelinessToken, TopicError> {
    net.session
        .liveliness()
        .declare_token(token_key(end, domain, &net.host, id, topic))
        .wait()
        .map_err(|e| TopicError::Network(format!("cannot announce `{topic}` on the network: {e}")))
}

/// The host named in an endpoint's liveliness key.
pub(crate) fn token_host(key: &str) -> Option<&str> {
    let mut chunks = key.split('/').skip(3);
    chunks.next()?.strip_prefix('h')
}

/// Told the host of each remote endpoint that appears (see [`RemotePeers::watch`]).
pub(crate) type Joined = Box<dyn Fn(&str) + Send + Sync>;

/// The remote hosts that have endpoints of one kind on one topic, kept up to date from their
/// liveliness tokens.
pub(crate) struct RemotePeers {
    hosts: Arc<Mutex<HashMap<String, usize>>>,
    /// The sum over `hosts`, readable without the lock (checked on every send).
    total: Arc<AtomicUsize>,
    _watch: zenoh::pubsub::Subscriber<()>,
}

impl RemotePeers {
    /// Follows the endpoints of kind `end` on `topic`; `joined`, when given, is told the host
    /// of each that appears.
    pub(crate) fn watch(
        net: &Network,
        end: End,
        domain: u32,
        topic: &str,
        joined: Option<Joined>,
    ) -> Result<Self, TopicError> {
        let hosts: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
        let total = Arc::new(AtomicUsize::new(0));
        let own = net.host.clone();
        let (seen, counted) = (hosts.clone(), total.clone());
        let watch = net
            .session
            .liveliness()
            .declare_subscriber(format!("nerve/{}/d{domain}/*/*/{topic}", end.chunk()))
            .history(true)
            .callback(move |sample| {
                let Some(host) = token_host(sample.key_expr().as_str()) else { return };
                if host == own {
                    return;
                }
                let mut hosts = lock(&seen);
                match sample.kind() {
                    SampleKind::Put => *hosts.entry(host.to_owned()).or_default() += 1,
                    SampleKind::Delete => {
                        if let Some(n) = hosts.get_mut(host) {
                            *n = n.saturating_sub(1);
                            if *n == 0 {
                                hosts.remove(host);
                            }
                        }
                    }
                }
                counted.store(hosts.values().sum(), Ordering::Release);
                drop(hosts);
                // Told once the host is listed, so a send it triggers reaches that host.
                if let (SampleKind::Put, Some(joined)) = (sample.kind(), &joined) {
                    joined(host);
                }
            })
            .wait()
            .map_err(|e| TopicError::Network(format!("cannot watch the peers of `{topic}`: {e}")))?;
        Ok(Self { hosts, total, _watch: watch })
    }

    /// Remote hosts with such endpoints now.
    pub(crate) fn hosts(&self) -> Vec<String> {
        lock(&self.hosts).keys().cloned().collect()
    }

    /// Remote endpoints now.
    pub(crate) fn count(&self) -> usize {
        self.total.load(Ordering::Acquire)
    }
}

/// Sends one encoded message to the subscribers of each host in `hosts`.
pub(crate) fn send(net: &Network, domain: u32, topic: &str, hosts: &[String], message: Vec<u8>) {
    let message = zenoh::bytes::ZBytes::from(message);
    for host in hosts {
        net.sent_to(host);
        let key = data_key(domain, host, topic);
        // Block rather than drop: nothing sent is lost silently. Zenoh closes a link that stays
        // blocked too long, so a dead host cannot stall the publisher for good.
        let put =
            net.session.put(&key, message.clone()).congestion_control(CongestionControl::Block).express(true).wait();
        if let Err(e) = put {
            tracing::warn!(%key, error = %e, "cannot send to a remote host");
        }
    }
}

/// A subscriber's presence on the network: its liveliness token, the Zenoh subscriber that
/// hands every message addressed to this host to `deliver`, and the remote publishers.
pub(crate) struct RemoteFeed {
    _token: zenoh::liveliness::LivelinessToken,
    _data: zenoh::pubsub::Subscriber<()>,
    pub(crate) publishers: RemotePeers,
    /// Keeps the session open while this subscriber lives.
    _net: Arc<Network>,
}

impl RemoteFeed {
    pub(crate) fn declare(
        net: Arc<Network>,
        domain: u32,
        topic: &str,
        id: u64,
        deliver: impl Fn(Buffer) + Send + Sync + 'static,
    ) -> Result<Self, TopicError> {
        let err = |e: zenoh::Error| TopicError::Network(format!("cannot subscribe to `{topic}` on the network: {e}"));
        let data = net
            .session
            .declare_subscriber(data_key(domain, &net.host, topic))
            .callback(move |sample| deliver(aligned_copy(&sample.payload().to_bytes())))
            .wait()
            .map_err(err)?;
        let token = announce(&net, End::Subscriber, domain, id, topic)?;
        let publishers = RemotePeers::watch(&net, End::Publisher, domain, topic, None)?;
        Ok(Self { _token: token, _data: data, publishers, _net: net })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_is_read_back_from_a_token_key() {
        let key = token_key(End::Subscriber, 3, "ab12n4026531840", 5, "robot/pose");
        assert_eq!(token_host(&key), Some("ab12n4026531840"));
        assert!(host_id().contains('n'));
    }
}

//! The network options every command takes: how this command's Zenoh session, and the nodes
//! it starts, reach other hosts (docs/security.md, "Between hosts").

use std::path::PathBuf;

use nerve_topic::session::{self, DiscoveryRange, NetworkOptions, Tls};

/// The same flags on every command; each overrides its environment variable.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct NetworkArgs {
    /// How far discovery reaches: `host` (this machine only) or `subnet` (the local network,
    /// by multicast scouting) [default: $NERVE_DISCOVERY_RANGE, else host].
    #[arg(long, global = true, value_name = "RANGE", value_parser = parse_range)]
    discovery_range: Option<DiscoveryRange>,
    /// Peers to connect to, whatever the range (repeatable) [default: $NERVE_CONNECT].
    #[arg(long, global = true, value_name = "ENDPOINT")]
    connect: Vec<String>,
    /// TLS on every link: the PEM file of the authority that signed the certificates
    /// [default: $NERVE_TLS_CA].
    #[arg(long, global = true, value_name = "FILE")]
    tls_ca: Option<PathBuf>,
    /// This process's certificate (PEM), with --tls-ca [default: $NERVE_TLS_CERT].
    #[arg(long, global = true, value_name = "FILE")]
    tls_cert: Option<PathBuf>,
    /// The certificate's private key (PEM) [default: $NERVE_TLS_KEY].
    #[arg(long, global = true, value_name = "FILE")]
    tls_key: Option<PathBuf>,
    /// Mutual TLS: every end of every link shows a certificate the authority signed
    /// [default: $NERVE_MTLS].
    #[arg(long, global = true)]
    mtls: bool,
    /// A Zenoh configuration file (JSON5) for anything these options don't cover
    /// [default: $NERVE_ZENOH_CONFIG].
    #[arg(long, global = true, value_name = "FILE")]
    zenoh_config: Option<PathBuf>,
}

fn parse_range(s: &str) -> Result<DiscoveryRange, String> {
    s.parse().map_err(|e: nerve_topic::TopicError| e.to_string())
}

impl NetworkArgs {
    /// The environment's options with these flags on top, made this process's (its topics,
    /// services, actions and cluster role use them).
    ///
    /// # Errors
    /// A variable or flag that cannot be read, or half a TLS setting.
    pub fn apply(&self) -> anyhow::Result<NetworkOptions> {
        let mut options = NetworkOptions::from_env()?;
        if self.discovery_range.is_some() {
            options.range = self.discovery_range;
        }
        if !self.connect.is_empty() {
            options.connect.clone_from(&self.connect);
        }
        if let Some(ca) = &self.tls_ca {
            options.tls = Some(Tls { ca: ca.clone(), cert: None, key: None, mutual: false });
        }
        if let Some(tls) = &mut options.tls {
            if self.tls_cert.is_some() {
                tls.cert.clone_from(&self.tls_cert);
            }
            if self.tls_key.is_some() {
                tls.key.clone_from(&self.tls_key);
            }
            tls.mutual |= self.mtls;
        } else if self.tls_cert.is_some() || self.tls_key.is_some() || self.mtls {
            anyhow::bail!("--tls-cert, --tls-key and --mtls need --tls-ca (or NERVE_TLS_CA)");
        }
        if self.zenoh_config.is_some() {
            options.zenoh_config.clone_from(&self.zenoh_config);
        }
        session::use_options(options.clone())?;
        Ok(options)
    }
}

/// This process's options, as [`NetworkArgs::apply`] set them.
///
/// # Errors
/// As [`NetworkOptions::from_env`], when none were set.
pub fn current() -> anyhow::Result<NetworkOptions> {
    Ok(session::options()?)
}

/// This process's options with the dataflow's `network:` filling what neither a flag nor the
/// environment set, made this process's: what `nerve run` and its nodes use.
///
/// # Errors
/// As [`current`], or this process's session already open with other options.
pub fn with_dataflow(spec: &nerve_spec::NetworkSpec) -> anyhow::Result<NetworkOptions> {
    let mut options = current()?;
    let mut changed = false;
    if options.range.is_none()
        && let Some(range) = spec.discovery_range
    {
        options.range = Some(match range {
            nerve_spec::DiscoveryRange::Host => DiscoveryRange::Host,
            nerve_spec::DiscoveryRange::Subnet => DiscoveryRange::Subnet,
        });
        changed = true;
    }
    if options.connect.is_empty() && !spec.connect.is_empty() {
        options.connect.clone_from(&spec.connect);
        changed = true;
    }
    if changed {
        session::use_options(options.clone())?;
        tracing::info!(
            range = spec.discovery_range.map_or("(unchanged)", nerve_spec::DiscoveryRange::as_str),
            connect = ?spec.connect,
            "the dataflow's `network:` applies: no flag or environment variable says otherwise"
        );
    }
    Ok(options)
}

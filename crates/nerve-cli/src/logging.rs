//! Where nerve's log lines go: standard error, filtered by `NERVE_LOG` (a `tracing` filter such
//! as `debug` or `warn,nerve_topic=debug`; the lines of Zenoh and the DDS stack stay at the
//! caller's default level unless it names `zenoh`, `rustdds` or `ros2_client`).
//!
//! The command line and the Python package share one process-wide subscriber: the package
//! installs it on import (warnings only), and the `nerve` command run through the package
//! raises it to its own level.

use std::sync::{Mutex, PoisonError};

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Registry, reload};

/// What a program that only uses nerve's API hears: a failure it cannot see otherwise
/// (a refused link, a message skipped, a transform refused), not nerve's start-up chatter;
/// and what a node logs itself (`node.log`, `node.logger`) from `info` up.
pub const LIBRARY_DEFAULT: &str = "warn,zenoh=error,nerve::node=info";

/// The libraries whose lines keep the default's level under a `NERVE_LOG` that does not name them.
const QUIETED: &[&str] = &["zenoh", "foxglove", "ros2_client", "rustdds"];

static FILTER: Mutex<Option<reload::Handle<EnvFilter, Registry>>> = Mutex::new(None);

/// Sends log lines at `default` level and above to standard error (`NERVE_LOG` overrides it);
/// a second call changes the level of the first one's subscriber. Another `tracing` subscriber
/// installed by the program first is left as it is.
pub fn init(default: &str) {
    let filter = match std::env::var("NERVE_LOG") {
        // The lines of the libraries nerve quiets by default (Zenoh's ids, addresses and
        // retried links; the DDS stack's every discovered peer) would drown nerve's: they keep
        // the default's level unless the filter names their crate.
        Ok(spec) if !spec.trim().is_empty() => {
            let quieted = default.split(',').filter(|d| {
                let krate = d.split(['=', ':']).next().unwrap_or_default();
                d.contains('=') && QUIETED.contains(&krate) && !spec.contains(krate)
            });
            let spec = std::iter::once(spec.as_str()).chain(quieted).collect::<Vec<_>>().join(",");
            EnvFilter::try_new(&spec).unwrap_or_else(|e| {
                eprintln!("nerve: NERVE_LOG=`{spec}` is not a log filter ({e}); using `{default}`");
                EnvFilter::new(default)
            })
        }
        _ => EnvFilter::new(default),
    };
    let mut installed = FILTER.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(handle) = installed.as_ref() {
        if let Err(e) = handle.reload(filter) {
            eprintln!("nerve: cannot change the log level: {e}");
        }
        return;
    }
    let (filter, handle) = reload::Layer::new(filter);
    let lines = tracing_subscriber::fmt::layer()
        .with_target(false)
        .without_time()
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    if tracing_subscriber::registry().with(filter).with(lines).try_init().is_ok() {
        *installed = Some(handle);
    }
}

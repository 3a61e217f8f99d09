//! `nerve view`: the live dashboard of this host's dataflows in a browser (the `nerve-view`
//! crate), and `--view` of `nerve run`.

use std::net::IpAddr;

use anyhow::Context;
use nerve_view::{Options, View};

use crate::topic::StopSignal;

/// Arguments of `nerve view`.
#[derive(Debug, clap::Args)]
pub struct ViewArgs {
    /// The port to listen on (0: any free port, printed at start).
    #[arg(long, default_value_t = nerve_view::DEFAULT_PORT)]
    port: u16,
    /// The address to listen on. Anyone who reaches it sees every running node, its logs and
    /// every channel's values: give another than loopback only on a network you trust.
    #[arg(long, default_value = "127.0.0.1")]
    address: IpAddr,
    /// Domain of the channels and transforms shown.
    #[arg(long, default_value_t = 0, value_name = "N")]
    domain: u32,
}

/// Runs `nerve view` until Ctrl-C.
pub fn run(args: &ViewArgs) -> anyhow::Result<i32> {
    let stop = StopSignal::install()?;
    let view = View::start(&Options { address: args.address, port: args.port, domain: args.domain })?;
    // Scripts that asked for port 0 read the port from this line.
    eprintln!("nerve: dashboard on {} (Ctrl-C to stop)", url(args.address, view.port()));
    stop.wait();
    Ok(0)
}

/// The dashboard of `nerve run --view[=PORT]`, on loopback, for as long as the run lasts.
pub(crate) fn for_run(port: u16) -> anyhow::Result<View> {
    let view = View::start(&Options { port, ..Options::default() }).context("--view")?;
    eprintln!("nerve: dashboard on {}", url(Options::default().address, view.port()));
    Ok(view)
}

fn url(address: IpAddr, port: u16) -> String {
    match address {
        IpAddr::V6(a) => format!("http://[{a}]:{port}"),
        IpAddr::V4(a) => format!("http://{a}:{port}"),
    }
}

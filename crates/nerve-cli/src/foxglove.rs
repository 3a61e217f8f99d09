//! `nerve foxglove`: a Foxglove WebSocket server over the topics, outputs, services and
//! parameters of this host (the `nerve-foxglove` crate), and `--foxglove` of `nerve run`.

use anyhow::Context;
use nerve_foxglove::{Bridge, Options, TimeSource};

use crate::topic::StopSignal;

/// Arguments of `nerve foxglove`.
#[derive(Debug, clap::Args)]
pub struct FoxgloveArgs {
    /// The port to listen on (0: any free port, printed at start).
    #[arg(long, default_value_t = 8765)]
    port: u16,
    /// The address to listen on. Anyone who reaches it reads every topic and may publish on
    /// any: give another than loopback only on a network you trust.
    #[arg(long, default_value = "127.0.0.1")]
    address: String,
    /// Domain of the topics and services.
    #[arg(long, default_value_t = 0, value_name = "N")]
    domain: u32,
    /// Follow the simulated time of this run (its `--name` or run id): the server announces it,
    /// and stamps messages with it.
    #[arg(long, value_name = "RUN")]
    sim_time: Option<String>,
    /// Messages held for a client that reads slowly (all its channels together); past it, the
    /// oldest are dropped.
    #[arg(long, default_value_t = nerve_foxglove::DEFAULT_BACKLOG, value_name = "N")]
    queue_size: usize,
}

/// Runs `nerve foxglove` until Ctrl-C.
pub fn run(args: &FoxgloveArgs) -> anyhow::Result<i32> {
    if args.queue_size == 0 {
        anyhow::bail!("--queue-size must be at least 1");
    }
    let stop = StopSignal::install()?;
    let time = args.sim_time.clone().map_or(TimeSource::Wall, TimeSource::SimulatedRun);
    let options = Options {
        address: args.address.clone(),
        port: args.port,
        domain: args.domain,
        backlog: args.queue_size,
        time,
        ..Options::default()
    };
    let bridge = Bridge::start(&options)?;
    // Scripts that asked for port 0 read the port from this line.
    eprintln!("nerve: Foxglove WebSocket server on ws://{}:{} (Ctrl-C to stop)", args.address, bridge.port());
    stop.wait();
    Ok(0)
}

/// The bridge of `nerve run --foxglove[=PORT]`, on loopback, for as long as the run lasts.
pub(crate) fn for_run(port: u16, sim_time: bool) -> anyhow::Result<Bridge> {
    let time = if sim_time { TimeSource::SimulatedOwnRun } else { TimeSource::Wall };
    let bridge = Bridge::start(&Options { port, time, ..Options::default() }).context("--foxglove")?;
    eprintln!("nerve: Foxglove WebSocket server on ws://127.0.0.1:{}", bridge.port());
    Ok(bridge)
}

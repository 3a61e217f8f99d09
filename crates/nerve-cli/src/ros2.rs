//! `nerve ros2`: this machine's nerve and the ROS 2 graph, joined.

use anyhow::Context;
use nerve_ros2::{Domain, TransformJoin};

use crate::topic::StopSignal;

/// `nerve ros2`.
#[derive(Debug, clap::Args)]
pub struct Ros2Args {
    #[command(subcommand)]
    command: Ros2Command,
}

#[derive(Debug, clap::Subcommand)]
enum Ros2Command {
    /// Join nerve and ROS 2 until Ctrl-C: the transform tree (nerve's `tf` and `tf_static`
    /// topics with ROS 2's `/tf` and `/tf_static`), both ways.
    Bridge(BridgeArgs),
}

#[derive(Debug, clap::Args)]
struct BridgeArgs {
    /// The ROS 2 domain [default: $ROS_DOMAIN_ID, else 0].
    #[arg(long, value_name = "N")]
    domain: Option<u16>,
    /// nerve's topic domain, whose transform topics are joined.
    #[arg(long, value_name = "N", default_value_t = 0)]
    nerve_domain: u32,
}

/// Runs `nerve ros2 …`.
///
/// # Errors
/// A ROS 2 environment the bridge cannot honour, or endpoints that cannot be set up.
pub fn run(args: &Ros2Args) -> anyhow::Result<i32> {
    match &args.command {
        Ros2Command::Bridge(bridge) => run_bridge(bridge),
    }
}

fn run_bridge(args: &BridgeArgs) -> anyhow::Result<i32> {
    let stop = StopSignal::install()?;
    let mut domain = Domain::from_env()?;
    if let Some(id) = args.domain {
        domain = Domain::with_id(id, domain.range)?;
    }
    let _join = TransformJoin::start(&domain, args.nerve_domain).context("joining the transform trees")?;
    eprintln!("nerve: transforms joined with ROS 2 domain {} (Ctrl-C to stop)", domain.id);
    stop.wait();
    Ok(0)
}

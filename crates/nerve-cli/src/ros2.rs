//! `nerve ros2`: this machine's nerve and the ROS 2 graph, joined.

use std::path::PathBuf;

use anyhow::Context;
use nerve_ros2::{Domain, ParameterServices, TopicJoin, TopicPatterns, TransformJoin};
use nerve_types::Registry;

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
    /// topics with ROS 2's `/tf` and `/tf_static`), the parameters of the nodes running on this
    /// host (ROS 2's parameter services), and the topics `--topics` names, both ways.
    Bridge(BridgeArgs),
}

#[derive(Debug, clap::Args)]
struct BridgeArgs {
    /// Topics to join by name (`robot/pose` is ROS 2's `/robot/pose`): shell globs where `*`
    /// stays within a level and `**` crosses levels (`camera/*`, `robot/**`, `chatter`; `**`
    /// for every topic). A ROS 2 topic with a publisher appears as a nerve topic; a nerve topic
    /// a ROS 2 node subscribes to is written to ROS 2 in the type it asks for. Messages cross
    /// only while the other side listens.
    #[arg(long, value_name = "PATTERN", num_args = 1..)]
    topics: Vec<String>,
    /// More folders of message definitions (`<package>/msg/<Name>.msg`), for joined topics of
    /// types nerve does not ship.
    #[arg(long, value_name = "DIR")]
    types: Vec<PathBuf>,
    /// The ROS 2 domain [default: $ROS_DOMAIN_ID, else 0].
    #[arg(long, value_name = "N")]
    domain: Option<u16>,
    /// nerve's topic domain, whose topics are joined.
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
    let patterns = (!args.topics.is_empty()).then(|| TopicPatterns::new(&args.topics)).transpose()?;
    let stop = StopSignal::install()?;
    let mut domain = Domain::from_env()?;
    if let Some(id) = args.domain {
        domain = Domain::with_id(id, domain.range)?;
    }
    let participant = domain.participant()?;
    let _transforms = TransformJoin::start(&participant, args.nerve_domain).context("joining the transform trees")?;
    let _parameters = ParameterServices::start(&participant).context("offering nerve's parameters to ROS 2")?;
    let _topics = patterns
        .map(|patterns| TopicJoin::start(&participant, patterns, args.nerve_domain, Registry::new(&args.types)))
        .transpose()
        .context("joining the topics")?;
    let topics = if args.topics.is_empty() { String::new() } else { format!(", topics {}", args.topics.join(" ")) };
    eprintln!("nerve: joined with ROS 2 domain {}: transforms, parameters{topics} (Ctrl-C to stop)", domain.id);
    stop.wait();
    Ok(0)
}

//! `nerve replay`: a dataflow fed from a recording in place of its source nodes, or a
//! recording's channels republished as topics; and the replayer node (`nerve replay-node`,
//! hidden) that stands in for a source node.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use nerve_node::Node;
use nerve_record::{Pace, Recorded, Recording, channel_topic, output_channel, replay};
use nerve_spec::{Dataflow, InputSource, NodeSpec};
use nerve_topic::{Publisher, PublisherOptions, Scope};

use crate::topic::StopSignal;
use crate::{RunFlags, load, nerve_itself};

/// Longest wait, when republishing topics, for each topic to have a subscriber before sending.
const SUBSCRIBER_WAIT: Duration = Duration::from_secs(2);

/// `nerve replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The MCAP file recorded by `nerve record`.
    file: PathBuf,
    /// The dataflow to run with recorded data in place of its sources; without it, every
    /// channel of the recording is republished as a topic.
    dataflow: Option<PathBuf>,
    /// Recorded time is divided by this: 2 replays twice as fast; 0 as fast as the readers
    /// take the messages.
    #[arg(long, default_value_t = 1.0, value_name = "X")]
    speed: f64,
    /// Start again from the first message after the last, until Ctrl-C.
    #[arg(long = "loop")]
    looped: bool,
    /// Nodes to replace by the recording [default: every node whose inputs are all timers and
    /// whose outputs are all recorded].
    #[arg(long, num_args = 1.., value_name = "NODE")]
    replace: Vec<String>,
    /// Keep the wall clock: by default the run's clock is the recording's time, which the
    /// replayers set as they send (timers and `now()` of every node follow it). The opposite
    /// of `--sim-time`, which a replay has anyway.
    #[arg(long, conflicts_with = "sim_time")]
    real_time: bool,
    #[command(flatten)]
    run: RunFlags,
}

/// `nerve replay-node`: sends the recorded outputs of the node it stands in for.
#[derive(Debug, clap::Args)]
pub struct ReplayNodeArgs {
    /// The MCAP file.
    #[arg(long)]
    file: PathBuf,
    /// As `nerve replay --speed`.
    #[arg(long, default_value_t = 1.0)]
    speed: f64,
    /// As `nerve replay --loop`.
    #[arg(long = "loop")]
    looped: bool,
}

fn pace(speed: f64, looped: bool) -> anyhow::Result<Pace> {
    if !speed.is_finite() || speed < 0.0 {
        anyhow::bail!("--speed must be a number ≥ 0 (0: as fast as possible), not {speed}");
    }
    Ok(Pace { speed, looped })
}

/// Runs `nerve replay`.
pub fn run(args: &ReplayArgs) -> anyhow::Result<i32> {
    let pace = pace(args.speed, args.looped)?;
    let file = std::path::absolute(&args.file).with_context(|| format!("resolving {}", args.file.display()))?;
    let recording = Recording::open(&file)?;
    let channels = recording.channels()?;
    let Some(dataflow) = &args.dataflow else {
        if !args.replace.is_empty() {
            anyhow::bail!("--replace needs a dataflow: nerve replay FILE.mcap DATAFLOW.yml --replace NODE ...");
        }
        return republish(&recording, &channels, pace);
    };
    let mut df = load(dataflow)?;
    let replaced = if args.replace.is_empty() {
        sources_in(&df, &channels, &file)?
    } else {
        args.replace
            .iter()
            .map(|id| check_replaceable(&df, id, &channels, &file).map(|()| id.clone()))
            .collect::<anyhow::Result<_>>()?
    };
    let mut node_args = vec!["replay-node".to_owned(), "--file".to_owned(), file.display().to_string()];
    node_args.extend(["--speed".to_owned(), args.speed.to_string()]);
    if args.looped {
        node_args.push("--loop".to_owned());
    }
    let (path, node_args) = nerve_itself(&node_args)?;
    for node in df.nodes.iter_mut().filter(|n| replaced.contains(&n.id)) {
        stand_in(node, &path, &node_args);
    }
    eprintln!("nerve: replaying {} from {}", replaced.iter().cloned().collect::<Vec<_>>().join(", "), file.display());
    let mut flags = args.run.clone();
    flags.sim_time |= !args.real_time;
    // The replay ends with the recording: a node ticked by a timer would otherwise keep it
    // running (and, on the recording's time, waiting for ticks that never come).
    crate::run(&df, &flags, replaced.into_iter().collect())
}

/// The node, now the replayer of its own recorded outputs: same id and outputs, no inputs.
fn stand_in(node: &mut NodeSpec, path: &nerve_spec::NodePath, args: &[String]) {
    node.path = path.clone();
    node.args = args.to_vec();
    node.inputs.clear();
    node.build = None;
    node.restart = nerve_spec::RestartSpec::default();
}

/// The recorded channels of `node`'s outputs that are missing from `channels`.
fn missing(node: &NodeSpec, channels: &BTreeSet<String>) -> Vec<String> {
    node.outputs.iter().map(|o| output_channel(&node.id, o)).filter(|c| !channels.contains(c)).collect()
}

fn listed(channels: &BTreeSet<String>) -> String {
    if channels.is_empty() { "none".to_owned() } else { channels.iter().cloned().collect::<Vec<_>>().join(", ") }
}

/// Whether `--replace id` can be honoured: a node of `df` with outputs, all recorded.
fn check_replaceable(df: &Dataflow, id: &str, channels: &BTreeSet<String>, file: &Path) -> anyhow::Result<()> {
    let Some(node) = df.node(id) else {
        let known: Vec<&str> = df.nodes.iter().map(|n| n.id.as_str()).collect();
        anyhow::bail!("--replace {id}: {} has no node `{id}` (its nodes: {})", df.file.display(), known.join(", "));
    };
    if node.outputs.is_empty() {
        anyhow::bail!("--replace {id}: node `{id}` has no outputs, so there is nothing to replay in its place");
    }
    let missing = missing(node, channels);
    if !missing.is_empty() {
        anyhow::bail!(
            "--replace {id}: {} has no channel for {} (its channels: {})",
            file.display(),
            missing.join(", "),
            listed(channels)
        );
    }
    Ok(())
}

/// The source nodes of `df` (inputs all timers, at least one output) whose outputs are all
/// recorded, or an error saying what is missing.
fn sources_in(df: &Dataflow, channels: &BTreeSet<String>, file: &Path) -> anyhow::Result<BTreeSet<String>> {
    let sources: Vec<&NodeSpec> = df
        .nodes
        .iter()
        .filter(|n| !n.outputs.is_empty() && n.inputs.iter().all(|i| matches!(i.source, InputSource::Timer { .. })))
        .collect();
    let replaced: BTreeSet<String> =
        sources.iter().filter(|n| missing(n, channels).is_empty()).map(|n| n.id.clone()).collect();
    if replaced.is_empty() {
        let why: Vec<String> =
            sources.iter().map(|n| format!("{} (missing {})", n.id, missing(n, channels).join(", "))).collect();
        anyhow::bail!(
            "{} does not match {}: no source node has all its outputs recorded (source nodes: {}; recorded channels: {}); name nodes with --replace",
            file.display(),
            df.file.display(),
            if why.is_empty() { "none".to_owned() } else { why.join("; ") },
            listed(channels)
        );
    }
    Ok(replaced)
}

/// Runs a replayer node: its outputs' recorded messages, paced, then its outputs closed.
pub fn node(args: &ReplayNodeArgs) -> anyhow::Result<i32> {
    let pace = pace(args.speed, args.looped)?;
    let recording = Recording::open(&args.file)?;
    let (node, _events) = Node::init_from_env().context("the replayer cannot join the dataflow")?;
    let outputs: Vec<&str> = node.outputs().collect();
    let channels: BTreeSet<String> = outputs.iter().map(|o| output_channel(node.id(), o)).collect();
    let messages = recording.messages(&channels)?;
    let prefix = format!("{}/", node.id());
    let clock = node.clock();
    let mut last = 0;
    let sent = replay(&messages, pace, &|| node.stop_requested(), |m: &Recorded<'_>| {
        if clock.is_simulated() {
            // Several replayers set the time: it only moves forward, except when a loop starts
            // the recording again.
            if m.log_time < last || m.log_time > clock.now_ns() {
                clock.set_sim_time(m.log_time)?;
            }
            last = m.log_time;
        }
        let (data, parameters) = m.decode()?;
        let output = m.channel.strip_prefix(&prefix).unwrap_or(m.channel);
        node.send_output(output, &parameters, data.as_ref())?;
        anyhow::Ok(())
    })?;
    tracing::info!(node = node.id(), sent, "replayed");
    node.close_outputs(&outputs)?;
    Ok(0)
}

/// Republishes every channel of `recording` as a topic (a dataflow output `<node>/<output>` on
/// that name, this host only, as a running dataflow shows it), paced, until done or Ctrl-C.
fn republish(recording: &Recording, channels: &BTreeSet<String>, pace: Pace) -> anyhow::Result<i32> {
    let stop = StopSignal::install()?;
    let publishers = channels
        .iter()
        .map(|c| {
            let topic = channel_topic(c);
            let scope = if topic.len() == c.len() { Scope::Host } else { Scope::Network };
            Publisher::new(topic, PublisherOptions { scope, ..Default::default() })
                .map(|p| (c.as_str(), p))
                .with_context(|| format!("cannot publish topic `{topic}`"))
        })
        .collect::<anyhow::Result<std::collections::BTreeMap<_, _>>>()?;
    let messages = recording.messages(channels)?;
    // Subscribers link to a new publisher within milliseconds; messages sent before would be lost.
    let deadline = Instant::now() + SUBSCRIBER_WAIT;
    while publishers.values().any(|p| !p.has_subscribers()) && Instant::now() < deadline && !stop.raised() {
        std::thread::sleep(Duration::from_millis(10));
    }
    eprintln!("nerve: republishing {} from {} (Ctrl-C to stop)", listed(channels), recording.path().display());
    let sent = replay(&messages, pace, &|| stop.raised(), |m| {
        let (data, parameters) = m.decode()?;
        if let Some(publisher) = publishers.get(m.channel) {
            publisher.send(&data, &parameters)?;
        }
        anyhow::Ok(())
    })?;
    eprintln!("nerve: republished {sent} message(s)");
    Ok(0)
}

//! `nerve record`: a dataflow's outputs and topics into an MCAP file, and the recorder node
//! (`nerve record-node`, hidden) that the runtime starts for it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::Context;
use nerve_node::{Event, Node};
use nerve_record::{DROPS_METADATA, Recording, RecordingWriter, WriteError, now_ns, output_channel, topic_channel};
use nerve_shm::sync::{lock, recover};
use nerve_spec::{Dataflow, InputSource, InputSpec, NodeSpec, QueuePolicy};
use nerve_topic::{Message, SubscriberOptions};
use nerve_types::{Kind, PortKind, PortType, Registry, TypeName};

use crate::topic::{StopSignal, subscribe};
use crate::{RunFlags, load, nerve_itself, secs};

/// Id of the node `nerve record` adds to the dataflow.
pub const RECORDER_ID: &str = "nerve-recorder";

/// How long a topic recorder's receive waits before it looks at Ctrl-C and the clock again.
const POLL: Duration = Duration::from_millis(100);

/// `nerve record`.
#[derive(Debug, clap::Args)]
pub struct RecordArgs {
    /// The MCAP file to write (replaced if it exists).
    file: PathBuf,
    /// The dataflow to run and record; without it, only `--topics` are recorded, until Ctrl-C
    /// or `--duration`.
    dataflow: Option<PathBuf>,
    /// Outputs to record, as NODE/OUTPUT [default: every output of the dataflow].
    #[arg(long, num_args = 1.., value_name = "NODE/OUTPUT")]
    outputs: Vec<String>,
    /// Topics to record (any process's publications on them).
    #[arg(long, num_args = 1.., value_name = "TOPIC")]
    topics: Vec<String>,
    /// Seconds to record topics for (without a dataflow) [default: until Ctrl-C].
    #[arg(long, value_name = "SECS")]
    duration: Option<f64>,
    /// Messages each recorded output or topic may queue while the disk is busy; past it the
    /// oldest are dropped (counted and reported), so a slow disk never slows the dataflow.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    queue_size: usize,
    /// How the file's chunks are compressed: none (a replay reads messages in place, without a
    /// copy), zstd (the smallest files), lz4 (the fastest to write).
    #[arg(long, value_enum, default_value_t = Compression::None)]
    compression: Compression,
    #[command(flatten)]
    split: SplitFlags,
    #[command(flatten)]
    run: RunFlags,
}

/// Splitting a long recording into files (`run_0.mcap`, `run_1.mcap`, … for `run.mcap`;
/// `nerve replay run.mcap` reads them as one).
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct SplitFlags {
    /// Goes on in a new file once one holds about this many MiB of messages.
    #[arg(long, value_name = "MIB")]
    split_size: Option<u64>,
    /// Goes on in a new file once one spans this many seconds.
    #[arg(long, value_name = "SECS")]
    split_duration: Option<f64>,
}

impl SplitFlags {
    fn split(self) -> anyhow::Result<nerve_record::Split> {
        if self.split_size == Some(0) {
            anyhow::bail!("--split-size must be at least 1 (MiB)");
        }
        Ok(nerve_record::Split {
            bytes: self.split_size.map(|mib| mib.saturating_mul(1024 * 1024)),
            duration: self.split_duration.map(|d| secs(d, "split-duration")).transpose()?,
        })
    }

    /// The arguments that pass these flags on to the recorder node.
    fn args(self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(mib) = self.split_size {
            args.extend(["--split-size".to_owned(), mib.to_string()]);
        }
        if let Some(d) = self.split_duration {
            args.extend(["--split-duration".to_owned(), d.to_string()]);
        }
        args
    }
}

/// `--compression`: the chunk compressions of MCAP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Compression {
    /// Uncompressed.
    None,
    /// Zstandard.
    Zstd,
    /// LZ4.
    Lz4,
}

impl From<Compression> for nerve_record::Compression {
    fn from(c: Compression) -> Self {
        match c {
            Compression::None => Self::None,
            Compression::Zstd => Self::Zstd,
            Compression::Lz4 => Self::Lz4,
        }
    }
}

/// `nerve record-node`: the recorder inside a dataflow. Its inputs' ids are the channels.
#[derive(Debug, clap::Args)]
pub struct RecordNodeArgs {
    /// The MCAP file to write.
    #[arg(long)]
    file: PathBuf,
    /// The dataflow file, stored in the recording.
    #[arg(long)]
    dataflow: Option<PathBuf>,
    /// A channel declared with a ROS 2 message type, recorded as CDR.
    #[arg(long, value_name = "CHANNEL=TYPE")]
    typed: Vec<String>,
    /// How the file's chunks are compressed.
    #[arg(long, value_enum, default_value_t = Compression::None)]
    compression: Compression,
    #[command(flatten)]
    split: SplitFlags,
}

/// Runs `nerve record`.
pub fn run(args: &RecordArgs) -> anyhow::Result<i32> {
    if args.queue_size == 0 || args.queue_size > nerve_spec::MAX_QUEUE_SIZE {
        anyhow::bail!("--queue-size must be between 1 and {}", nerve_spec::MAX_QUEUE_SIZE);
    }
    let topics = args
        .topics
        .iter()
        .map(|t| nerve_topic::name::canonical(t).map_err(anyhow::Error::from))
        .collect::<anyhow::Result<Vec<String>>>()?;
    let file = std::path::absolute(&args.file).with_context(|| format!("resolving {}", args.file.display()))?;
    let split = args.split.split()?;
    // Fails now, not once the dataflow runs, when the file cannot be written.
    let first = if split.bytes.is_some() || split.duration.is_some() {
        nerve_record::part_path(&file, 0)
    } else {
        file.clone()
    };
    std::fs::File::create(&first).with_context(|| format!("cannot create the recording {}", first.display()))?;
    let Some(dataflow) = &args.dataflow else {
        if !args.outputs.is_empty() {
            anyhow::bail!("--outputs needs a dataflow to record: nerve record FILE.mcap DATAFLOW.yml --outputs ...");
        }
        if topics.is_empty() {
            anyhow::bail!("nothing to record: give a dataflow, or --topics without one");
        }
        let duration = args.duration.map(|d| secs(d, "duration")).transpose()?;
        record_topics(&file, &topics, duration, args.queue_size, args.compression, split)?;
        return report(&file);
    };
    if args.duration.is_some() {
        anyhow::bail!(
            "--duration is for recording topics without a dataflow; stop a dataflow with Ctrl-C or `nerve stop`"
        );
    }
    let mut df = load(dataflow)?;
    let recorder = recorder_node(&df, &file, &args.outputs, &topics, args.queue_size, args.compression, args.split)?;
    df.nodes.push(recorder);
    let code = crate::run(&df, &args.run, Vec::new())?;
    match report(&file) {
        Ok(reported) => Ok(code.max(reported)),
        // The run's own failure (reported above) is the news, not the file it left unfinished.
        Err(e) if code != 0 => {
            eprintln!("error: no complete recording: {e:#}");
            Ok(code)
        }
        Err(e) => Err(e),
    }
}

/// The recorder node for `df`: one `drop_oldest` input per recorded output (`outputs`, or every
/// output) and topic, whose id is its channel.
fn recorder_node(
    df: &Dataflow,
    file: &Path,
    outputs: &[String],
    topics: &[String],
    queue_size: usize,
    compression: Compression,
    split: SplitFlags,
) -> anyhow::Result<NodeSpec> {
    if df.node(RECORDER_ID).is_some() {
        anyhow::bail!("the dataflow already has a node `{RECORDER_ID}`, the id `nerve record` gives its recorder");
    }
    let all: Vec<(String, String)> =
        df.nodes.iter().flat_map(|n| n.outputs.iter().map(|o| (n.id.clone(), o.clone()))).collect();
    let chosen = if outputs.is_empty() {
        all
    } else {
        outputs.iter().map(|o| find_output(df, o)).collect::<anyhow::Result<_>>()?
    };
    let mut inputs = Vec::new();
    let mut typed = Vec::new();
    for (node, output) in chosen {
        if df.readers_of(&node, &output).len() >= nerve_spec::MAX_READERS_PER_OUTPUT {
            anyhow::bail!(
                "cannot record {node}/{output}: it already has {} readers, the most an output can have",
                nerve_spec::MAX_READERS_PER_OUTPUT
            );
        }
        let id = output_channel(&node, &output);
        if let Some(name) = df.node(&node).and_then(|n| message_type(n.output_types.get(&output)?)) {
            typed.extend(["--typed".to_owned(), format!("{id}={name}")]);
        }
        inputs.push(InputSpec {
            id,
            source: InputSource::Output { node, output },
            queue_size,
            policy: QueuePolicy::DropOldest,
            timeout: None,
            line: 0,
        });
    }
    for topic in topics {
        inputs.push(InputSpec {
            id: topic_channel(topic),
            source: InputSource::Topic { topic: topic.clone() },
            queue_size,
            policy: QueuePolicy::DropOldest,
            timeout: None,
            line: 0,
        });
    }
    if inputs.is_empty() {
        anyhow::bail!("nothing to record: {} has no outputs, and no --topics were given", df.file.display());
    }
    let mut args = vec!["record-node".to_owned(), "--file".to_owned(), file.display().to_string()];
    let yaml = std::path::absolute(&df.file).unwrap_or_else(|_| df.file.clone());
    args.extend(["--dataflow".to_owned(), yaml.display().to_string()]);
    args.extend(typed);
    if compression != Compression::None {
        let name = clap::ValueEnum::to_possible_value(&compression).map(|v| v.get_name().to_owned());
        args.extend(["--compression".to_owned(), name.unwrap_or_default()]);
    }
    args.extend(split.args());
    let (path, args) = nerve_itself(&args)?;
    Ok(NodeSpec {
        name: Some("recorder".to_owned()),
        description: Some(format!("records to {}", file.display())),
        args,
        inputs,
        ..NodeSpec::new(RECORDER_ID, path)
    })
}

/// The ROS 2 message a port's declared type stands for, if it is one (`ros2 bag` records
/// messages, not the parts of services and actions, nor dora-rs types without one).
fn message_type(declared: &str) -> Option<TypeName> {
    match PortType::parse(declared).ok()?.kind {
        PortKind::Message(t) if t.kind == Kind::Msg => Some(t),
        _ => None,
    }
}

/// `node/output` of `df`, or an error naming the outputs there are.
pub fn find_output(df: &Dataflow, wanted: &str) -> anyhow::Result<(String, String)> {
    if let Some((node, output)) = wanted.split_once('/')
        && df.node(node).is_some_and(|n| n.outputs.iter().any(|o| o == output))
    {
        return Ok((node.to_owned(), output.to_owned()));
    }
    let known: Vec<String> = df.nodes.iter().flat_map(|n| n.outputs.iter().map(|o| output_channel(&n.id, o))).collect();
    anyhow::bail!(
        "{} has no output `{wanted}` (its outputs: {})",
        df.file.display(),
        if known.is_empty() { "none".to_owned() } else { known.join(", ") }
    )
}

/// Runs the recorder node: every message of its inputs into the file, until the dataflow ends
/// or stops; then the drop counts of its queues, and the summary.
pub fn node(args: &RecordNodeArgs) -> anyhow::Result<i32> {
    let (_node, mut events) = Node::init_from_env().context("the recorder cannot join the dataflow")?;
    let mut writer = RecordingWriter::create_split(&args.file, args.compression.into(), args.split.split()?)?;
    if let Some(dataflow) = &args.dataflow {
        let yaml = std::fs::read_to_string(dataflow).with_context(|| format!("reading {}", dataflow.display()))?;
        writer.write_dataflow(dataflow, &yaml)?;
    }
    for (channel, _) in events.dropped() {
        writer.declare(&channel);
    }
    // The runtime gave this node the dataflow's `types:` folders (NERVE_TYPES_PATH).
    let registry = Registry::new(&[]);
    for typed in &args.typed {
        let (channel, name) = typed.split_once('=').with_context(|| format!("--typed {typed}: not CHANNEL=TYPE"))?;
        let declared = TypeName::parse(name)
            .map_err(anyhow::Error::from)
            .and_then(|t| writer.declare_type(channel, &registry, &t).map_err(anyhow::Error::from));
        if let Err(e) = declared {
            tracing::warn!("{e:#}; its messages are recorded as Arrow IPC");
        }
    }
    let mut stopped = false;
    loop {
        // After a stop, what already reached the queues is still written.
        let event = if stopped { events.next_queued() } else { events.recv() };
        match event {
            Some(Event::Input(Message { id, metadata, data, .. })) => {
                let written = writer.write(&id, &metadata, data.as_ref(), now_ns());
                keep(&mut writer, &id, written)?;
            }
            Some(Event::Stop) => stopped = true,
            Some(Event::Error(e)) => tracing::error!("{e}"),
            Some(Event::InputClosed { .. } | Event::InputRecovered { .. }) => {}
            None => break,
        }
    }
    for (channel, n) in events.dropped() {
        writer.count_dropped(&channel, n);
    }
    writer.finish()?;
    Ok(0)
}

/// Counts a message that could not be encoded as dropped (logged) and goes on; any other
/// error ends the recording.
fn keep(writer: &mut RecordingWriter, channel: &str, written: Result<(), WriteError>) -> anyhow::Result<()> {
    match written {
        Ok(()) => Ok(()),
        Err(e @ WriteError::Encode { .. }) => {
            tracing::error!("{e}; the message is counted as dropped");
            writer.count_dropped(channel, 1);
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}

/// Records `topics` from this process until Ctrl-C or `duration`: a thread per topic receives
/// and writes; a topic whose messages come faster than the disk takes them drops its oldest.
fn record_topics(
    file: &Path,
    topics: &[String],
    duration: Option<Duration>,
    queue_size: usize,
    compression: Compression,
    split: nerve_record::Split,
) -> anyhow::Result<()> {
    let stop = StopSignal::install()?;
    let subscribers = topics
        .iter()
        .map(|t| subscribe(t, SubscriberOptions { queue_size, ..Default::default() }))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let writer = Mutex::new(RecordingWriter::create_split(file, compression.into(), split)?);
    for t in topics {
        lock(&writer).declare(&topic_channel(t));
    }
    let until = duration.map(|d| Instant::now() + d);
    let done = || stop.raised() || until.is_some_and(|u| Instant::now() >= u);
    eprintln!("nerve: recording {} to {} (Ctrl-C to stop)", topics.join(", "), file.display());
    std::thread::scope(|scope| {
        let handles: Vec<_> = topics
            .iter()
            .zip(&subscribers)
            .map(|(topic, sub)| {
                let (writer, done) = (&writer, &done);
                scope.spawn(move || -> anyhow::Result<()> {
                    let channel = topic_channel(topic);
                    let mut stopping = false;
                    loop {
                        // Once stopping, what already reached the queue is still written.
                        stopping = stopping || done();
                        let received = if stopping { sub.try_recv() } else { sub.recv(Some(POLL)) };
                        let message = match received {
                            Ok(Some(m)) => m,
                            Ok(None) if stopping => break,
                            Ok(None) => continue,
                            Err(e) => {
                                tracing::error!(topic, "{e}; the message is counted as dropped");
                                lock(writer).count_dropped(&channel, 1);
                                continue;
                            }
                        };
                        if message.object.is_some() {
                            // Objects are handed over only within one process, never to this one.
                            continue;
                        }
                        let mut w = lock(writer);
                        let written = w.write(&channel, &message.metadata, message.data.as_ref(), now_ns());
                        keep(&mut w, &channel, written)?;
                    }
                    lock(writer).count_dropped(&channel, sub.dropped());
                    Ok(())
                })
            })
            .collect();
        handles.into_iter().try_for_each(|h| h.join().map_err(|_| anyhow::anyhow!("a topic recorder panicked"))?)
    })?;
    // A topic thread that panicked leaves a writer that can still be finished.
    recover(writer.into_inner()).finish()?;
    Ok(())
}

/// Prints what the recording holds per channel (messages, and those dropped) from the file
/// itself; returns 1 when messages were dropped, 0 otherwise.
fn report(file: &Path) -> anyhow::Result<i32> {
    let recording = Recording::open(file)?;
    let counts = recording.message_counts()?;
    let drops = recording.metadata(DROPS_METADATA)?.ok_or_else(|| {
        anyhow::anyhow!("{} has no `{DROPS_METADATA}` record: the recorder did not finish", file.display())
    })?;
    let channels: BTreeSet<&String> = counts.keys().chain(drops.keys()).collect();
    let mut dropped_any = false;
    for channel in channels {
        let dropped: u64 = drops.get(channel).and_then(|d| d.parse().ok()).unwrap_or(0);
        dropped_any |= dropped > 0;
        let written = counts.get(channel).copied().unwrap_or(0);
        eprintln!("nerve: recorded {channel}: {written} message(s), {dropped} dropped");
    }
    eprintln!("nerve: recording written to {}", file.display());
    if dropped_any {
        eprintln!(
            "error: messages were dropped: the disk did not keep up (see above; also in the file's `{DROPS_METADATA}` metadata)"
        );
    }
    Ok(i32::from(dropped_any))
}

//! `nerve topic`: look at the topics of this host (`list`, `echo`, `hz`, `bw`) and publish on
//! one by hand (`pub`), like `ros2 topic`.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use clap::Subcommand;
use nerve_topic::arrow_array::Array;
use nerve_topic::registry::{Entry, Kind};
use nerve_topic::{Message, Publisher, PublisherOptions, Subscriber, SubscriberOptions};

use crate::{RunFlag, print_columns, run_cell, secs, values};

/// Arguments of `nerve topic`.
#[derive(Debug, clap::Args)]
pub struct TopicArgs {
    #[command(subcommand)]
    command: TopicCommand,
}

#[derive(Debug, Subcommand)]
enum TopicCommand {
    /// List the topics that have live publishers or subscribers.
    List {
        /// Domain to look in.
        #[arg(long, default_value_t = 0, value_name = "N")]
        domain: u32,
        /// Also show the publishers and subscribers of each topic, with their pids.
        #[arg(long, short)]
        verbose: bool,
    },
    /// Print a topic's messages until --count, --timeout or Ctrl-C.
    Echo(EchoArgs),
    /// Print a topic's message rate once per second.
    Hz(MeterArgs),
    /// Print a topic's bandwidth once per second.
    Bw(MeterArgs),
    /// Publish values on a topic: once, --count times, or at --rate until Ctrl-C.
    Pub(PubArgs),
}

#[derive(Debug, clap::Args)]
struct PubArgs {
    /// The topic.
    topic: String,
    /// The values, as a JSON list (`[1, 2]`, `["a"]`) or a single JSON value.
    data: String,
    /// Arrow type of the values (`Int64`, `Float32`, `Utf8`, `Boolean`…) [default: from the JSON].
    #[arg(long = "type", value_name = "TYPE")]
    data_type: Option<String>,
    /// The message's metadata, as a JSON object.
    #[arg(long, value_name = "JSON")]
    metadata: Option<String>,
    /// Messages per second [default: one message, unless --count asks for more].
    #[arg(long, value_name = "HZ")]
    rate: Option<f64>,
    /// Exit after this many messages [default: 1 without --rate, else until Ctrl-C].
    #[arg(long, value_name = "N", value_parser = at_least::<1>)]
    count: Option<u64>,
    /// Seconds to wait for a first subscriber before sending: a message sent to nobody is lost,
    /// and if every one was, the command says so and exits with 1.
    #[arg(long, default_value_t = 2.0, value_name = "SECS")]
    wait: f64,
    /// Domain of the topic.
    #[arg(long, default_value_t = 0, value_name = "N")]
    domain: u32,
    #[command(flatten)]
    run: RunFlag,
}

#[derive(Debug, clap::Args)]
struct EchoArgs {
    /// The topic.
    topic: String,
    /// Domain of the topic.
    #[arg(long, default_value_t = 0, value_name = "N")]
    domain: u32,
    #[command(flatten)]
    run: RunFlag,
    /// Exit after this many messages.
    #[arg(long, value_name = "N", value_parser = at_least::<1>)]
    count: Option<u64>,
    /// Fail after this many seconds without a message.
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
}

#[derive(Debug, clap::Args)]
struct MeterArgs {
    /// The topic.
    topic: String,
    /// Domain of the topic.
    #[arg(long, default_value_t = 0, value_name = "N")]
    domain: u32,
    #[command(flatten)]
    run: RunFlag,
    /// Number of latest messages the statistics cover.
    #[arg(long, default_value_t = 100, value_name = "N", value_parser = at_least::<2>)]
    window: u64,
    /// Stop after this many seconds [default: run until Ctrl-C].
    #[arg(long, value_name = "SECS")]
    duration: Option<f64>,
}

/// A whole number of at least `MIN` (clap's own range check would print `u64::MAX` as the top).
fn at_least<const MIN: u64>(arg: &str) -> Result<u64, String> {
    match arg.parse::<u64>() {
        Ok(n) if n >= MIN => Ok(n),
        _ => Err(format!("expected a whole number of at least {MIN}")),
    }
}

/// Runs `nerve topic ...`; returns the exit code.
pub fn run(args: &TopicArgs) -> anyhow::Result<i32> {
    match &args.command {
        TopicCommand::List { domain, verbose } => list(*domain, *verbose),
        TopicCommand::Echo(args) => echo(args),
        TopicCommand::Hz(args) => meter(args, Hz::new(args.window)),
        TopicCommand::Bw(args) => meter(args, Bw::new(args.window)),
        TopicCommand::Pub(args) => publish(args),
    }
}

/// How long a receive waits before the loop looks at Ctrl-C and the clock again.
const POLL: Duration = Duration::from_millis(100);

/// Values `echo` shows of one array; the rest is elided.
const SHOWN_VALUES: usize = 16;

/// Messages `hz` and `bw` can fall behind by before any is lost (not undercounted).
const METER_QUEUE: usize = 1000;

/// Set by Ctrl-C (SIGINT) or SIGTERM; the handlers are removed when dropped, since the Python
/// package runs the command inside an interpreter that lives on.
pub(crate) struct StopSignal {
    raised: Arc<AtomicBool>,
    ids: Vec<signal_hook::SigId>,
}

impl StopSignal {
    pub(crate) fn install() -> anyhow::Result<Self> {
        let raised = Arc::new(AtomicBool::new(false));
        let mut stop = Self { raised: raised.clone(), ids: Vec::new() };
        for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            let id = signal_hook::flag::register(signal, raised.clone()).context("installing signal handlers")?;
            stop.ids.push(id);
        }
        Ok(stop)
    }

    pub(crate) fn raised(&self) -> bool {
        self.raised.load(Ordering::SeqCst)
    }

    /// Returns once Ctrl-C (or SIGTERM) came, looking every 100 ms.
    pub(crate) fn wait(&self) {
        while !self.raised() {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    /// The flag the signals set.
    pub(crate) fn flag(&self) -> &AtomicBool {
        &self.raised
    }
}

impl Drop for StopSignal {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// Whether to go on writing: a closed pipe (`nerve topic echo t | head`) ends the command
/// quietly, as it does for other command-line tools.
pub(crate) fn keep_writing(written: std::io::Result<()>) -> anyhow::Result<bool> {
    match written {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(e).context("writing to standard output"),
    }
}

fn publish(args: &PubArgs) -> anyhow::Result<i32> {
    let data = values::json_array(&args.data, args.data_type.as_deref())?;
    let params = values::json_metadata(args.metadata.as_deref())?;
    let period = match args.rate {
        Some(hz) if hz.is_finite() && hz > 0.0 => Some(Duration::from_secs_f64(1.0 / hz)),
        Some(_) => anyhow::bail!("--rate must be a positive number of messages per second"),
        None => None,
    };
    let count = args.count.or(if period.is_some() { None } else { Some(1) });
    let options = PublisherOptions { domain: args.domain, run: args.run.scope(), ..Default::default() };
    let publisher =
        Publisher::new(&args.topic, options).with_context(|| format!("cannot publish on topic `{}`", args.topic))?;
    let stop = StopSignal::install()?;
    // Subscribers are found asynchronously: give them a moment to be seen. The wait wakes as
    // one links, and looks for Ctrl-C between short waits.
    let wait = secs(args.wait, "wait")?;
    let deadline = Instant::now() + wait;
    while !stop.raised() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || publisher.wait_for_subscribers(1, left.min(POLL)) {
            break;
        }
    }
    let mut next = Instant::now();
    let (mut sent, mut undelivered) = (0u64, 0u64);
    while count.is_none_or(|c| sent < c) && !stop.raised() {
        // A topic keeps no history: what is sent while nobody subscribes is lost.
        if publisher.subscriber_count() == 0 {
            undelivered += 1;
        }
        publisher.send(&data, &params).with_context(|| format!("sending on topic `{}`", publisher.topic()))?;
        sent += 1;
        if let Some(period) = period {
            next += period;
            // Sleeps in short steps so Ctrl-C is seen at once even at a low rate.
            while Instant::now() < next && !stop.raised() {
                std::thread::sleep((next - Instant::now()).min(POLL));
            }
        }
    }
    let topic = publisher.topic();
    if sent > 0 && undelivered == sent {
        eprintln!(
            "nerve: nothing was delivered: `{topic}` had no subscriber (waited {wait:?} for one; `--wait SECS` waits longer)"
        );
        return Ok(1);
    }
    if undelivered > 0 {
        eprintln!(
            "nerve: sent {sent} message(s) on `{topic}`; {undelivered} of them found no subscriber and were lost"
        );
    } else {
        eprintln!("nerve: sent {sent} message(s) on `{topic}`");
    }
    Ok(0)
}

/// Waits up to `wait` until `publisher` reaches a subscriber (or Ctrl-C): subscribers are found
/// asynchronously, so even one that exists already takes a moment to be seen.
pub(crate) fn subscribe(topic: &str, options: SubscriberOptions) -> anyhow::Result<Subscriber> {
    Subscriber::new(topic, options).with_context(|| format!("cannot subscribe to topic `{topic}`"))
}

fn list(domain: u32, verbose: bool) -> anyhow::Result<i32> {
    let mut out = std::io::stdout().lock();
    let topics = nerve_topic::registry::topics(domain);
    if topics.is_empty() {
        // On standard error: standard output stays empty, for scripts.
        eprintln!("nerve: no topics in domain {domain} on this host");
        return Ok(0);
    }
    let rows: Vec<Vec<String>> = topics
        .iter()
        .map(|(key, entries)| {
            let (run, topic) = nerve_topic::run_scope::split_key(key);
            let mut row = vec![topic.to_owned(), run_cell(run)];
            if verbose {
                row.push(format!("{}, {}", endpoints(entries, Kind::Pub), endpoints(entries, Kind::Sub)));
            }
            row
        })
        .collect();
    let header: &[&str] = if verbose { &["TOPIC", "RUN", "ENDPOINTS"] } else { &["TOPIC", "RUN"] };
    keep_writing(print_columns(&mut out, header, &rows))?;
    Ok(0)
}

/// "2 publishers (pids 12, 40)": endpoints are counted, a process with several shown once.
fn endpoints(entries: &[Entry], kind: Kind) -> String {
    let mut pids: Vec<u32> = entries.iter().filter(|e| e.kind == kind).map(|e| e.pid).collect();
    let count = pids.len();
    pids.sort_unstable();
    pids.dedup();
    let noun = match kind {
        Kind::Pub => "publisher",
        Kind::Sub => "subscriber",
    };
    let plural = if count == 1 { "" } else { "s" };
    if pids.is_empty() {
        return format!("0 {noun}s");
    }
    let pid_word = if pids.len() == 1 { "pid" } else { "pids" };
    let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
    // A publisher another middleware's bridge runs says where its messages come from.
    let origins: std::collections::BTreeSet<&str> =
        entries.iter().filter(|e| e.kind == kind).filter_map(|e| e.origin.as_deref()).collect();
    let from: String = origins.iter().map(|o| format!("; from {o}")).collect();
    format!("{count} {noun}{plural} ({pid_word} {}{from})", pids.join(", "))
}

fn echo(args: &EchoArgs) -> anyhow::Result<i32> {
    let timeout = args.timeout.map(|t| secs(t, "timeout")).transpose()?;
    let stop = StopSignal::install()?;
    let sub =
        subscribe(&args.topic, SubscriberOptions { domain: args.domain, run: args.run.scope(), ..Default::default() })?;
    let mut out = std::io::stdout().lock();
    let mut received = 0;
    let mut last = Instant::now();
    while args.count.is_none_or(|count| received < count) && !stop.raised() {
        let message = match sub.recv(Some(POLL)) {
            Ok(Some(message)) => message,
            Ok(None) => {
                if let Some(timeout) = timeout
                    && last.elapsed() >= timeout
                {
                    anyhow::bail!("no message on topic `{}` for {} s", sub.topic(), timeout.as_secs_f64());
                }
                continue;
            }
            Err(e) => {
                // The subscriber skips the bad message; the next ones may be fine.
                tracing::warn!(topic = sub.topic(), error = %e, "message skipped");
                continue;
            }
        };
        received += 1;
        last = Instant::now();
        if !keep_writing(out.write_all(describe(&message).as_bytes()).and_then(|()| out.flush()))? {
            break;
        }
    }
    Ok(0)
}

/// One message as `echo` prints it, YAML-like, ending with a `---` line.
pub(crate) fn describe(message: &Message) -> String {
    let metadata = &message.metadata;
    let parameters = serde_json::Value::Object(metadata.parameters.clone());
    let mut text = format!("timestamp: {}\nparameters: {parameters}\n", metadata.timestamp);
    if message.object.is_some() {
        // Objects only travel between endpoints of one process, never to this command.
        text.push_str("value: <object>\n");
    } else {
        let array = &message.data;
        if let Some(extension) = &metadata.extension {
            let _ = writeln!(text, "extension: {} {}", extension.name, extension.metadata);
        }
        let _ =
            write!(text, "type: {}\nlength: {}\nvalues: {}\n", array.data_type(), array.len(), values(array.as_ref()));
    }
    text.push_str("---\n");
    text
}

/// `[1, 2, 3]`, or the first [`SHOWN_VALUES`] values and `…` for a longer array.
fn values(array: &dyn Array) -> String {
    let options = FormatOptions::new().with_null("null").with_quoted_strings(true);
    let formatter = match ArrayFormatter::try_new(array, &options) {
        Ok(formatter) => formatter,
        Err(e) => return format!("<cannot display: {e}>"),
    };
    let mut text = String::from("[");
    for i in 0..array.len().min(SHOWN_VALUES) {
        if i > 0 {
            text.push_str(", ");
        }
        if let Err(e) = formatter.value(i).write(&mut text) {
            let _ = write!(text, "<cannot display: {e}>");
        }
    }
    if array.len() > SHOWN_VALUES {
        text.push_str(", …");
    }
    text.push(']');
    text
}

/// Statistics that `hz` and `bw` keep over a window of messages and print once per second.
trait Meter {
    fn add(&mut self, message: &Message);
    /// Writes the statistics of the window (nothing before there is anything to say).
    fn report(&mut self, out: &mut dyn Write) -> std::io::Result<()>;
    /// Messages added so far.
    fn total(&self) -> u64;
}

fn meter(args: &MeterArgs, mut meter: impl Meter) -> anyhow::Result<i32> {
    let duration = args.duration.map(|d| secs(d, "duration")).transpose()?;
    let stop = StopSignal::install()?;
    let options = SubscriberOptions {
        domain: args.domain,
        queue_size: METER_QUEUE,
        keep_latest: false,
        run: args.run.scope(),
        ..Default::default()
    };
    let sub = subscribe(&args.topic, options)?;
    let mut out = std::io::stdout().lock();
    let start = Instant::now();
    let end = duration.map(|d| start + d);
    let mut reports = 1;
    let mut next_report = start + Duration::from_secs(1);
    while !stop.raised() {
        let now = Instant::now();
        if now >= next_report {
            if !keep_writing(meter.report(&mut out).and_then(|()| out.flush()))? {
                break;
            }
            reports += 1;
            // Counted from the start rather than from now, so reports do not drift.
            next_report = start + Duration::from_secs(reports);
        }
        if end.is_some_and(|end| now >= end) {
            break;
        }
        let wake = end.map_or(next_report, |end| end.min(next_report));
        match sub.recv(Some(wake.saturating_duration_since(now).min(POLL))) {
            Ok(Some(message)) => meter.add(&message),
            Ok(None) => {}
            Err(e) => tracing::warn!(topic = sub.topic(), error = %e, "message skipped"),
        }
    }
    if meter.total() == 0 {
        eprintln!("nerve: no message on topic `{}`", sub.topic());
    }
    let dropped = sub.dropped();
    if dropped > 0 {
        eprintln!("nerve: {dropped} messages were lost because this command fell behind; the figures are low");
    }
    Ok(0)
}

/// Message rate from the send timestamps of the latest messages: the publishers' rate, not
/// distorted when this command picks up messages in bursts.
struct Hz {
    window: usize,
    stamps: VecDeque<u64>,
    total: u64,
    reported: u64,
}

impl Hz {
    fn new(window: u64) -> Self {
        let window = usize::try_from(window).unwrap_or(usize::MAX);
        Self { window, stamps: VecDeque::new(), total: 0, reported: 0 }
    }
}

impl Meter for Hz {
    fn add(&mut self, message: &Message) {
        if self.stamps.len() == self.window {
            self.stamps.pop_front();
        }
        self.stamps.push_back(message.metadata.timestamp);
        self.total += 1;
    }

    fn report(&mut self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.total == self.reported {
            // Before the first message there is nothing to report, not even that nothing came.
            return if self.total == 0 { Ok(()) } else { writeln!(out, "no new messages") };
        }
        // Two publishers' stamps may interleave out of order by a hair: such a period counts as 0.
        let periods: Vec<f64> = self
            .stamps
            .iter()
            .zip(self.stamps.iter().skip(1))
            .map(|(a, b)| nanos_to_secs(b.saturating_sub(*a)))
            .collect();
        if periods.is_empty() {
            return Ok(());
        }
        self.reported = self.total;
        let stats = Stats::of(&periods);
        if stats.mean <= 0.0 {
            return writeln!(out, "average rate: inf (all {} messages sent at once)", self.stamps.len());
        }
        writeln!(out, "average rate: {:.3}", 1.0 / stats.mean)?;
        writeln!(
            out,
            "\tmin: {:.3}s max: {:.3}s std dev: {:.5}s window: {}",
            stats.min,
            stats.max,
            stats.std_dev,
            self.stamps.len()
        )
    }

    fn total(&self) -> u64 {
        self.total
    }
}

/// Bandwidth: the bytes of the latest messages' data over the time they were sent in.
struct Bw {
    window: usize,
    /// Send timestamp and size of each message of the window.
    sizes: VecDeque<(u64, usize)>,
    total: u64,
    reported: u64,
}

impl Bw {
    fn new(window: u64) -> Self {
        let window = usize::try_from(window).unwrap_or(usize::MAX);
        Self { window, sizes: VecDeque::new(), total: 0, reported: 0 }
    }
}

/// Bytes of a message's data: what its buffers hold for the array's values (offset and
/// length applied), not the capacity of the memory they sit in.
fn message_size(message: &Message) -> usize {
    let array = &message.data;
    array.to_data().get_slice_memory_size().unwrap_or_else(|_| array.get_buffer_memory_size())
}

impl Meter for Bw {
    fn add(&mut self, message: &Message) {
        if self.sizes.len() == self.window {
            self.sizes.pop_front();
        }
        self.sizes.push_back((message.metadata.timestamp, message_size(message)));
        self.total += 1;
    }

    fn report(&mut self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.total == self.reported {
            return if self.total == 0 { Ok(()) } else { writeln!(out, "no new messages") };
        }
        let (Some(&(first, _)), Some(&(last, _))) = (self.sizes.front(), self.sizes.back()) else {
            return Ok(());
        };
        if self.sizes.len() < 2 {
            return Ok(());
        }
        self.reported = self.total;
        let sizes: Vec<f64> = self.sizes.iter().map(|&(_, size)| size as f64).collect();
        let stats = Stats::of(&sizes);
        // The first message of the window marks when the span starts; its bytes came before it.
        let span = nanos_to_secs(last.saturating_sub(first));
        let rate =
            if span > 0.0 { format!("{}/s", bytes(sizes[1..].iter().sum::<f64>() / span)) } else { "inf".into() };
        writeln!(out, "{rate} from {} messages", self.sizes.len())?;
        writeln!(out, "\tMessage size mean: {} min: {} max: {}", bytes(stats.mean), bytes(stats.min), bytes(stats.max))
    }

    fn total(&self) -> u64 {
        self.total
    }
}

/// Mean, extremes and (population) standard deviation of a non-empty sample.
struct Stats {
    mean: f64,
    min: f64,
    max: f64,
    std_dev: f64,
}

impl Stats {
    fn of(sample: &[f64]) -> Self {
        let n = sample.len().max(1) as f64;
        let mean = sample.iter().sum::<f64>() / n;
        let variance = sample.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
        Self {
            mean,
            min: sample.iter().copied().fold(f64::INFINITY, f64::min),
            max: sample.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            std_dev: variance.sqrt(),
        }
    }
}

fn nanos_to_secs(nanos: u64) -> f64 {
    nanos as f64 / 1e9
}

/// `512 B`, `1.50 KB`, `2.25 MB`, `1.00 GB` (decimal units, as `ros2 topic bw`).
fn bytes(n: f64) -> String {
    if n < 1e3 {
        format!("{n:.0} B")
    } else if n < 1e6 {
        format!("{:.2} KB", n / 1e3)
    } else if n < 1e9 {
        format!("{:.2} MB", n / 1e6)
    } else {
        format!("{:.2} GB", n / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use nerve_topic::arrow_array::{ArrayRef, StringArray, UInt32Array};
    use nerve_topic::{Metadata, Parameters};

    use super::*;

    fn message(timestamp: u64, array: ArrayRef) -> Message {
        let mut parameters = Parameters::new();
        parameters.insert("i".into(), serde_json::json!(7));
        Message::new(Arc::<str>::from("t").into(), Metadata { timestamp, parameters, extension: None }, array)
    }

    #[test]
    fn echo_shows_type_length_and_at_most_sixteen_values() {
        let short = describe(&message(5, Arc::new(UInt32Array::from(vec![1, 2, 3]))));
        assert_eq!(short, "timestamp: 5\nparameters: {\"i\":7}\ntype: UInt32\nlength: 3\nvalues: [1, 2, 3]\n---\n");
        let long = describe(&message(5, Arc::new(UInt32Array::from((0..40).collect::<Vec<u32>>()))));
        assert!(
            long.contains("length: 40\nvalues: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, …]\n"),
            "{long}"
        );
        let strings = describe(&message(5, Arc::new(StringArray::from(vec![Some("a"), None]))));
        assert!(strings.contains("type: Utf8\nlength: 2\nvalues: [\"a\", null]\n"), "{strings}");
        let mut tensor = message(5, Arc::new(UInt32Array::from(vec![1, 2])));
        tensor.metadata.extension = Some(Arc::new(nerve_topic::Extension::fixed_shape_tensor(&[1, 2])));
        let tensor = describe(&tensor);
        assert!(tensor.contains("extension: arrow.fixed_shape_tensor {\"shape\":[1,2]}\ntype: UInt32\n"), "{tensor}");
    }

    #[test]
    fn hz_reports_the_rate_of_send_timestamps() {
        let mut hz = Hz::new(3);
        for i in 0..10 {
            hz.add(&message(i * 20_000_000, Arc::new(UInt32Array::from(vec![1]))));
        }
        let mut out = Vec::new();
        assert!(hz.report(&mut out).is_ok());
        assert!(hz.report(&mut out).is_ok());
        let out = String::from_utf8_lossy(&out);
        assert_eq!(
            out,
            "average rate: 50.000\n\tmin: 0.020s max: 0.020s std dev: 0.00000s window: 3\nno new messages\n"
        );
    }

    #[test]
    fn bw_counts_the_bytes_of_the_values() {
        let mut bw = Bw::new(100);
        for i in 0..11 {
            bw.add(&message(i * 100_000_000, Arc::new(UInt32Array::from(vec![0; 250]))));
        }
        let mut out = Vec::new();
        assert!(bw.report(&mut out).is_ok());
        assert_eq!(
            String::from_utf8_lossy(&out),
            "10.00 KB/s from 11 messages\n\tMessage size mean: 1.00 KB min: 1.00 KB max: 1.00 KB\n"
        );
    }

    #[test]
    fn counts_and_windows_refuse_too_small_numbers() {
        assert_eq!(at_least::<2>("2"), Ok(2));
        assert_eq!(at_least::<2>("1"), Err("expected a whole number of at least 2".to_owned()));
        assert!(at_least::<1>("-3").is_err());
    }

    #[test]
    fn verbose_list_counts_endpoints_and_names_processes_once() {
        let entry = |kind, pid, id| Entry {
            kind,
            pid,
            id,
            scope: nerve_topic::Scope::Network,
            socket: std::path::PathBuf::new(),
            origin: None,
        };
        let entries = [entry(Kind::Pub, 9, 1), entry(Kind::Pub, 9, 2), entry(Kind::Sub, 4, 1)];
        assert_eq!(endpoints(&entries, Kind::Pub), "2 publishers (pid 9)");
        let bridged = Entry { origin: Some("ROS 2 std_msgs/msg/String".to_owned()), ..entry(Kind::Pub, 7, 1) };
        assert_eq!(endpoints(&[bridged], Kind::Pub), "1 publisher (pid 7; from ROS 2 std_msgs/msg/String)");
        assert_eq!(endpoints(&entries, Kind::Sub), "1 subscriber (pid 4)");
        assert_eq!(endpoints(&entries[..2], Kind::Sub), "0 subscribers");
    }
}

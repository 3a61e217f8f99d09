//! `nerve list`, `nerve stop` and `nerve logs`: the dataflows running on this host (under
//! `nerve run`), and those of the cluster whose coordinator answers.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use nerve_cluster::Cluster;
use nerve_runtime::RuntimeError;
use nerve_runtime::inspect::{self, RunStatus};
use nerve_spec::logs::LogLevel;

use crate::cluster::NetArgs;

/// `nerve list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Print the status as JSON (one array of runs) instead of a table.
    #[arg(long)]
    json: bool,
    /// Also list the cluster's dataflows that ended.
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    net: NetArgs,
}

/// `nerve stop`.
#[derive(Debug, clap::Args)]
pub struct StopArgs {
    /// The dataflow's name (`--name`) or run id (a unique prefix is enough).
    dataflow: String,
    /// Seconds to wait for the run to end before giving up waiting.
    #[arg(long, default_value_t = 30.0, value_name = "SECS")]
    wait: f64,
    #[command(flatten)]
    net: NetArgs,
}

/// `nerve logs`.
#[derive(Debug, clap::Args)]
pub struct LogsArgs {
    /// The dataflow's name (`--name`) or run id (a unique prefix is enough); a run that ended
    /// on this host is found too.
    dataflow: String,
    /// The node whose output to print.
    node: String,
    /// Keep printing what the node writes until the dataflow ends.
    #[arg(long, short)]
    follow: bool,
    /// Only the records at this level and above (`error`, `warn`, `info`, `debug`, `trace`);
    /// `stdout`, the default, prints the lines the node printed too.
    #[arg(long, default_value = "stdout", value_parser = log_level)]
    level: LogLevel,
    /// Only what was logged at or after this time: a duration back from now (`10m`, `1h 30m`,
    /// `90s`) or a time (`2026-11-28T15:20:00Z`; without a zone, UTC).
    #[arg(long, value_name = "WHEN", value_parser = since)]
    since: Option<SystemTime>,
    /// Show when each line was logged (UTC, to the millisecond), as the log file keeps it.
    #[arg(long, short)]
    timestamps: bool,
    #[command(flatten)]
    net: NetArgs,
}

impl LogsArgs {
    /// Prints the log's lines these arguments ask for.
    fn printer(&self) -> LinePrinter {
        LinePrinter {
            filter: LineFilter { level: self.level, since: self.since, timestamps: self.timestamps },
            pending: Vec::new(),
        }
    }
}

fn since(text: &str) -> Result<SystemTime, String> {
    if let Ok(ago) = humantime::parse_duration(text) {
        return SystemTime::now().checked_sub(ago).ok_or_else(|| format!("`{text}` reaches back before 1970"));
    }
    humantime::parse_rfc3339_weak(text)
        .map_err(|_| format!("`{text}` is neither a duration (`10m`, `1h 30m`) nor a time (`2026-11-28T15:20:00Z`)"))
}

fn log_level(text: &str) -> Result<LogLevel, String> {
    LogLevel::parse(text).ok_or_else(|| format!("`{text}` is not one of stdout, trace, debug, info, warn, error"))
}

/// The coordinator, if one answers; an error only when the user named one.
pub(crate) fn cluster(net: &NetArgs) -> anyhow::Result<Option<Cluster>> {
    match net.connect() {
        Ok(cluster) => Ok(Some(cluster)),
        Err(e) if net.named() => Err(e),
        Err(_) => Ok(None),
    }
}

/// The coordinator and the uuid of its dataflow `which` (a name, or a uuid or a prefix of
/// one), if a coordinator answers and knows exactly one such dataflow; `running`: only among
/// those still running. A dataflow of the cluster is then handled through its coordinator,
/// not through its machines' runs (one of which may be on this host).
pub(crate) fn on_cluster(net: &NetArgs, which: &str, running: bool) -> anyhow::Result<Option<(Cluster, String)>> {
    let Some(cluster) = cluster(net)? else { return Ok(None) };
    let dataflows = cluster.list()?;
    let candidates: Vec<&nerve_cluster::protocol::DataflowStatus> =
        dataflows.iter().filter(|d| !(running && d.state.is_over())).collect();
    let by_name: Vec<&&nerve_cluster::protocol::DataflowStatus> =
        candidates.iter().filter(|d| d.name.as_deref() == Some(which)).collect();
    let chosen: Vec<String> = if by_name.is_empty() {
        candidates.iter().filter(|d| !which.is_empty() && d.uuid.starts_with(which)).map(|d| d.uuid.clone()).collect()
    } else {
        // The newest of that name.
        by_name.last().map(|d| d.uuid.clone()).into_iter().collect()
    };
    Ok(match chosen.as_slice() {
        [uuid] => Some((cluster, uuid.clone())),
        _ => None,
    })
}

/// Prints every running dataflow with its nodes' states, restarts and queues.
pub fn list(args: &ListArgs) -> anyhow::Result<i32> {
    let mut runs = inspect::running();
    if let Some(cluster) = cluster(&args.net)? {
        let dataflows = cluster.list()?;
        // A machine's part of a cluster's dataflow is also a run of this host: shown once.
        runs.retain(|r| !dataflows.iter().any(|d| r.run_id.starts_with(&d.uuid)));
        runs.extend(
            dataflows.iter().filter(|d| args.all || !d.state.is_over()).map(|d| d.to_run_status(cluster.endpoint())),
        );
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &runs)?;
        writeln!(out)?;
        return Ok(0);
    }
    if runs.is_empty() {
        writeln!(out, "no dataflow is running")?;
    }
    for run in &runs {
        write!(out, "{}", table(run))?;
    }
    Ok(0)
}

/// How `nerve list` heads a run and `nerve node info` names a node's run, the same way in
/// both: `name (run id): state, dataflow file`.
pub(crate) fn headline(run: &RunStatus) -> String {
    format!("{}: {}, {}", inspect::label(run), run.state.as_str(), run.dataflow.display())
}

fn table(run: &RunStatus) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}", headline(run));
    if let Some(coordinator) = &run.coordinator {
        let _ = writeln!(s, "  on the cluster of {coordinator}");
    }
    if let Some(error) = &run.error {
        let _ = writeln!(s, "  error: {error}");
    }
    let _ = writeln!(s, "  logs: {}", run.log_dir.display());
    // The machine column, for a dataflow of a cluster.
    let machine =
        |m: Option<&str>| run.coordinator.as_ref().map(|_| format!("{:<14} ", m.unwrap_or("-"))).unwrap_or_default();
    let _ = writeln!(
        s,
        "  {}{:<20} {:<28} {:>8} {:>8}  inputs (queued/size, dropped)",
        machine(Some("machine")),
        "node",
        "state",
        "pid",
        "restarts"
    );
    for n in &run.nodes {
        let pid = n.pid.map_or_else(|| "-".to_owned(), |p| p.to_string());
        let inputs: Vec<String> =
            n.inputs.iter().map(|i| format!("{} {}/{}, {} dropped", i.id, i.queued, i.capacity, i.dropped)).collect();
        let inputs = if inputs.is_empty() { "-".to_owned() } else { inputs.join("; ") };
        let _ = writeln!(
            s,
            "  {}{:<20} {:<28} {:>8} {:>8}  {inputs}",
            machine(n.machine.as_deref()),
            n.id,
            n.state,
            pid,
            n.restarts
        );
    }
    s
}

/// Stops a running dataflow as Ctrl-C would, and waits for it to end.
pub fn stop(args: &StopArgs) -> anyhow::Result<i32> {
    let deadline = Instant::now() + Duration::from_secs_f64(args.wait.max(0.0));
    if let Some((cluster, uuid)) = on_cluster(&args.net, &args.dataflow, true)? {
        return stop_on_cluster(&cluster, &uuid, deadline, args.wait);
    }
    let run = inspect::find(&args.dataflow)?;
    inspect::stop(&run).with_context(|| format!("stopping {}", inspect::label(&run)))?;
    while inspect::is_running(&run) {
        if Instant::now() >= deadline {
            eprintln!("nerve: {} is still stopping after {}s", inspect::label(&run), args.wait);
            return Ok(1);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!("nerve: stopped {}", inspect::label(&run));
    Ok(0)
}

fn stop_on_cluster(cluster: &Cluster, dataflow: &str, deadline: Instant, wait: f64) -> anyhow::Result<i32> {
    let status = cluster.stop(dataflow)?;
    let label = status.label();
    loop {
        let now = cluster.list()?.into_iter().find(|d| d.uuid == status.uuid);
        if now.as_ref().is_none_or(|d| d.state.is_over()) {
            // Whatever else went wrong (a machine lost) is said, but the stop did what it could.
            match now.and_then(|d| d.error) {
                Some(error) => eprintln!("nerve: stopped {label}; {error}"),
                None => eprintln!("nerve: stopped {label}"),
            }
            return Ok(0);
        }
        if Instant::now() >= deadline {
            eprintln!("nerve: {label} is still stopping after {wait}s");
            return Ok(1);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Prints a node's log, and with `--follow` what it writes next until the run ends.
pub fn logs(args: &LogsArgs) -> anyhow::Result<i32> {
    if let Some((cluster, uuid)) = on_cluster(&args.net, &args.dataflow, false)? {
        return logs_on_cluster(&cluster, &uuid, args);
    }
    let file_name = format!("{}.log", args.node);
    let (path, run) = match inspect::find_node(&args.node, Some(&args.dataflow)) {
        Ok((run, _)) => (run.log_dir.join(&file_name), Some(run)),
        // A run that ended is found by the record it left as it started.
        Err(RuntimeError::NoSuchRun { .. }) => {
            let record = inspect::find_recorded(&args.dataflow)?;
            let path = record.log_dir.join(&file_name);
            if !path.exists() {
                anyhow::bail!(
                    "{} has ended and left no log of node `{}` in {} (logs there: {})",
                    record.label(),
                    args.node,
                    record.log_dir.display(),
                    logged_nodes(&record.log_dir)
                );
            }
            (path, None)
        }
        Err(e) => return Err(e.into()),
    };
    let open = || std::fs::File::open(&path).with_context(|| format!("opening {}", path.display()));
    let mut out = std::io::stdout().lock();
    let mut printer = args.printer();
    // What `max_log_size` rotated away comes first, the oldest first.
    for older in rotated_away(&path) {
        let text = std::fs::read(&older).with_context(|| format!("reading {}", older.display()))?;
        printer.feed(&mut out, &text)?;
    }
    let mut file = open()?;
    let mut buf = Vec::new();
    loop {
        // Whether the run was still going *before* this read, so its last lines are not missed.
        let running = args.follow && run.as_ref().is_some_and(inspect::is_running);
        buf.clear();
        file.read_to_end(&mut buf)?;
        printer.feed(&mut out, &buf)?;
        // Rotated (`max_log_size`): what was read is now `<node>.log.1`, and a new file
        // goes on.
        if args.follow && rotated(&file, &path) {
            file = open()?;
            continue;
        }
        if !running {
            printer.finish(&mut out)?;
            return Ok(0);
        }
        // A log file is only ever appended to: the next read goes on from where this one ended.
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The rotated files of log `path` (`<path>.1` the newest), the oldest first.
fn rotated_away(path: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut older: Vec<std::path::PathBuf> =
        (1..).map(|n| std::path::PathBuf::from(format!("{}.{n}", path.display()))).take_while(|p| p.exists()).collect();
    older.reverse();
    older
}

/// Whether `path` is no longer the file `file` reads.
fn rotated(file: &std::fs::File, path: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(now)) => open.ino() != now.ino() || open.dev() != now.dev(),
        _ => false,
    }
}

/// Which lines of a log `nerve logs` prints, and whether with their time.
#[derive(Debug, Clone, Copy)]
struct LineFilter {
    level: LogLevel,
    since: Option<SystemTime>,
    timestamps: bool,
}

impl LineFilter {
    /// The lines of `text` to print: a record at `level` or above (its line starts with its
    /// level, `WARN ...`, after the time) or, at level `stdout`, any line the node printed;
    /// with `since`, only those logged then or later.
    fn apply(self, text: &[u8]) -> Vec<u8> {
        let mut kept = Vec::with_capacity(text.len());
        for line in text.split_inclusive(|b| *b == b'\n') {
            let (time, rest) = nerve_runtime::unstamp(line);
            let recent = match (self.since, time) {
                (Some(since), Some(time)) => time >= since,
                // A line with no time comes from before nerve stamped them: it cannot be placed.
                (Some(_), None) => false,
                (None, _) => true,
            };
            if recent && LogLevel::of_line(rest).unwrap_or(LogLevel::Stdout) >= self.level {
                kept.extend_from_slice(if self.timestamps { line } else { rest });
            }
        }
        kept
    }
}

/// Prints a log read piece by piece: a piece (a chunk from the coordinator, a read racing the
/// node's write) may end within a line, whose time and level are known once it is whole.
struct LinePrinter {
    filter: LineFilter,
    /// The start of a line whose end has not been read yet.
    pending: Vec<u8>,
}

impl LinePrinter {
    /// Prints the whole lines `piece` ends, keeping the rest for the next piece.
    fn feed(&mut self, out: &mut impl Write, piece: &[u8]) -> std::io::Result<()> {
        self.pending.extend_from_slice(piece);
        let whole = self.pending.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        out.write_all(&self.filter.apply(&self.pending[..whole]))?;
        self.pending.drain(..whole);
        out.flush()
    }

    /// Prints what is left once the log has ended: a last line without its newline.
    fn finish(self, out: &mut impl Write) -> std::io::Result<()> {
        out.write_all(&self.filter.apply(&self.pending))?;
        out.flush()
    }
}

/// The nodes with a log in `dir`, for an error message.
fn logged_nodes(dir: &std::path::Path) -> String {
    let mut nodes: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries.flatten().filter_map(|e| e.file_name().to_str()?.strip_suffix(".log").map(str::to_owned)).collect()
        })
        .unwrap_or_default();
    nodes.sort();
    if nodes.is_empty() { "none".to_owned() } else { nodes.join(", ") }
}

/// A node's log read on its machine through the coordinator, piece by piece.
fn logs_on_cluster(cluster: &Cluster, uuid: &str, args: &LogsArgs) -> anyhow::Result<i32> {
    let mut out = std::io::stdout().lock();
    let mut offset = 0;
    let mut printer = args.printer();
    loop {
        let chunk = cluster.logs(uuid, &args.node, offset)?;
        printer.feed(&mut out, chunk.text.as_bytes())?;
        let more = chunk.next_offset > offset;
        offset = chunk.next_offset;
        if more {
            continue;
        }
        if !(args.follow && chunk.running) {
            printer.finish(&mut out)?;
            return Ok(0);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_and_a_time_keep_the_lines_at_and_after_them() {
        let log = b"2026-11-28T15:00:00.000Z printed\n2026-11-28T15:00:01.000Z WARN t: hot\n\
2026-11-28T15:00:02.000Z INFO root: reading\n2026-11-28T15:00:03.000Z ERROR broke\n\
2026-11-28T15:00:04.000Z WARNING is printed text\n";
        let filter = |level, since: Option<&str>, timestamps| {
            let since = since.map(|t| humantime::parse_rfc3339(t).expect("a time"));
            String::from_utf8(LineFilter { level, since, timestamps }.apply(log)).expect("utf-8")
        };
        assert_eq!(filter(LogLevel::Stdout, None, true).as_bytes(), log);
        assert_eq!(
            filter(LogLevel::Stdout, None, false),
            "printed\nWARN t: hot\nINFO root: reading\nERROR broke\nWARNING is printed text\n"
        );
        assert_eq!(filter(LogLevel::Warn, None, false), "WARN t: hot\nERROR broke\n");
        assert_eq!(filter(LogLevel::Info, Some("2026-11-28T15:00:02Z"), false), "INFO root: reading\nERROR broke\n");
        assert_eq!(filter(LogLevel::Stdout, Some("2026-11-28T15:00:03.500Z"), true).lines().count(), 1);
    }

    #[test]
    fn a_line_split_between_reads_is_printed_whole_once() {
        let mut printer = LinePrinter {
            filter: LineFilter { level: LogLevel::Warn, since: None, timestamps: false },
            pending: Vec::new(),
        };
        let mut out = Vec::new();
        printer.feed(&mut out, b"2026-11-28T15:00:00.000Z INFO a\n2026-11-28T15:").expect("write");
        printer.feed(&mut out, b"00:01.000Z WARN b\n2026-11-28T15:00:02.000Z ERROR c").expect("write");
        assert_eq!(out, b"WARN b\n");
        printer.finish(&mut out).expect("write");
        assert_eq!(out, b"WARN b\nERROR c");
    }

    #[test]
    fn since_is_a_duration_back_or_a_time() {
        let ago = since("10m").expect("a duration");
        let elapsed = SystemTime::now().duration_since(ago).expect("in the past");
        assert!(elapsed >= Duration::from_secs(600) && elapsed < Duration::from_secs(3600), "{elapsed:?}");
        assert_eq!(since("2026-11-28 15:20:00"), since("2026-11-28T15:20:00Z"));
        assert!(since("yesterday").expect_err("not a time").contains("neither a duration"));
    }
}

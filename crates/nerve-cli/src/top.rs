//! `nerve top`: the nodes of the dataflows running on this host, refreshing, as `top` shows
//! processes: each node's state, CPU and memory, the messages its inputs receive per second,
//! their drops and how full their queues are.
//!
//! It reads what nerve already keeps: each run's status (the counters of its input queues,
//! asked over the run's control socket) and `/proc` for the nodes' processes. Nothing is
//! subscribed to and no node is slowed down.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use nerve_runtime::inspect::{self, NodeStatus, RunStatus};
use serde_json::json;

use crate::topic::StopSignal;

/// How often a wait between screens looks at Ctrl-C.
const TICK: Duration = Duration::from_millis(50);

/// `nerve top`.
#[derive(Debug, clap::Args)]
pub struct TopArgs {
    /// Only this dataflow: its name (`--name`) or run id (a unique prefix is enough)
    /// [default: every dataflow running on this host].
    dataflow: Option<String>,
    /// Seconds between screens; rates are measured over this interval.
    #[arg(long, default_value_t = 1.0, value_name = "SECS")]
    interval: f64,
    /// Print one screen, measured over one interval, and exit.
    #[arg(long)]
    once: bool,
    /// Print each screen as one line of JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// What one look at a node found, to measure rates against at the next look.
#[derive(Debug, Clone, Copy)]
struct Look {
    at: Instant,
    /// The process the look was of: a restarted node's new process starts its CPU count again.
    pid: Option<u32>,
    cpu_ticks: Option<u64>,
    received: u64,
    dropped: u64,
}

/// One node's line of a screen.
#[derive(Debug)]
struct NodeLine {
    id: String,
    state: String,
    pid: Option<u32>,
    restarts: u32,
    /// Percent of one CPU over the interval (above 100 for a node busy on several cores).
    cpu_percent: Option<f64>,
    memory_bytes: Option<u64>,
    received_per_sec: Option<f64>,
    dropped: u64,
    dropped_per_sec: Option<f64>,
    /// The fullest of its input queues, as (queued, size).
    fullest: Option<(usize, usize)>,
}

/// What `/proc` says of a process: the CPU it used so far, in clock ticks, and its resident
/// memory in bytes; `None` once it is gone.
fn process(pid: u32) -> Option<(u64, u64)> {
    // One read of `stat` gives both: its `rss` is the resident page count `statm` also shows.
    let stat = procfs::process::Process::new(i32::try_from(pid).ok()?).ok()?.stat().ok()?;
    Some((stat.utime + stat.stime, stat.rss * procfs::page_size()))
}

/// Events per second between two counts taken `seconds` apart.
fn per_sec(now: u64, before: u64, seconds: f64) -> f64 {
    now.saturating_sub(before) as f64 / seconds
}

/// The line of `node` now, and what to measure its next line against; `before` is the last
/// look at it, if any.
fn measure(node: &NodeStatus, before: Option<&Look>, now: Instant) -> (NodeLine, Look) {
    let usage = node.pid.and_then(process);
    let received = node.inputs.iter().map(|i| i.received).sum();
    let dropped = node.inputs.iter().map(|i| i.dropped).sum();
    let look = Look { at: now, pid: node.pid, cpu_ticks: usage.map(|u| u.0), received, dropped };
    let seconds = before.map(|b| now.duration_since(b.at).as_secs_f64()).filter(|s| *s > 0.0);
    let (mut cpu_percent, mut received_per_sec, mut dropped_per_sec) = (None, None, None);
    if let (Some(before), Some(seconds)) = (before, seconds) {
        if let (Some(then), Some(ticks), true) = (before.cpu_ticks, look.cpu_ticks, before.pid == look.pid) {
            cpu_percent = Some(per_sec(ticks, then, seconds) / procfs::ticks_per_second() as f64 * 100.0);
        }
        if !node.inputs.is_empty() {
            received_per_sec = Some(per_sec(received, before.received, seconds));
            dropped_per_sec = Some(per_sec(dropped, before.dropped, seconds));
        }
    }
    let line = NodeLine {
        id: node.id.clone(),
        state: node.state.clone(),
        pid: node.pid,
        restarts: node.restarts,
        cpu_percent,
        memory_bytes: usage.map(|u| u.1),
        received_per_sec,
        dropped,
        dropped_per_sec,
        fullest: node.inputs.iter().map(|i| (i.queued, i.capacity)).max_by(|a, b| fill(*a).total_cmp(&fill(*b))),
    };
    (line, look)
}

fn fill((queued, capacity): (usize, usize)) -> f64 {
    queued as f64 / capacity.max(1) as f64
}

/// The runs to show: the one asked for, or every run of this host.
fn runs(dataflow: Option<&str>) -> anyhow::Result<Vec<RunStatus>> {
    Ok(match dataflow {
        Some(name) => vec![inspect::find(name)?],
        None => inspect::running(),
    })
}

/// `nerve top`.
pub fn top(args: &TopArgs) -> anyhow::Result<i32> {
    anyhow::ensure!(
        args.interval.is_finite() && args.interval > 0.0,
        "--interval must be a positive number of seconds, not {}",
        args.interval
    );
    let interval = Duration::from_secs_f64(args.interval);
    let stop = StopSignal::install()?;
    let clear = !args.json && !args.once && std::io::stdout().is_terminal();
    let mut looks: HashMap<(String, String), Look> = HashMap::new();
    let mut first = true;
    loop {
        let runs = match runs(args.dataflow.as_deref()) {
            Ok(runs) => runs,
            // The dataflow watched has ended: the watch is over, as `top -p` ends.
            Err(e) if !first => {
                eprintln!("nerve: {e}");
                return Ok(0);
            }
            Err(e) => return Err(e),
        };
        let now = Instant::now();
        let mut next = HashMap::new();
        let mut screen = Vec::new();
        for run in &runs {
            let mut lines = Vec::new();
            for node in &run.nodes {
                let key = (run.run_id.clone(), node.id.clone());
                let (line, look) = measure(node, looks.get(&key), now);
                next.insert(key, look);
                lines.push(line);
            }
            screen.push((run, lines));
        }
        looks = next;
        // With --once the first look is only what the rates are measured from.
        if !(args.once && first) {
            let text = if args.json { format!("{}\n", json_screen(&screen)) } else { table(&screen) };
            let mut out = std::io::stdout().lock();
            if clear {
                // Home and clear, as `top` and `watch` redraw.
                write!(out, "\x1b[H\x1b[2J")?;
            }
            out.write_all(text.as_bytes())?;
            out.flush()?;
            if args.once {
                return Ok(0);
            }
        }
        first = false;
        let until = Instant::now() + interval;
        while Instant::now() < until {
            if stop.raised() {
                return Ok(0);
            }
            std::thread::sleep(TICK.min(until.saturating_duration_since(Instant::now())));
        }
    }
}

fn json_screen(screen: &[(&RunStatus, Vec<NodeLine>)]) -> serde_json::Value {
    let runs: Vec<_> = screen
        .iter()
        .map(|(run, lines)| {
            let nodes: Vec<_> = lines
                .iter()
                .map(|n| {
                    json!({
                        "id": n.id,
                        "state": n.state,
                        "pid": n.pid,
                        "restarts": n.restarts,
                        "cpu_percent": n.cpu_percent,
                        "memory_bytes": n.memory_bytes,
                        "received_per_sec": n.received_per_sec,
                        "dropped": n.dropped,
                        "dropped_per_sec": n.dropped_per_sec,
                        "queued": n.fullest.map(|f| f.0),
                        "queue_size": n.fullest.map(|f| f.1),
                    })
                })
                .collect();
            json!({
                "run_id": run.run_id,
                "name": run.name,
                "dataflow": run.dataflow,
                "state": run.state.as_str(),
                "nodes": nodes,
            })
        })
        .collect();
    json!({ "runs": runs })
}

fn table(screen: &[(&RunStatus, Vec<NodeLine>)]) -> String {
    let mut s = String::new();
    if screen.is_empty() {
        s.push_str("no dataflow is running\n");
    }
    let dash = || "-".to_owned();
    for (run, lines) in screen {
        let _ = writeln!(s, "{}", crate::runs::headline(run));
        let _ = writeln!(
            s,
            "  {:<20} {:<16} {:>8} {:>8} {:>6} {:>10} {:>10} {:>9} {:>9}",
            "node", "state", "pid", "restarts", "cpu%", "memory", "in msg/s", "dropped", "queue"
        );
        for n in lines {
            let memory = n.memory_bytes.map_or_else(dash, |b| format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0)));
            let dropped = match n.dropped_per_sec {
                Some(rate) if rate > 0.0 => format!("{} +{rate:.0}/s", n.dropped),
                _ => n.dropped.to_string(),
            };
            let _ = writeln!(
                s,
                "  {:<20} {:<16} {:>8} {:>8} {:>6} {:>10} {:>10} {:>9} {:>9}",
                n.id,
                n.state,
                n.pid.map_or_else(dash, |p| p.to_string()),
                n.restarts,
                n.cpu_percent.map_or_else(dash, |c| format!("{c:.1}")),
                memory,
                n.received_per_sec.map_or_else(dash, |r| format!("{r:.1}")),
                dropped,
                n.fullest.map_or_else(dash, |(q, c)| format!("{q}/{c}")),
            );
        }
    }
    s
}

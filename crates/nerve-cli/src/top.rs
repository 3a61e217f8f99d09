//! `nerve top`: the nodes of the dataflows running on this host, refreshing, as `top` shows
//! processes: each node's state, CPU and memory, the messages its inputs receive per second,
//! their drops and how full their queues are.
//!
//! It reads what nerve already keeps: each run's status (the counters of its input queues,
//! asked over the run's control socket) and `/proc` for the nodes' processes. Nothing is
//! subscribed to and no node is slowed down.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use nerve_runtime::inspect::{self, RunStatus};
use nerve_view::stats::{NodeStats, Watcher};
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
    let mut watcher = Watcher::default();
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
        let screen: Vec<_> = runs.iter().zip(watcher.look(&runs)).collect();
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

fn json_screen(screen: &[(&RunStatus, Vec<NodeStats>)]) -> serde_json::Value {
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

fn table(screen: &[(&RunStatus, Vec<NodeStats>)]) -> String {
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

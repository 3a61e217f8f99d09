//! `nerve list`, `nerve stop` and `nerve logs`: the dataflows running on this host.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

use anyhow::Context;
use nerve_daemon::inspect::{self, RunStatus};

/// `nerve list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Print the status as JSON (one array of runs) instead of a table.
    #[arg(long)]
    json: bool,
}

/// `nerve stop`.
#[derive(Debug, clap::Args)]
pub struct StopArgs {
    /// The dataflow's name (`nerve run --name`) or run id (a unique prefix is enough).
    dataflow: String,
    /// Seconds to wait for the run to end before giving up waiting.
    #[arg(long, default_value_t = 30.0, value_name = "SECS")]
    wait: f64,
}

/// `nerve logs`.
#[derive(Debug, clap::Args)]
pub struct LogsArgs {
    /// The dataflow's name (`nerve run --name`) or run id (a unique prefix is enough).
    dataflow: String,
    /// The node whose output to print.
    node: String,
    /// Keep printing what the node writes until the dataflow ends.
    #[arg(long, short)]
    follow: bool,
}

/// Prints every running dataflow with its nodes' states, restarts and queues.
pub fn list(args: &ListArgs) -> anyhow::Result<i32> {
    let runs = inspect::running();
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

fn table(run: &RunStatus) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}: {}, {}", inspect::label(run), run.state.as_str(), run.dataflow.display());
    let _ = writeln!(s, "  logs: {}", run.log_dir.display());
    let _ =
        writeln!(s, "  {:<20} {:<28} {:>8} {:>8}  inputs (queued/size, dropped)", "node", "state", "pid", "restarts");
    for n in &run.nodes {
        let pid = n.pid.map_or_else(|| "-".to_owned(), |p| p.to_string());
        let inputs: Vec<String> =
            n.inputs.iter().map(|i| format!("{} {}/{}, {} dropped", i.id, i.queued, i.capacity, i.dropped)).collect();
        let inputs = if inputs.is_empty() { "-".to_owned() } else { inputs.join("; ") };
        let _ = writeln!(s, "  {:<20} {:<28} {:>8} {:>8}  {inputs}", n.id, n.state, pid, n.restarts);
    }
    s
}

/// Stops a running dataflow as Ctrl-C would, and waits for it to end.
pub fn stop(args: &StopArgs) -> anyhow::Result<i32> {
    let run = inspect::find(&args.dataflow)?;
    inspect::stop(&run).with_context(|| format!("stopping {}", inspect::label(&run)))?;
    let deadline = Instant::now() + Duration::from_secs_f64(args.wait.max(0.0));
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

/// Prints a node's log, and with `--follow` what it writes next until the run ends.
pub fn logs(args: &LogsArgs) -> anyhow::Result<i32> {
    let (run, _) = inspect::find_node(&args.node, Some(&args.dataflow))?;
    let path = run.log_dir.join(format!("{}.log", args.node));
    let mut file = std::fs::File::open(&path).with_context(|| format!("opening {}", path.display()))?;
    let mut out = std::io::stdout().lock();
    let mut buf = Vec::new();
    loop {
        // Whether the run was still going *before* this read, so its last lines are not missed.
        let running = args.follow && inspect::is_running(&run);
        buf.clear();
        file.read_to_end(&mut buf)?;
        out.write_all(&buf)?;
        out.flush()?;
        if !running {
            return Ok(0);
        }
        // A log file is only ever appended to: the next read goes on from where this one ended.
        std::thread::sleep(Duration::from_millis(200));
    }
}

//! A node's log tail, from the file its run writes (`<log dir>/<node>.log`).

use std::io::{Read, Seek, SeekFrom};

use nerve_message::run_status::RunStatus;

/// Lines a tail shows unless asked otherwise.
pub(crate) const DEFAULT_LINES: usize = 200;

/// The most lines a tail shows.
pub(crate) const MAX_LINES: usize = 2000;

/// The end of the file read for a tail: long lines show cut, never the whole file read.
const TAIL_BYTES: u64 = 256 * 1024;

/// The last `lines` lines of node `node`'s log in run `run_id`, or why there is none.
pub(crate) fn tail(runs: &[RunStatus], run_id: &str, node: &str, lines: usize) -> Result<String, String> {
    let run = runs.iter().find(|r| r.run_id == run_id).ok_or_else(|| format!("no run `{run_id}` is running"))?;
    // Only a node of the run: the name becomes a path.
    let node = run.nodes.iter().find(|n| n.id == node).ok_or_else(|| format!("run `{run_id}` has no node `{node}`"))?;
    let path = run.log_dir.join(format!("{}.log", node.id));
    let mut file = std::fs::File::open(&path).map_err(|e| match &node.machine {
        Some(machine) => format!("{}: {e} (the log is on machine `{machine}`: `nerve logs` reads it)", path.display()),
        None => format!("{}: {e}", path.display()),
    })?;
    let len = file.metadata().map_err(|e| format!("{}: {e}", path.display()))?.len();
    let start = len.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(start)).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    // A tail that starts mid-file starts mid-line: that first piece is not a line.
    let whole = if start > 0 { text.split_once('\n').map_or("", |(_, rest)| rest) } else { &text };
    let all: Vec<&str> = whole.lines().collect();
    Ok(all[all.len().saturating_sub(lines)..].join("\n"))
}

//! What the runs of this host are doing, measured between two looks: each node's CPU and
//! memory (from `/proc`), and for each of its inputs the messages received and dropped per
//! second, how full its queue is and the delivery latency its reader sampled (from the run's
//! status). `nerve top` prints it; `nerve view` draws it.
//!
//! Everything comes from counters nerve keeps anyway: nothing is subscribed to and no node is
//! slowed down.

use std::collections::HashMap;
use std::time::Instant;

use nerve_message::run_status::{InputStatus, NodeStatus, RunStatus};
use serde::Serialize;

/// One node as a look found it.
#[derive(Debug, Clone, Serialize)]
pub struct NodeStats {
    /// Node id.
    pub id: String,
    /// What it is doing, in the words of `nerve list`.
    pub state: String,
    /// Its current process.
    pub pid: Option<u32>,
    /// Times its `restart:` policy started it again.
    pub restarts: u32,
    /// The machine it runs on, in a dataflow of a cluster.
    pub machine: Option<String>,
    /// Percent of one CPU over the interval (above 100 for a node busy on several cores).
    pub cpu_percent: Option<f64>,
    /// Resident memory.
    pub memory_bytes: Option<u64>,
    /// Messages its inputs received per second, together.
    pub received_per_sec: Option<f64>,
    /// Messages its inputs dropped so far, together.
    pub dropped: u64,
    /// Messages its inputs dropped per second, together.
    pub dropped_per_sec: Option<f64>,
    /// The fullest of its input queues, as (queued, size).
    pub fullest: Option<(usize, usize)>,
    /// Each of its shared-memory inputs.
    pub inputs: Vec<InputStats>,
}

/// One input of a node as a look found it: an edge of the graph.
#[derive(Debug, Clone, Serialize)]
pub struct InputStats {
    /// Input id.
    pub id: String,
    /// The output it reads, `NODE/OUTPUT`.
    pub source: Option<String>,
    /// Messages per second over the interval.
    pub received_per_sec: Option<f64>,
    /// Messages dropped so far because its queue was full.
    pub dropped: u64,
    /// Messages waiting.
    pub queued: usize,
    /// Its queue's size.
    pub capacity: usize,
    /// Mean time from send to take over the interval, in microseconds; the last interval's
    /// while no message was sampled since.
    pub latency_us: Option<f64>,
    /// The largest latency sampled since the run started, in microseconds.
    pub latency_max_us: Option<f64>,
}

/// The counters of one input at a look.
#[derive(Debug, Clone, Copy)]
struct InputLook {
    received: u64,
    latency_sum_ns: u64,
    latency_samples: u64,
    latency_us: Option<f64>,
}

/// The counters of one node at a look, to measure rates against at the next.
#[derive(Debug, Clone)]
struct Look {
    at: Instant,
    /// The process the look was of: a restarted node's new process starts its CPU count again.
    pid: Option<u32>,
    cpu_ticks: Option<u64>,
    received: u64,
    dropped: u64,
    inputs: HashMap<String, InputLook>,
}

/// Looks at runs again and again, measuring each look against the one before.
#[derive(Debug, Default)]
pub struct Watcher {
    looks: HashMap<(String, String), Look>,
}

impl Watcher {
    /// Each node of each of `runs`, measured since the last look (rates are `None` at a node's
    /// first look); nodes no longer in `runs` are forgotten.
    pub fn look(&mut self, runs: &[RunStatus]) -> Vec<Vec<NodeStats>> {
        let now = Instant::now();
        let mut next = HashMap::new();
        let stats = runs
            .iter()
            .map(|run| {
                run.nodes
                    .iter()
                    .map(|node| {
                        let key = (run.run_id.clone(), node.id.clone());
                        let (stats, look) = measure(node, self.looks.get(&key), now);
                        next.insert(key, look);
                        stats
                    })
                    .collect()
            })
            .collect();
        self.looks = next;
        stats
    }
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

fn measure(node: &NodeStatus, before: Option<&Look>, now: Instant) -> (NodeStats, Look) {
    let usage = node.pid.and_then(process);
    let seconds = before.map(|b| now.duration_since(b.at).as_secs_f64()).filter(|s| *s > 0.0);
    let mut inputs = Vec::new();
    let mut input_looks = HashMap::new();
    for input in &node.inputs {
        let then = before.and_then(|b| b.inputs.get(&input.id));
        let (stats, look) = measure_input(input, then, seconds);
        input_looks.insert(input.id.clone(), look);
        inputs.push(stats);
    }
    let received = node.inputs.iter().map(|i| i.received).sum();
    let dropped = node.inputs.iter().map(|i| i.dropped).sum();
    let look = Look { at: now, pid: node.pid, cpu_ticks: usage.map(|u| u.0), received, dropped, inputs: input_looks };
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
    let stats = NodeStats {
        id: node.id.clone(),
        state: node.state.clone(),
        pid: node.pid,
        restarts: node.restarts,
        machine: node.machine.clone(),
        cpu_percent,
        memory_bytes: usage.map(|u| u.1),
        received_per_sec,
        dropped,
        dropped_per_sec,
        fullest: node.inputs.iter().map(|i| (i.queued, i.capacity)).max_by(|a, b| fill(*a).total_cmp(&fill(*b))),
        inputs,
    };
    (stats, look)
}

fn measure_input(input: &InputStatus, before: Option<&InputLook>, seconds: Option<f64>) -> (InputStats, InputLook) {
    let latency_us = match before {
        Some(b) if input.latency_samples > b.latency_samples => {
            let sum = input.latency_sum_ns.wrapping_sub(b.latency_sum_ns);
            Some(sum as f64 / (input.latency_samples - b.latency_samples) as f64 / 1e3)
        }
        Some(b) => b.latency_us,
        // The first look: the mean since the run started.
        None => (input.latency_samples > 0).then(|| input.latency_sum_ns as f64 / input.latency_samples as f64 / 1e3),
    };
    let look = InputLook {
        received: input.received,
        latency_sum_ns: input.latency_sum_ns,
        latency_samples: input.latency_samples,
        latency_us,
    };
    let stats = InputStats {
        id: input.id.clone(),
        source: input.source.clone(),
        received_per_sec: before.zip(seconds).map(|(b, s)| per_sec(input.received, b.received, s)),
        dropped: input.dropped,
        queued: input.queued,
        capacity: input.capacity,
        latency_us,
        latency_max_us: (input.latency_samples > 0).then(|| input.latency_max_ns as f64 / 1e3),
    };
    (stats, look)
}

fn fill((queued, capacity): (usize, usize)) -> f64 {
    queued as f64 / capacity.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(received: u64, latency_sum_ns: u64, latency_samples: u64) -> InputStatus {
        InputStatus {
            id: "in".into(),
            source: Some("a/out".into()),
            queued: 1,
            capacity: 4,
            received,
            latency_sum_ns,
            latency_samples,
            latency_max_ns: 9_000,
            ..InputStatus::default()
        }
    }

    #[test]
    fn an_inputs_latency_is_the_mean_of_the_samples_between_two_looks_and_stays_while_none_come() {
        let (first, look) = measure_input(&input(10, 4_000, 2), None, None);
        assert_eq!((first.latency_us, first.received_per_sec), (Some(2.0), None));
        let (second, look) = measure_input(&input(30, 10_000, 4), Some(&look), Some(2.0));
        assert_eq!((second.latency_us, second.received_per_sec), (Some(3.0), Some(10.0)));
        let (third, _) = measure_input(&input(30, 10_000, 4), Some(&look), Some(1.0));
        assert_eq!((third.latency_us, third.received_per_sec, third.latency_max_us), (Some(3.0), Some(0.0), Some(9.0)));
    }
}

//! The Rust roles of the benchmark suite, mirroring `benches/nodes/dataflow_node.py`.
//!
//! ```text
//! nerve-bench-node producer SIZE COUNT RATE_HZ OUT   # stamp in the first 8 bytes, written in place
//! nerve-bench-node consumer OUT [WARMUP]             # "sent received" lines + OUT.json
//! nerve-bench-node echo
//! nerve-bench-node zenoh-sub … | zenoh-pub …         # no nerve: see `zenoh_pair`
//! ```

use std::io::Write;
use std::time::Duration;

use nerve_node::arrow_array::{Array, UInt8Array};
use nerve_node::{Event, Message, Node, Parameters, monotonic_ns};

mod zenoh_pair;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

fn cpu_ns() -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &raw mut t) };
    u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(t.tv_nsec).unwrap_or(0)
}

/// Sleeps until message `i` is due on a schedule that starts at `start` and sends at `rate_hz`
/// (no drift); at rate 0, not at all.
fn pace(start: u64, rate_hz: f64, i: u64) {
    if rate_hz > 0.0 {
        let due = start + (i as f64 * 1e9 / rate_hz) as u64;
        let now = monotonic_ns();
        if due > now {
            std::thread::sleep(Duration::from_nanos(due - now));
        }
    }
}

fn arg<T: std::str::FromStr>(args: &[String], i: usize, what: &str) -> Result<T> {
    args.get(i).ok_or_else(|| format!("missing {what}"))?.parse().map_err(|_| format!("bad {what}").into())
}

fn producer(args: &[String]) -> Result<()> {
    let (size, count, rate): (usize, u64, f64) = (arg(args, 2, "size")?, arg(args, 3, "count")?, arg(args, 4, "rate")?);
    let out: String = arg(args, 5, "output file")?;
    let (node, _events) = Node::init_from_env()?;
    let params = Parameters::new();
    let start = monotonic_ns() + 50_000_000;
    let first_cpu = cpu_ns();
    for i in 0..count {
        pace(start, rate, i);
        node.send_output_raw("data", &params, size, |buf| {
            buf[..8].copy_from_slice(&monotonic_ns().to_le_bytes());
        })?;
    }
    std::fs::write(out, format!("{{\"cpu_ns\": {}, \"messages\": {count}}}", cpu_ns() - first_cpu))?;
    Ok(())
}

fn consumer(args: &[String]) -> Result<()> {
    let out: String = arg(args, 2, "output file")?;
    // CPU time counts after the first WARMUP messages, as the Python nodes count theirs
    // (benches/model.py): mapping a stream's first blocks is set-up, not the receive path.
    let warmup: usize = if args.len() > 3 { arg(args, 3, "warmup")? } else { 0 };
    let start_after = warmup.max(1);
    let (_node, mut events) = Node::init_from_env()?;
    let mut lines: Vec<(u64, u64)> = Vec::with_capacity(1 << 20);
    let mut cpu_from = None;
    while let Some(event) = events.recv() {
        match event {
            Event::Input(Message { data, .. }) => {
                let bytes = data.as_any().downcast_ref::<UInt8Array>().ok_or("payload is not UInt8")?;
                let mut stamp = [0u8; 8];
                stamp.copy_from_slice(&bytes.values()[..8]);
                lines.push((u64::from_le_bytes(stamp), monotonic_ns()));
                if lines.len() == start_after {
                    cpu_from = Some(cpu_ns());
                }
            }
            Event::Stop => break,
            _ => {}
        }
    }
    // Before writing the samples: the time to write them is not the receive path's.
    let used = cpu_from.map_or(0, |from| cpu_ns() - from);
    let cpu_messages = if cpu_from.is_some() { lines.len() - start_after } else { 0 };
    let seconds = match (lines.first(), lines.last()) {
        (Some(first), Some(last)) => (last.1 - first.1) as f64 / 1e9,
        _ => 0.0,
    };
    let mut f = std::io::BufWriter::new(std::fs::File::create(&out)?);
    for (sent, received) in &lines {
        writeln!(f, "{sent} {received}")?;
    }
    f.flush()?;
    std::fs::write(
        format!("{out}.json"),
        format!(
            "{{\"cpu_ns\": {used}, \"cpu_messages\": {cpu_messages}, \"messages\": {}, \"seconds\": {seconds}}}",
            lines.len()
        ),
    )?;
    Ok(())
}

fn echo() -> Result<()> {
    let (node, mut events) = Node::init_from_env()?;
    while let Some(event) = events.recv() {
        match event {
            Event::Input(Message { metadata, data, .. }) => node.send_output("data", &metadata.parameters, &data)?,
            Event::Stop => break,
            _ => {}
        }
    }
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("producer") => producer(&args),
        Some("consumer") => consumer(&args),
        Some("echo") => echo(),
        Some("zenoh-sub") => zenoh_pair::subscriber(&args),
        Some("zenoh-pub") => zenoh_pair::publisher(&args),
        other => Err(format!("unknown role {other:?} (producer, consumer, echo, zenoh-sub, zenoh-pub)").into()),
    }
}

//! `nerve tf tree|echo`: the transform tree as the listeners of this host see it.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Subcommand;
use nerve_tf::{BufferOptions, EdgeInfo, Stamp, TransformBuffer};

use crate::secs;
use crate::topic::{StopSignal, keep_writing};

/// `nerve tf`.
#[derive(Debug, clap::Args)]
pub struct TfArgs {
    #[command(subcommand)]
    command: TfCommand,
}

#[derive(Debug, Subcommand)]
enum TfCommand {
    /// Listen for a while, then print every frame under its parent: static or moving, the
    /// moving ones' rate and latest stamp.
    Tree {
        /// Seconds to listen before printing.
        #[arg(long, default_value_t = 2.0, value_name = "SECS")]
        listen: f64,
        /// Domain of the transform topics.
        #[arg(long, default_value_t = 0, value_name = "N")]
        domain: u32,
    },
    /// Print the pose of SOURCE in TARGET (the latest the tree knows), RATE times a second.
    Echo {
        /// The frame the transform maps into.
        target: String,
        /// The frame the transform maps from.
        source: String,
        /// Lookups per second.
        #[arg(long, default_value_t = 1.0, value_name = "HZ")]
        rate: f64,
        /// Stop after printing this many transforms.
        #[arg(long, value_name = "N")]
        count: Option<u64>,
        /// Seconds to wait for the first transform; exit 1 if none comes.
        #[arg(long, default_value_t = 5.0, value_name = "SECS")]
        timeout: f64,
        /// Domain of the transform topics.
        #[arg(long, default_value_t = 0, value_name = "N")]
        domain: u32,
    },
}

/// Runs `nerve tf …`.
pub fn run(args: &TfArgs) -> anyhow::Result<i32> {
    match &args.command {
        TfCommand::Tree { listen, domain } => tree(secs(*listen, "listen")?, *domain),
        TfCommand::Echo { target, source, rate, count, timeout, domain } => {
            if !(rate.is_finite() && *rate > 0.0) {
                anyhow::bail!("--rate must be a positive number of lookups per second");
            }
            echo(target, source, secs(1.0 / rate, "rate")?, *count, secs(*timeout, "timeout")?, *domain)
        }
    }
}

fn listen(domain: u32) -> anyhow::Result<TransformBuffer> {
    TransformBuffer::new(BufferOptions { domain, ..BufferOptions::default() })
        .context("cannot subscribe to the transform topics")
}

fn tree(listen_for: Duration, domain: u32) -> anyhow::Result<i32> {
    let buffer = listen(domain)?;
    let stop = StopSignal::install()?;
    let deadline = Instant::now() + listen_for;
    while Instant::now() < deadline && !stop.raised() {
        std::thread::sleep(Duration::from_millis(20).min(deadline.saturating_duration_since(Instant::now())));
    }
    let edges = buffer.edges();
    if edges.is_empty() {
        eprintln!("no transform heard on `tf` or `tf_static` (domain {domain}) in {listen_for:?}");
        return Ok(1);
    }
    let mut out = std::io::stdout().lock();
    keep_writing(out.write_all(render(&edges).as_bytes()))?;
    Ok(0)
}

/// The tree drawn with one frame per line, children under their parent, roots first.
fn render(edges: &[EdgeInfo]) -> String {
    let mut children: BTreeMap<&str, Vec<&EdgeInfo>> = BTreeMap::new();
    for e in edges {
        children.entry(e.parent.as_str()).or_default().push(e);
    }
    let mut text = String::new();
    let roots = children.keys().filter(|p| !edges.iter().any(|e| e.child == **p));
    for root in roots {
        text.push_str(root);
        text.push('\n');
        draw(&children, root, "", &mut text);
    }
    text
}

fn draw(children: &BTreeMap<&str, Vec<&EdgeInfo>>, frame: &str, indent: &str, text: &mut String) {
    let Some(below) = children.get(frame) else { return };
    for (i, e) in below.iter().enumerate() {
        let last = i + 1 == below.len();
        let (branch, next) = if last { ("└── ", "    ") } else { ("├── ", "│   ") };
        let about = if e.is_static {
            "static".to_owned()
        } else {
            let rate = e.rate_hz.map_or_else(|| "rate unknown (one transform)".to_owned(), |hz| format!("{hz:.1} Hz"));
            format!("moving, {rate}, latest {}", Stamp(e.latest_ns))
        };
        text.push_str(&format!("{indent}{branch}{}  ({about})\n", e.child));
        draw(children, &e.child, &format!("{indent}{next}"), text);
    }
}

fn echo(
    target: &str,
    source: &str,
    period: Duration,
    count: Option<u64>,
    first: Duration,
    domain: u32,
) -> anyhow::Result<i32> {
    let buffer = listen(domain)?;
    let stop = StopSignal::install()?;
    if let Err(e) = buffer.lookup_wait(target, source, None, first) {
        eprintln!("error: {e}");
        return Ok(1);
    }
    let mut out = std::io::stdout().lock();
    let mut printed = 0;
    while !stop.raised() && count.is_none_or(|n| printed < n) {
        match buffer.lookup(target, source, None) {
            Ok(t) => {
                let [x, y, z] = t.transform.translation;
                let [qx, qy, qz, qw] = t.transform.rotation;
                let text = format!(
                    "time: {}\ntranslation: [{x:.6}, {y:.6}, {z:.6}]\nrotation: [{qx:.6}, {qy:.6}, {qz:.6}, {qw:.6}]\n---\n",
                    Stamp(t.stamp_ns)
                );
                if !keep_writing(out.write_all(text.as_bytes()).and_then(|()| out.flush()))? {
                    return Ok(0);
                }
                printed += 1;
            }
            Err(e) => eprintln!("error: {e}"),
        }
        if count.is_some_and(|n| printed >= n) {
            break;
        }
        std::thread::sleep(period);
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(parent: &str, child: &str, is_static: bool) -> EdgeInfo {
        let rate_hz = (!is_static).then_some(50.0);
        EdgeInfo {
            parent: parent.into(),
            child: child.into(),
            is_static,
            oldest_ns: 0,
            latest_ns: 2_500_000_000,
            rate_hz,
        }
    }

    #[test]
    fn draws_each_frame_under_its_parent() {
        let edges = [edge("base", "camera", true), edge("base", "lidar", true), edge("world", "base", false)];
        assert_eq!(
            render(&edges),
            "world\n└── base  (moving, 50.0 Hz, latest 2.500000000 s)\n    ├── camera  (static)\n    └── lidar  (static)\n"
        );
    }
}

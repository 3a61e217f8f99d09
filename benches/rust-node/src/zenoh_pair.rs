//! A plain Zenoh publisher and subscriber, with no nerve in between: the baseline of the LAN
//! scenario, on the same shaped link as nerve's cluster.
//!
//! ```text
//! nerve-bench-node zenoh-sub COUNT OUT LISTEN        # "sent received" lines, like `consumer`
//! nerve-bench-node zenoh-pub SIZE COUNT RATE_HZ CONNECT[,CONNECT…] [block|drop]
//! ```
//!
//! Both are peers with explicit endpoints (no scouting); a publisher given several subscribers'
//! endpoints sends to each over its own link, one stream per subscriber. When the link is full
//! the publisher blocks (the default) or drops, as nerve's bridge does for back-pressured and
//! drop-oldest readers.

use std::io::Write;
use std::sync::mpsc;
use std::time::Duration;

use nerve_node::monotonic_ns;
use zenoh::Wait;
use zenoh::qos::CongestionControl;

use crate::{Result, arg, pace};

const KEY: &str = "nerve-bench/lan";

fn session(listen: &[&str], connect: &[&str]) -> Result<zenoh::Session> {
    let mut config = zenoh::Config::default();
    let settings = [
        ("mode", serde_json::json!("peer")),
        ("listen/endpoints", serde_json::json!(listen)),
        ("connect/endpoints", serde_json::json!(connect)),
        ("scouting/multicast/enabled", serde_json::json!(false)),
        ("transport/link/rx/max_message_size", serde_json::json!(u32::MAX)),
    ];
    for (key, value) in settings {
        config.insert_json5(key, &value.to_string()).map_err(|e| format!("{key}: {e}"))?;
    }
    zenoh::open(config).wait()
}

pub fn subscriber(args: &[String]) -> Result<()> {
    let (count, out, listen): (usize, String, String) =
        (arg(args, 2, "count")?, arg(args, 3, "output file")?, arg(args, 4, "listen endpoint")?);
    let session = session(&[&listen], &[])?;
    let (tx, rx) = mpsc::channel();
    let _sub = session
        .declare_subscriber(KEY)
        .callback(move |sample| {
            let payload = sample.payload();
            let mut stamp = [0u8; 8];
            let mut at = 0;
            for slice in payload.slices() {
                let n = (8 - at).min(slice.len());
                stamp[at..at + n].copy_from_slice(&slice[..n]);
                at += n;
                if at == 8 {
                    break;
                }
            }
            let _ = tx.send((u64::from_le_bytes(stamp), monotonic_ns()));
        })
        .wait()?;
    println!("listening");
    let mut lines = Vec::with_capacity(count);
    // A publisher that drops sends fewer than `count`: the subscriber ends once nothing came
    // for a while.
    let mut wait = Duration::from_secs(120);
    while lines.len() < count {
        match rx.recv_timeout(wait) {
            Ok(line) => lines.push(line),
            Err(_) => break,
        }
        wait = Duration::from_secs(5);
    }
    let mut f = std::io::BufWriter::new(std::fs::File::create(&out)?);
    for (sent, received) in &lines {
        writeln!(f, "{sent} {received}")?;
    }
    Ok(())
}

pub fn publisher(args: &[String]) -> Result<()> {
    let (size, count, rate, connect): (usize, u64, f64, String) =
        (arg(args, 2, "size")?, arg(args, 3, "count")?, arg(args, 4, "rate")?, arg(args, 5, "connect endpoint")?);
    let congestion = match args.get(6).map(String::as_str) {
        None | Some("block") => CongestionControl::Block,
        Some("drop") => CongestionControl::Drop,
        Some(other) => return Err(format!("congestion control {other:?}: block or drop").into()),
    };
    let subscribers: Vec<&str> = connect.split(',').collect();
    let session = session(&[], &subscribers)?;
    let publisher = session.declare_publisher(KEY).congestion_control(congestion).express(true).wait()?;
    let deadline = monotonic_ns() + 30_000_000_000;
    while session.info().peers_zid().wait().count() < subscribers.len()
        || !publisher.matching_status().wait()?.matching()
    {
        if monotonic_ns() > deadline {
            return Err("not every subscriber within 30 s".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // Every subscriber's declaration reaches the publisher a moment after its link.
    std::thread::sleep(Duration::from_millis(300));
    let start = monotonic_ns() + 50_000_000;
    let mut payload = vec![0u8; size.max(8)];
    for i in 0..count {
        pace(start, rate, i);
        payload[..8].copy_from_slice(&monotonic_ns().to_le_bytes());
        // Zenoh takes its own copy of a `Vec`: the same one copy nerve's publisher makes.
        publisher.put(payload.clone()).wait()?;
    }
    session.close().wait()?;
    Ok(())
}

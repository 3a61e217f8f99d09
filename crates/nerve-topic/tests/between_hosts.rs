//! Topics between two hosts: two network namespaces joined by a veth pair, a subscriber in one
//! and a publisher in the other, talking over Zenoh (found by multicast scouting). Needs root
//! and `ip` (iproute2); skipped with a message when not run as root.

use std::process::{Command, Output};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nerve_topic::arrow_array::{Array, ArrayRef, UInt32Array};
use nerve_topic::{Publisher, PublisherOptions, Subscriber, SubscriberOptions};
use zenoh::Wait;

const ROLE: &str = "NERVE_HOSTS_TEST_ROLE";
const TOPIC: &str = "NERVE_HOSTS_TEST_TOPIC";
const MESSAGES: u32 = 40;

/// Message `i`: every 10th is 4 MiB (fragmented by Zenoh), the others small.
fn message(i: u32) -> ArrayRef {
    let len = if i % 10 == 9 { 1 << 20 } else { 1 + i as usize };
    Arc::new(UInt32Array::from(vec![i; len]))
}

fn ip(args: &[&str]) -> Output {
    Command::new("ip").args(args).output().expect("ip runs")
}

/// Two namespaces `<tag>a` and `<tag>b` joined by a veth pair; removed on drop.
struct Hosts {
    tag: String,
}

impl Hosts {
    /// `test` tells apart the hosts of tests running side by side in one test process.
    fn new(test: char) -> Option<Self> {
        let tag = format!("nv{test}{}", std::process::id() % 100_000);
        let made = ip(&["netns", "add", &format!("{tag}a")]);
        if !made.status.success() {
            // As root this must work (CI runs as root); elsewhere the test cannot run.
            assert!(!rustix::process::geteuid().is_root(), "ip netns add: {}", String::from_utf8_lossy(&made.stderr));
            return None;
        }
        let hosts = Self { tag: tag.clone() };
        let subnet = format!("10.{}.{}", 100 + u32::from(test) % 100, std::process::id() % 250);
        let (a, b) = (format!("{tag}a"), format!("{tag}b"));
        let steps: Vec<Vec<String>> = vec![
            vec!["netns".into(), "add".into(), b.clone()],
            vec![
                "link".into(),
                "add".into(),
                format!("{tag}x"),
                "type".into(),
                "veth".into(),
                "peer".into(),
                "name".into(),
                format!("{tag}y"),
            ],
            vec!["link".into(), "set".into(), format!("{tag}x"), "netns".into(), a.clone()],
            vec!["link".into(), "set".into(), format!("{tag}y"), "netns".into(), b.clone()],
        ];
        for s in &steps {
            let s: Vec<&str> = s.iter().map(String::as_str).collect();
            assert!(ip(&s).status.success(), "ip {s:?}");
        }
        for (ns, dev, addr) in [(&a, format!("{tag}x"), 1), (&b, format!("{tag}y"), 2)] {
            for s in [
                vec!["-n", ns, "link", "set", "lo", "up"],
                vec!["-n", ns, "link", "set", &dev, "up"],
                vec!["-n", ns, "addr", "add", &format!("{subnet}.{addr}/24"), "dev", &dev],
                vec!["-n", ns, "route", "add", "default", "dev", &dev],
            ] {
                let out = ip(&s);
                assert!(out.status.success(), "ip {s:?}: {}", String::from_utf8_lossy(&out.stderr));
            }
        }
        Some(hosts)
    }

    fn run(&self, host: char, test: &str, role: &str, topic: &str) -> std::process::Child {
        Command::new("ip")
            .args(["netns", "exec", &format!("{}{host}", self.tag)])
            .arg(std::env::current_exe().expect("test binary"))
            .args([test, "--exact", "--nocapture"])
            // Discovery by multicast scouting on the namespaces' private link, whatever the test
            // run restricts on the machine itself.
            .env_remove(nerve_topic::session::CONFIG_ENV)
            .env(nerve_topic::session::RANGE_ENV, "subnet")
            .env(ROLE, role)
            .env(TOPIC, topic)
            .spawn()
            .expect("role process")
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for h in ['a', 'b'] {
            ip(&["netns", "del", &format!("{}{h}", self.tag)]);
        }
    }
}

fn subscribe(topic: &str) {
    let sub = Subscriber::new(topic, SubscriberOptions { queue_size: 100, ..Default::default() }).expect("subscriber");
    for i in 0..MESSAGES {
        let m = sub.recv(Some(Duration::from_secs(30))).expect("recv").unwrap_or_else(|| panic!("message {i} missing"));
        let a = m.data.as_any().downcast_ref::<UInt32Array>().expect("u32").clone();
        assert_eq!(a.len(), message(i).len(), "message {i} length");
        assert!(a.values().iter().all(|&v| v == i), "message {i} corrupted");
        assert_eq!(m.metadata.parameters.get("i").and_then(serde_json::Value::as_u64), Some(u64::from(i)));
    }
    println!("received all {MESSAGES}");
}

fn publish(topic: &str) {
    let p = Publisher::new(topic, PublisherOptions::default()).expect("publisher");
    let deadline = Instant::now() + Duration::from_secs(30);
    while p.subscriber_count() == 0 {
        assert!(Instant::now() < deadline, "the remote subscriber was never discovered");
        std::thread::sleep(Duration::from_millis(20));
    }
    for i in 0..MESSAGES {
        let mut params = nerve_topic::Parameters::new();
        params.insert("i".into(), i.into());
        p.send(&message(i), &params).expect("send");
    }
}

#[test]
fn a_topic_crosses_between_two_hosts() {
    match std::env::var(ROLE).as_deref() {
        Ok("sub") => return subscribe(&std::env::var(TOPIC).expect("topic")),
        Ok(_) => return publish(&std::env::var(TOPIC).expect("topic")),
        Err(_) => {}
    }
    let Some(hosts) = Hosts::new('c') else {
        eprintln!("skipped: creating network namespaces needs root and iproute2");
        return;
    };
    let topic = format!("test/hosts/{}", std::process::id());
    let test = "a_topic_crosses_between_two_hosts";
    let mut sub = hosts.run('a', test, "sub", &topic);
    let mut publisher = hosts.run('b', test, "pub", &topic);
    let pub_ok = publisher.wait().expect("publisher ran").success();
    let sub_ok = sub.wait().expect("subscriber ran").success();
    assert!(pub_ok && sub_ok, "publisher ok: {pub_ok}, subscriber ok: {sub_ok}");
}

/// Bytes host `b` has sent on its link.
fn sent_bytes(hosts: &Hosts) -> u64 {
    let out = Command::new("ip")
        .args(["netns", "exec", &format!("{}b", hosts.tag), "cat"])
        .arg(format!("/sys/class/net/{}y/statistics/tx_bytes", hosts.tag))
        .output()
        .expect("read link statistics");
    String::from_utf8_lossy(&out.stdout).trim().parse().expect("a byte count")
}

const BIG: usize = 1 << 20;
const BIG_MESSAGES: usize = 20;

#[test]
fn nothing_goes_on_the_wire_without_a_remote_subscriber() {
    let test = "nothing_goes_on_the_wire_without_a_remote_subscriber";
    let topic = std::env::var(TOPIC).unwrap_or_default();
    match std::env::var(ROLE).as_deref() {
        Ok("snoop") => {
            // A Zenoh peer listening to every nerve key: anything published to the network
            // without being asked for would be pulled across the link to it.
            let session = zenoh::open(zenoh::Config::default()).wait().expect("session");
            let _all = session.declare_subscriber("nerve/**").wait().expect("subscriber");
            std::thread::sleep(Duration::from_secs(6));
            return;
        }
        Ok("local-sub") => {
            let sub =
                Subscriber::new(&topic, SubscriberOptions { queue_size: 100, ..Default::default() }).expect("sub");
            for i in 0..BIG_MESSAGES {
                let m = sub.recv(Some(Duration::from_secs(30))).expect("recv");
                assert!(m.is_some_and(|m| m.data.len() == BIG), "message {i}");
            }
            return;
        }
        Ok("local-pub") => {
            let p = Publisher::new(&topic, PublisherOptions::default()).expect("publisher");
            while p.subscriber_count() == 0 {
                std::thread::sleep(Duration::from_millis(10));
            }
            let data: ArrayRef = Arc::new(nerve_topic::arrow_array::UInt8Array::from(vec![7u8; BIG]));
            for _ in 0..BIG_MESSAGES {
                p.send(&data, &Default::default()).expect("send");
            }
            return;
        }
        _ => {}
    }
    let Some(hosts) = Hosts::new('q') else {
        eprintln!("skipped: creating network namespaces needs root and iproute2");
        return;
    };
    let topic = format!("test/quiet/{}", std::process::id());
    let mut snoop = hosts.run('a', test, "snoop", &topic);
    std::thread::sleep(Duration::from_secs(1));
    let before = sent_bytes(&hosts);
    let mut sub = hosts.run('b', test, "local-sub", &topic);
    let mut publisher = hosts.run('b', test, "local-pub", &topic);
    assert!(publisher.wait().expect("publisher ran").success());
    assert!(sub.wait().expect("subscriber ran").success());
    let sent = sent_bytes(&hosts) - before;
    let _ = snoop.kill();
    let _ = snoop.wait();
    // 20 MiB went to a subscriber on the same host; the link only carried discovery chatter.
    assert!(sent < (BIG as u64), "{sent} bytes crossed the link for a same-host subscriber");
    eprintln!("bytes on the link while 20 MiB were published on host b: {sent}");
}

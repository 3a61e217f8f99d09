//! Topics between two hosts: two network namespaces joined by a veth pair, a subscriber in one
//! and a publisher in the other, talking over Zenoh (found by multicast scouting).
//!
//! These tests need root and `ip` (iproute2), so they are ignored by a plain `cargo test`; CI
//! (root) runs them with `cargo test -p nerve-topic --test between_hosts -- --ignored`, and
//! there they fail, never pass silently, when the namespaces cannot be made.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Output, Stdio};
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
    fn new(test: char) -> Self {
        let tag = format!("nv{test}{}", std::process::id() % 100_000);
        let made = ip(&["netns", "add", &format!("{tag}a")]);
        assert!(
            made.status.success(),
            "this test makes network namespaces, which needs root and iproute2: `ip netns add` said {}",
            String::from_utf8_lossy(&made.stderr)
        );
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
        hosts
    }

    fn run(&self, host: char, test: &str, role: &str, topic: &str) -> std::process::Child {
        self.command(host, test, role, topic).spawn().expect("role process")
    }

    /// This test binary, run as `role` in the namespace of `host`.
    fn command(&self, host: char, test: &str, role: &str, topic: &str) -> Command {
        let mut command = Command::new("ip");
        command
            .args(["netns", "exec", &format!("{}{host}", self.tag)])
            .arg(std::env::current_exe().expect("test binary"))
            // The test is ignored (it needs root): the role process must run it all the same.
            .args([test, "--exact", "--nocapture", "--include-ignored"])
            // Discovery by multicast scouting on the namespaces' private link, whatever the test
            // run restricts on the machine itself.
            .env_remove(nerve_topic::session::CONFIG_ENV)
            .env(nerve_topic::session::RANGE_ENV, "subnet")
            .env(ROLE, role)
            .env(TOPIC, topic);
        command
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

/// Waits up to 30 s (a bound only a broken build reaches) for `done`.
fn wait_for(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn publish(topic: &str) {
    let p = Publisher::new(topic, PublisherOptions::default()).expect("publisher");
    wait_for("the remote subscriber", || p.subscriber_count() > 0);
    for i in 0..MESSAGES {
        let mut params = nerve_topic::Parameters::new();
        params.insert("i".into(), i.into());
        p.send(&message(i), &params).expect("send");
    }
}

#[test]
#[ignore = "needs root and iproute2 (makes network namespaces): run as root with `-- --ignored`"]
fn a_topic_crosses_between_two_hosts() {
    match std::env::var(ROLE).as_deref() {
        Ok("sub") => return subscribe(&std::env::var(TOPIC).expect("topic")),
        Ok(_) => return publish(&std::env::var(TOPIC).expect("topic")),
        Err(_) => {}
    }
    let hosts = Hosts::new('c');
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

/// The topic on which the snoop shows itself as a publisher: a process that sees that publisher
/// is linked to the snoop's Zenoh session.
fn beacon(topic: &str) -> String {
    format!("{topic}/beacon")
}

#[test]
#[ignore = "needs root and iproute2 (makes network namespaces): run as root with `-- --ignored`"]
fn nothing_goes_on_the_wire_without_a_remote_subscriber() {
    let test = "nothing_goes_on_the_wire_without_a_remote_subscriber";
    let topic = std::env::var(TOPIC).unwrap_or_default();
    match std::env::var(ROLE).as_deref() {
        Ok("snoop") => {
            // A Zenoh peer listening to every nerve key: anything published to the network
            // without being asked for would be pulled across the link to it. Then, on the same
            // session, the liveliness token of a nerve publisher of the beacon topic, as
            // `nerve_topic::network` spells it: a peer that sees it has this session's
            // subscriber too, declared first on the same link.
            let session = zenoh::open(zenoh::Config::default()).wait().expect("session");
            let _all = session.declare_subscriber("nerve/**").wait().expect("subscriber");
            let host = nerve_topic::network::host_id();
            let key = format!("nerve/pub/d0/h{host}/e{}x0/{}", std::process::id(), beacon(&topic));
            let _token = session.liveliness().declare_token(key).wait().expect("token");
            println!("snooping");
            // Until the test is done with it: it closes our stdin, or dies.
            let _ = std::io::stdin().read_to_end(&mut Vec::new());
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
            // Linked to the snoop before anything is sent, or the test would prove nothing.
            let snooped = Subscriber::new(&beacon(&topic), SubscriberOptions::default()).expect("beacon");
            wait_for("the snoop's Zenoh session", || snooped.publisher_count() > 0);
            let p = Publisher::new(&topic, PublisherOptions::default()).expect("publisher");
            wait_for("the local subscriber", || p.subscriber_count() > 0);
            let data: ArrayRef = Arc::new(nerve_topic::arrow_array::UInt8Array::from(vec![7u8; BIG]));
            for _ in 0..BIG_MESSAGES {
                p.send(&data, &Default::default()).expect("send");
            }
            return;
        }
        _ => {}
    }
    let hosts = Hosts::new('q');
    let topic = format!("test/quiet/{}", std::process::id());
    let mut snoop = hosts
        .command('a', test, "snoop", &topic)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("snoop process");
    let out = BufReader::new(snoop.stdout.take().expect("stdout"));
    assert!(out.lines().map_while(Result::ok).any(|l| l == "snooping"), "the snoop did not start");
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

//! The keys that shape how a node's process runs: `restart:` and `realtime:`.

use std::time::Duration;

use crate::fields::{boolean, join_field, key_str, mapping, unknown_key};
use crate::spec::{RealtimeSpec, RestartCount, RestartPolicy, RestartSpec, SchedPolicy};
use crate::tree::{Node, Problems, ScalarKind, Value};

const RESTART_KEYS: &[&str] = &["policy", "max_restarts", "delay", "max_delay", "window"];

/// dora-rs's node keys for restarting, which nerve takes with dora's meaning.
pub(crate) const DORA_RESTART_KEYS: &[&str] =
    &["restart_policy", "max_restarts", "restart_delay", "max_restart_delay", "restart_window"];

const REALTIME_KEYS: &[&str] = &["priority", "policy", "cpus", "lock_memory", "cpu_latency_us"];

/// Longest back-off accepted, so that a typo cannot park a node for years.
const MAX_DELAY: Duration = Duration::from_secs(3600);

/// Longest window restarts are counted in ("5 restarts a week" is the most anyone asks).
const MAX_WINDOW: Duration = Duration::from_secs(7 * 24 * 3600);

/// Highest real-time priority Linux accepts for `SCHED_FIFO` and `SCHED_RR`.
const MAX_PRIORITY: i128 = 99;

/// CPUs a pinning may name (the size of the kernel's CPU set).
const MAX_CPUS: i128 = 1024;

/// Largest CPU latency request taken (one second): above that a request changes nothing, as
/// no idle state takes so long to leave.
const MAX_CPU_LATENCY_US: i128 = 1_000_000;

/// `restart: on-failure`, or the mapping `{policy, max_restarts, delay, max_delay}`.
pub(crate) fn parse_restart(p: &mut Problems, value: &Node, field: &str) -> RestartSpec {
    let mut spec = RestartSpec::default();
    match &value.value {
        _ if value.is_null() => {}
        Value::Scalar(_) => {
            if let Some(policy) = parse_restart_policy(p, value, field) {
                spec.policy = policy;
            }
        }
        Value::Map(entries) => {
            for (key, v) in entries {
                let k = key_str(key);
                let f = join_field(field, k);
                match k {
                    "policy" => spec.policy = parse_restart_policy(p, v, &f).unwrap_or(spec.policy),
                    "max_restarts" => {
                        if let Some(n) = integer(p, v, &f, 0, i128::from(u32::MAX)) {
                            spec.max_restarts = u32::try_from(n).unwrap_or(u32::MAX);
                        }
                    }
                    "delay" => spec.delay = duration(p, v, &f, MAX_DELAY).unwrap_or(spec.delay),
                    "max_delay" => spec.max_delay = duration(p, v, &f, MAX_DELAY).unwrap_or(spec.max_delay),
                    "window" => spec.count = window(p, v, &f).unwrap_or(spec.count),
                    _ => unknown_key(p, key, &f, RESTART_KEYS),
                }
            }
            check_delays(p, value, field, &spec, ("max_delay", "delay"));
        }
        Value::Seq(_) => p.push(
            value.mark,
            field,
            "expected never, on-failure, always, or a mapping like `{policy: on-failure, max_restarts: 5}`",
        ),
    }
    spec
}

/// dora-rs's restart keys of one node (`restart_policy: on-failure`, `max_restarts`,
/// `restart_delay`, `max_restart_delay`, `restart_window`), with dora's meaning and defaults:
/// `max_restarts: 0` (the default) is no limit, without `restart_delay` a node restarts at once,
/// and without `restart_window` the limit counts the whole run's restarts. `field` names the
/// node; `entries` are the keys found, with their values.
pub(crate) fn parse_dora_restart(p: &mut Problems, entries: &[(&Node, &Node)], field: &str) -> RestartSpec {
    let mut spec = RestartSpec {
        max_restarts: u32::MAX,
        delay: Duration::ZERO,
        max_delay: MAX_DELAY,
        count: RestartCount::Run,
        ..RestartSpec::default()
    };
    let mut at = None;
    for (key, v) in entries {
        let k = key_str(key);
        let f = join_field(field, k);
        at.get_or_insert(*v);
        match k {
            "restart_policy" => spec.policy = parse_restart_policy(p, v, &f).unwrap_or(spec.policy),
            "max_restarts" => {
                if let Some(n) = integer(p, v, &f, 0, i128::from(u32::MAX)) {
                    spec.max_restarts = u32::try_from(n).ok().filter(|n| *n > 0).unwrap_or(u32::MAX);
                }
            }
            "restart_delay" => spec.delay = duration(p, v, &f, MAX_DELAY).unwrap_or(spec.delay),
            "max_restart_delay" => spec.max_delay = duration(p, v, &f, MAX_DELAY).unwrap_or(spec.max_delay),
            _ => spec.count = window(p, v, &f).unwrap_or(spec.count),
        }
    }
    if let Some(at) = at {
        check_delays(p, at, field, &spec, ("max_restart_delay", "restart_delay"));
    }
    spec
}

/// A window restarts are counted in, as [`RestartCount::Window`].
fn window(p: &mut Problems, value: &Node, field: &str) -> Option<RestartCount> {
    let window = duration(p, value, field, MAX_WINDOW)?;
    if window.is_zero() {
        p.push(value.mark, field, "a window of 0 s would count no restart: leave it out to count them all");
        return None;
    }
    Some(RestartCount::Window(window))
}

fn check_delays(p: &mut Problems, at: &Node, field: &str, spec: &RestartSpec, (max, delay): (&str, &str)) {
    if spec.max_delay < spec.delay {
        p.push(at.mark, field, format!("{max} ({:?}) is shorter than {delay} ({:?})", spec.max_delay, spec.delay));
    }
}

fn parse_restart_policy(p: &mut Problems, value: &Node, field: &str) -> Option<RestartPolicy> {
    let policy = match value.text() {
        Some("never" | "no") => RestartPolicy::Never,
        Some("on-failure" | "on_failure") => RestartPolicy::OnFailure,
        Some("always") => RestartPolicy::Always,
        Some(other) => {
            p.push(
                value.mark,
                field,
                format!("unknown restart policy `{other}` (expected never, on-failure or always)"),
            );
            return None;
        }
        None => {
            p.push(value.mark, field, format!("expected never, on-failure or always, found {}", value.describe()));
            return None;
        }
    };
    Some(policy)
}

/// `realtime: {priority, policy, cpus, lock_memory}`.
pub(crate) fn parse_realtime(p: &mut Problems, value: &Node, field: &str) -> Option<RealtimeSpec> {
    let entries =
        mapping(p, value, field, "a mapping like `{priority: 80, policy: fifo, cpus: [2], lock_memory: true}`")?;
    let mut spec = RealtimeSpec::default();
    let mut policy_mark = None;
    for (key, v) in entries {
        let k = key_str(key);
        let f = join_field(field, k);
        match k {
            "priority" => {
                spec.priority = integer(p, v, &f, 1, MAX_PRIORITY).and_then(|n| u8::try_from(n).ok());
            }
            "policy" => {
                policy_mark = Some(v.mark);
                match v.text() {
                    Some("fifo") => spec.policy = SchedPolicy::Fifo,
                    Some("rr") => spec.policy = SchedPolicy::Rr,
                    _ => p.push(
                        v.mark,
                        &f,
                        format!("unknown scheduling policy `{}` (expected fifo or rr)", v.text().unwrap_or("")),
                    ),
                }
            }
            "cpus" => spec.cpus = parse_cpus(p, v, &f),
            "lock_memory" => spec.lock_memory = boolean(p, v, &f),
            "cpu_latency_us" => {
                spec.cpu_latency_us = integer(p, v, &f, 0, MAX_CPU_LATENCY_US).and_then(|n| u32::try_from(n).ok());
            }
            _ => unknown_key(p, key, &f, REALTIME_KEYS),
        }
    }
    if let (Some(mark), None) = (policy_mark, spec.priority) {
        p.push(mark, join_field(field, "policy"), "a scheduling policy needs a `priority` (1 to 99)");
    }
    Some(spec)
}

pub(crate) fn parse_cpus(p: &mut Problems, value: &Node, field: &str) -> Vec<usize> {
    let Value::Seq(items) = &value.value else {
        p.push(value.mark, field, format!("expected a list of CPU numbers like `[2, 3]`, found {}", value.describe()));
        return Vec::new();
    };
    if items.is_empty() {
        p.push(value.mark, field, "an empty list would leave the node no CPU to run on; leave `cpus` out instead");
    }
    let mut cpus: Vec<usize> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(cpu) = integer(p, item, &format!("{field}[{i}]"), 0, MAX_CPUS - 1) else {
            continue;
        };
        let cpu = usize::try_from(cpu).unwrap_or(usize::MAX);
        if cpus.contains(&cpu) {
            p.push(item.mark, format!("{field}[{i}]"), format!("CPU {cpu} is listed twice"));
        } else {
            cpus.push(cpu);
        }
    }
    cpus
}

/// An integer within `min..=max`.
pub(crate) fn integer(p: &mut Problems, value: &Node, field: &str, min: i128, max: i128) -> Option<i128> {
    match value.as_scalar().map(|s| s.kind) {
        Some(ScalarKind::Int(n)) if (min..=max).contains(&n) => Some(n),
        Some(ScalarKind::Int(n)) => {
            p.push(value.mark, field, format!("must be between {min} and {max}, found {n}"));
            None
        }
        _ => {
            p.push(value.mark, field, format!("expected an integer from {min} to {max}, found {}", value.describe()));
            None
        }
    }
}

/// Seconds as a number (`0.5`), or a string with a unit (`500ms`, `2s`), up to `max`.
pub(crate) fn duration(p: &mut Problems, value: &Node, field: &str, max: Duration) -> Option<Duration> {
    let text = value.text().unwrap_or("");
    let secs = match value.as_scalar().map(|s| s.kind) {
        #[expect(clippy::cast_precision_loss, reason = "the range is checked below; fractions of seconds are fine")]
        Some(ScalarKind::Int(n)) => Some(n as f64),
        Some(ScalarKind::Float(f)) => Some(f),
        Some(ScalarKind::Str) => {
            let (number, scale) = if let Some(ms) = text.strip_suffix("ms") {
                (ms, 1e-3)
            } else if let Some(s) = text.strip_suffix('s') {
                (s, 1.0)
            } else {
                (text, f64::NAN)
            };
            number.trim().parse::<f64>().ok().map(|n| n * scale)
        }
        _ => None,
    };
    match secs {
        Some(s) if s.is_finite() && s >= 0.0 && s <= max.as_secs_f64() => Some(Duration::from_secs_f64(s)),
        _ => {
            p.push(
                value.mark,
                field,
                format!(
                    "expected a duration up to {}s: seconds (`0.5`) or with a unit (`500ms`, `2s`), found `{text}`",
                    max.as_secs()
                ),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn node(yaml_node: &str) -> Result<crate::NodeSpec, String> {
        let yaml = format!("nodes:\n  - id: n\n    path: /bin/sh\n{yaml_node}");
        crate::parse_str(&yaml, Path::new("df.yml")).map(|df| df.nodes[0].clone()).map_err(|e| e.to_string())
    }

    #[test]
    fn restart_short_and_long_forms() {
        assert_eq!(node("").map(|n| n.restart), Ok(RestartSpec::default()));
        let r = node("    restart: on-failure\n").expect("valid");
        assert_eq!(r.restart.policy, RestartPolicy::OnFailure);
        let r = node("    restart: {policy: always, max_restarts: 2, delay: 250ms, max_delay: 1.5}\n").expect("valid");
        assert_eq!(
            r.restart,
            RestartSpec {
                policy: RestartPolicy::Always,
                max_restarts: 2,
                delay: Duration::from_millis(250),
                max_delay: Duration::from_millis(1500),
                count: RestartCount::InARow,
            }
        );
        let r = node("    restart: {policy: on-failure, max_restarts: 5, window: 300}\n").expect("valid");
        assert_eq!(r.restart.count, RestartCount::Window(Duration::from_secs(300)));
        let e = node("    restart: sometimes\n").expect_err("invalid");
        assert!(e.contains("df.yml:4:14: nodes[n].restart: unknown restart policy `sometimes`"), "{e}");
        let e = node("    restart: {policy: always, delay: 5s, max_delay: 1s}\n").expect_err("invalid");
        assert!(e.contains("max_delay (1s) is shorter than delay (5s)"), "{e}");
        let e = node("    restart: {delay: -1}\n").expect_err("invalid");
        assert!(e.contains("nodes[n].restart.delay: expected a duration"), "{e}");
        let e = node("    restart: {tries: 3}\n").expect_err("invalid");
        assert!(e.contains("unknown key `tries`"), "{e}");
    }

    #[test]
    fn dora_restart_keys_keep_doras_meaning() {
        // dora-rs's defaults: no limit, no delay, the whole run counted.
        let r = node("    restart_policy: on-failure\n").expect("valid").restart;
        assert_eq!(
            (r.policy, r.max_restarts, r.delay, r.count),
            (RestartPolicy::OnFailure, u32::MAX, Duration::ZERO, RestartCount::Run)
        );
        let r = node(
            "    restart_policy: always\n    max_restarts: 5\n    restart_delay: 1.0\n    max_restart_delay: 30\n    restart_window: 300\n",
        )
        .expect("valid")
        .restart;
        assert_eq!(
            r,
            RestartSpec {
                policy: RestartPolicy::Always,
                max_restarts: 5,
                delay: Duration::from_secs(1),
                max_delay: Duration::from_secs(30),
                count: RestartCount::Window(Duration::from_secs(300)),
            }
        );
        assert_eq!(
            node("    restart_policy: always\n    max_restarts: 0\n").expect("valid").restart.max_restarts,
            u32::MAX
        );
        let e = node("    restart: always\n    max_restarts: 3\n").expect_err("invalid");
        assert!(
            e.contains("df.yml:5:5: nodes[n].max_restarts: `max_restarts` (dora-rs's form) and `restart:` both"),
            "{e}"
        );
        let e = node("    restart_policy: sometimes\n").expect_err("invalid");
        assert!(e.contains("nodes[n].restart_policy: unknown restart policy `sometimes`"), "{e}");
        let e =
            node("    restart_policy: always\n    restart_delay: 5\n    max_restart_delay: 1\n").expect_err("invalid");
        assert!(e.contains("max_restart_delay (1s) is shorter than restart_delay (5s)"), "{e}");
        let e = node("    restart_policy: always\n    restart_window: 0\n").expect_err("invalid");
        assert!(e.contains("nodes[n].restart_window: a window of 0 s would count no restart"), "{e}");
    }

    #[test]
    fn doras_cpu_affinity_pins_as_realtime_cpus_does() {
        let n = node("    cpu_affinity: [0, 1]\n").expect("valid");
        assert_eq!(n.realtime.map(|rt| (rt.cpus, rt.priority)), Some((vec![0, 1], None)));
        let n = node("    cpu_affinity: [1]\n    realtime: {priority: 10}\n").expect("valid");
        assert_eq!(n.realtime.map(|rt| (rt.cpus, rt.priority)), Some((vec![1], Some(10))));
        let e = node("    cpu_affinity: [1]\n    realtime: {cpus: [2]}\n").expect_err("invalid");
        assert!(e.contains("nodes[n].cpu_affinity: `cpu_affinity` and `realtime: {cpus}` both pin the node"), "{e}");
        let e = node("    cpu_affinity: []\n").expect_err("invalid");
        assert!(e.contains("nodes[n].cpu_affinity: an empty list"), "{e}");
    }

    #[test]
    fn a_node_started_by_hand_cannot_be_restarted_or_scheduled() {
        let dynamic = |extra: &str| {
            let yaml = format!("nodes:\n  - id: n\n    path: dynamic\n{extra}");
            crate::parse_str(&yaml, Path::new("df.yml")).map_err(|e| e.to_string())
        };
        let e = dynamic("    restart: always\n").expect_err("invalid");
        assert!(e.contains("df.yml:4:5: nodes[n].restart: nerve does not start a `path: dynamic` node"), "{e}");
        let e = dynamic("    restart_policy: on-failure\n").expect_err("invalid");
        assert!(e.contains("nodes[n].restart_policy: nerve does not start a `path: dynamic` node"), "{e}");
        let e = dynamic("    realtime: {priority: 10}\n").expect_err("invalid");
        assert!(e.contains("nodes[n].realtime: nerve does not start"), "{e}");
        let e = dynamic("    cpu_affinity: [0]\n").expect_err("invalid");
        assert!(e.contains("nodes[n].cpu_affinity: nerve does not start"), "{e}");
        // Locking memory is done by the node itself, so it works either way.
        assert!(dynamic("    restart: never\n    realtime: {lock_memory: true}\n").is_ok());
    }

    #[test]
    fn back_off_doubles_up_to_its_bound() {
        let r =
            RestartSpec { delay: Duration::from_millis(100), max_delay: Duration::from_secs(1), ..Default::default() };
        let waits: Vec<u128> = (0..6).map(|i| r.delay_before(i).as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 800, 1000, 1000]);
        assert_eq!(r.delay_before(u32::MAX), Duration::from_secs(1));
    }

    #[test]
    fn realtime_settings() {
        let n = node("    realtime: {priority: 80, policy: rr, cpus: [0, 3], lock_memory: true}\n").expect("valid");
        assert_eq!(
            n.realtime,
            Some(RealtimeSpec {
                priority: Some(80),
                policy: SchedPolicy::Rr,
                cpus: vec![0, 3],
                lock_memory: true,
                cpu_latency_us: None
            })
        );
        let n = node("    realtime: {cpu_latency_us: 0}\n").expect("a latency request alone");
        assert_eq!(n.realtime.and_then(|r| r.cpu_latency_us), Some(0));
        let n = node("    realtime: {cpus: [1]}\n").expect("pinning alone");
        assert_eq!(n.realtime.map(|r| (r.priority, r.cpus)), Some((None, vec![1])));
        for (yaml, expected) in [
            ("{priority: 100}", "priority: must be between 1 and 99, found 100"),
            ("{priority: 0}", "priority: must be between 1 and 99, found 0"),
            ("{policy: fifo}", "policy: a scheduling policy needs a `priority`"),
            ("{priority: 5, policy: batch}", "unknown scheduling policy `batch`"),
            ("{cpus: []}", "an empty list would leave the node no CPU"),
            ("{cpus: [1, 1]}", "cpus[1]: CPU 1 is listed twice"),
            ("{cpus: [-1]}", "cpus[0]: must be between 0 and 1023"),
            ("{lock_memory: yes}", "lock_memory: expected true or false"),
            ("{cpu_latency_us: -1}", "cpu_latency_us: must be between 0 and 1000000, found -1"),
            ("{cpu_latency_us: 2.5}", "cpu_latency_us: expected an integer from 0 to 1000000"),
            ("{cpu_latency: 0}", "unknown key `cpu_latency`"),
            ("high", "expected a mapping like"),
        ] {
            let e = node(&format!("    realtime: {yaml}\n")).expect_err("invalid");
            assert!(e.contains(expected), "{yaml}: {e}");
        }
    }
}

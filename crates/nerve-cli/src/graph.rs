//! `nerve graph`: draws a dataflow as a Mermaid flowchart, as text or as an HTML page.
//!
//! Rendering ([`mermaid`], [`html`]) is pure; [`run`] adds the file handling and the
//! browser.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::Context;
use nerve_spec::{DEFAULT_QUEUE_SIZE, Dataflow, InputSource, InputSpec, NodePath, NodeSpec, QueuePolicy, ServicesSpec};

/// The arguments of `nerve graph`.
#[derive(Debug, clap::Args)]
pub struct GraphArgs {
    /// The dataflow YAML file.
    pub dataflow: PathBuf,
    /// Write an HTML page and open it in a browser (a temporary file unless --output is given).
    #[arg(long)]
    pub open: bool,
    /// Write to this file instead of stdout: `.html`/`.htm` an HTML page, `.md` a fenced
    /// Mermaid block, anything else (`.mmd`) the Mermaid text.
    #[arg(long, short, value_name = "PATH")]
    pub output: Option<PathBuf>,
}

/// The script the HTML page loads Mermaid from.
/// Mermaid's renderer (see `assets/mermaid/README.md`), written into every HTML page so the
/// page draws with no network.
const MERMAID_JS: &str = include_str!("../assets/mermaid/mermaid.min.js");

/// What a written file holds, chosen by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Html,
    Markdown,
    Mermaid,
}

impl Format {
    fn of(path: &Path) -> Format {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("html" | "htm") => Format::Html,
            Some("md" | "markdown") => Format::Markdown,
            _ => Format::Mermaid,
        }
    }
}

/// Runs `nerve graph`; `df` is the already loaded dataflow.
///
/// # Errors
/// When the output file cannot be written, or `--open` is given an output that is not HTML.
pub fn run(args: &GraphArgs, df: &Dataflow) -> anyhow::Result<i32> {
    if args.open {
        let page = match &args.output {
            Some(path) if Format::of(path) != Format::Html => anyhow::bail!(
                "--open shows an HTML page, but --output {} is not .html: \
                 give an .html path or leave --output out",
                path.display()
            ),
            Some(path) => {
                write_file(path, &html(df))?;
                path.clone()
            }
            None => write_temp_page(df)?,
        };
        eprintln!("nerve: wrote {}", page.display());
        open_in_browser(&page);
        return Ok(0);
    }
    match &args.output {
        None => print!("{}", mermaid(df)),
        Some(path) => {
            let text = match Format::of(path) {
                Format::Html => html(df),
                Format::Markdown => markdown(df),
                Format::Mermaid => mermaid(df),
            };
            write_file(path, &text)?;
            eprintln!("nerve: wrote {}", path.display());
        }
    }
    Ok(0)
}

fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Writes the page to a new file in the temporary directory.
fn write_temp_page(df: &Dataflow) -> anyhow::Result<PathBuf> {
    let stem = df.file.file_stem().map_or_else(|| "dataflow".into(), |s| s.to_string_lossy());
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
    let path =
        std::env::temp_dir().join(format!("nerve-graph-{}-{}-{stamp}.html", file_name_part(&stem), std::process::id()));
    // `create_new` refuses a file (or symlink) someone else planted in a shared /tmp.
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(html(df).as_bytes()).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// Opens `page` with the desktop's opener, or says how to open it by hand.
fn open_in_browser(page: &Path) {
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    let by_hand = || {
        let url = std::path::absolute(page).unwrap_or_else(|_| page.to_path_buf());
        eprintln!(
            "nerve: to see the graph, open file://{} in a web browser \
             (it needs network access to load Mermaid)",
            url.display()
        );
    };
    if find_on_path(opener).is_none() {
        eprintln!("nerve: `{opener}` is not available");
        by_hand();
        return;
    }
    let status = Command::new(opener).arg(page).stdin(Stdio::null()).status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => {
            eprintln!("nerve: `{opener}` failed ({s})");
            by_hand();
        }
        Err(e) => {
            eprintln!("nerve: cannot run `{opener}`: {e}");
            by_hand();
        }
    }
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|candidate| candidate.is_file())
}

/// The dataflow as a Mermaid flowchart.
///
/// Every node is a box labelled with its id and program file; dynamic nodes are dashed.
/// Each input is an edge from its source labelled with the output id (`output as input`
/// when the input is named differently), plus `[queue N, policy]` when the queue is not
/// the default. Timers are stadium-shaped nodes, one per distinct interval. Topics are
/// hexagons labelled `topic/<name>`, one per topic, with an edge to each input that
/// reads it and from each output published on it. Services declared under `services:` are
/// parallelograms, actions declared under `actions:` parallelograms leaning the other way,
/// each with a dotted edge from each caller and to each server. Outputs that neither an input
/// reads nor a topic publishes end in a dotted edge to a small circle.
pub fn mermaid(df: &Dataflow) -> String {
    let mut out = String::from("flowchart TB\n");
    let timers: BTreeSet<Duration> = df
        .nodes
        .iter()
        .flat_map(|n| &n.inputs)
        .filter_map(|i| match i.source {
            InputSource::Timer { interval } => Some(interval),
            _ => None,
        })
        .collect();
    for interval in &timers {
        let _ = writeln!(out, "    {}([\"timer {}\"])", timer_key(*interval), human_interval(*interval));
    }
    let logs: BTreeSet<String> = df
        .nodes
        .iter()
        .flat_map(|n| &n.inputs)
        .filter(|i| matches!(i.source, InputSource::Logs { .. }))
        .map(|i| i.source.to_string())
        .collect();
    for source in &logs {
        let _ = writeln!(out, "    {}[/\"{}\"/]", logs_key(source), label(source));
    }
    let read_topics = df.nodes.iter().flat_map(|n| &n.inputs).filter_map(|i| match &i.source {
        InputSource::Topic { topic } => Some(topic.as_str()),
        _ => None,
    });
    let published_topics = df.nodes.iter().flat_map(|n| n.output_topics.values().map(String::as_str));
    let topics: BTreeSet<&str> = read_topics.chain(published_topics).collect();
    for topic in &topics {
        let _ = writeln!(out, "    {}{{{{\"topic/{}\"}}}}", topic_key(topic), label(topic));
    }
    let mut served_keys = Vec::new();
    for &(kind, open, close, _) in &SERVED {
        let names: BTreeSet<&str> = df
            .nodes
            .iter()
            .flat_map(|n| declared(n, kind).serve.iter().chain(&declared(n, kind).call))
            .map(String::as_str)
            .collect();
        for name in &names {
            let _ = writeln!(out, "    {}{open}\"{kind}/{}\"{close}", served_key(kind, name), label(name));
        }
        served_keys.push((names.iter().map(|name| served_key(kind, name)).collect::<Vec<_>>(), kind));
    }
    for node in &df.nodes {
        let program = match (&node.ros2, &node.path) {
            // What it bridges says more than the program nerve runs for it.
            (Some(bridge), _) => ros2_label(bridge),
            (None, NodePath::Dynamic) => "dynamic".to_owned(),
            (None, NodePath::Python(p) | NodePath::Executable(p) | NodePath::ToBuild(p)) => file_name(p),
            (None, NodePath::Operators(ops)) => {
                let files: Vec<String> = ops.iter().map(|op| file_name(op.source.file())).collect();
                format!("operators: {}", files.join(", "))
            }
        };
        let _ =
            writeln!(out, "    {}[\"{}<br/><small>{}</small>\"]", node_key(&node.id), label(&node.id), label(&program));
    }
    for reader in &df.nodes {
        for input in &reader.inputs {
            let (from, name) = match &input.source {
                InputSource::Timer { interval } => (timer_key(*interval), input.id.clone()),
                InputSource::Output { node, output } if *output == input.id => (node_key(node), output.clone()),
                InputSource::Output { node, output } => (node_key(node), format!("{output} as {}", input.id)),
                InputSource::Topic { topic } => (topic_key(topic), input.id.clone()),
                InputSource::Logs { .. } => (logs_key(&input.source.to_string()), input.id.clone()),
            };
            let _ =
                writeln!(out, "    {from} -- \"{}{}\" --> {}", label(&name), queue_note(input), node_key(&reader.id));
        }
    }
    // A request (or goal) goes from each caller through the service (or action) to each server.
    for &(kind, _, _, calls) in &SERVED {
        for node in &df.nodes {
            for name in &declared(node, kind).call {
                let _ = writeln!(out, "    {} -. \"{calls}\" .-> {}", node_key(&node.id), served_key(kind, name));
            }
            for name in &declared(node, kind).serve {
                let _ = writeln!(out, "    {} -. \"served by\" .-> {}", served_key(kind, name), node_key(&node.id));
            }
        }
    }
    let mut unread = Vec::new();
    for node in &df.nodes {
        for output in &node.outputs {
            if let Some(topic) = node.output_topics.get(output) {
                let _ = writeln!(out, "    {} -- \"{}\" --> {}", node_key(&node.id), label(output), topic_key(topic));
            } else if df.readers_of(&node.id, output).is_empty() {
                let point = format!("out_{}_o{}", escape_key(&node.id), escape_key(output));
                let _ = writeln!(out, "    {point}((\" \"))");
                let _ = writeln!(out, "    {} -. \"{}\" .-> {point}", node_key(&node.id), label(output));
                unread.push(point);
            }
        }
    }
    out.push_str("    classDef timer fill:#fff5d6,stroke:#c9a227\n");
    out.push_str("    classDef topic fill:#e3efff,stroke:#4a78b5\n");
    out.push_str("    classDef service fill:#eaf7e6,stroke:#4c9a3a\n");
    out.push_str("    classDef action fill:#f3e8fb,stroke:#8a4bb0\n");
    out.push_str("    classDef dynamic fill:#f4f4f4,stroke:#777,stroke-dasharray:5 5\n");
    out.push_str("    classDef unread fill:#ccc,stroke:#999\n");
    let timer_keys: Vec<String> = timers.iter().map(|t| timer_key(*t)).collect();
    let topic_keys: Vec<String> = topics.iter().map(|t| topic_key(t)).collect();
    let dynamic: Vec<String> =
        df.nodes.iter().filter(|n| n.path == NodePath::Dynamic).map(|n| node_key(&n.id)).collect();
    let classes = [(timer_keys, "timer"), (topic_keys, "topic")]
        .into_iter()
        .chain(served_keys)
        .chain([(dynamic, "dynamic"), (unread, "unread")]);
    for (keys, class) in classes {
        if !keys.is_empty() {
            let _ = writeln!(out, "    class {} {class}", keys.join(","));
        }
    }
    out
}

/// A standalone HTML page showing [`mermaid`]'s chart, drawn by the Mermaid renderer the page
/// carries: it needs no network.
pub fn html(df: &Dataflow) -> String {
    let name = df.file.display().to_string();
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>nerve graph: {title}</title>
<style>
  body {{ font-family: sans-serif; margin: 2em; }}
  .note {{ color: #666; font-size: 0.9em; }}
</style>
</head>
<body>
<h1>{title}</h1>
<p class="note">Drawn by <code>nerve graph</code> with <a href="https://mermaid.js.org">Mermaid</a>
(MIT license), which this page carries.</p>
<pre class="mermaid">
{chart}</pre>
<script>{renderer}</script>
<script>mermaid.initialize({{ startOnLoad: true, securityLevel: "strict" }});</script>
</body>
</html>
"#,
        title = html_escape(&name),
        chart = html_escape(&mermaid(df)),
        // A script ends at the first `</script`: the renderer has none (a test checks).
        renderer = MERMAID_JS,
    )
}

/// [`mermaid`] in a fenced block, which Markdown viewers such as GitHub draw.
fn markdown(df: &Dataflow) -> String {
    format!("```mermaid\n{}```\n", mermaid(df))
}

fn queue_note(input: &InputSpec) -> String {
    // The default a reader would assume: topics only ever drop, so saying so adds nothing.
    let default_policy = match input.source {
        InputSource::Topic { .. } | InputSource::Logs { .. } => QueuePolicy::DropOldest,
        InputSource::Output { .. } | InputSource::Timer { .. } => QueuePolicy::Backpressure,
    };
    if input.queue_size == DEFAULT_QUEUE_SIZE && input.policy == default_policy {
        return String::new();
    }
    format!(" [queue {}, {}]", input.queue_size, input.policy)
}

/// `ROS 2 /chatter, /cmd_vel`, `ROS 2 service /enable` or `ROS 2 action /dock`.
fn ros2_label(bridge: &nerve_spec::ros2::Ros2Bridge) -> String {
    match (&bridge.service, &bridge.action) {
        (Some(service), _) => format!("ROS 2 service {}", service.service),
        (_, Some(action)) => format!("ROS 2 action {}", action.action),
        _ => format!("ROS 2 {}", bridge.topics.iter().map(|t| t.topic.as_str()).collect::<Vec<_>>().join(", ")),
    }
}

fn node_key(id: &str) -> String {
    format!("n_{}", escape_key(id))
}

/// `dora/logs/info/cam` as a Mermaid key.
fn logs_key(source: &str) -> String {
    escape_key(source)
}

fn topic_key(topic: &str) -> String {
    format!("topic_{}", escape_key(topic))
}

/// How services and actions are drawn: the kind (and key prefix), the Mermaid shape's opening
/// and closing, and the label of a caller's edge.
const SERVED: [(&str, &str, &str, &str); 2] =
    [("service", "[/", "/]", "calls"), ("action", "[\\", "\\]", "sends goals")];

/// What `node` declares under `services:` or `actions:`.
fn declared<'a>(node: &'a NodeSpec, kind: &str) -> &'a ServicesSpec {
    if kind == "action" { &node.actions } else { &node.services }
}

fn served_key(kind: &str, name: &str) -> String {
    format!("{kind}_{}", escape_key(name))
}

fn timer_key(interval: Duration) -> String {
    let nanos = interval.as_nanos();
    if nanos.is_multiple_of(1_000_000) {
        format!("timer_millis_{}", nanos / 1_000_000)
    } else {
        format!("timer_nanos_{nanos}")
    }
}

fn human_interval(interval: Duration) -> String {
    const NANOS_PER_SEC: u128 = 1_000_000_000;
    let nanos = interval.as_nanos();
    if let Some((scale, unit)) = [(NANOS_PER_SEC, "s"), (1_000_000, "ms"), (1_000, "µs")]
        .into_iter()
        .find(|(scale, _)| nanos.is_multiple_of(*scale))
    {
        return format!("{} {unit}", nanos / scale);
    }
    // `timer/hz/N` intervals are rarely whole: say them the way they were written.
    let hz = NANOS_PER_SEC / nanos;
    if hz > 0 && NANOS_PER_SEC / hz == nanos {
        return format!("{hz} Hz");
    }
    format!("{nanos} ns")
}

/// Turns an id or a topic name into Mermaid key characters (`[A-Za-z0-9_]`), one-to-one:
/// `_` doubles, `-` becomes `_h`, `.` becomes `_d`, `/` becomes `_s`. Keys also get a kind
/// prefix, which keeps them clear of Mermaid keywords such as `end` and of a leading digit.
fn escape_key(id: &str) -> String {
    let mut key = String::with_capacity(id.len());
    for c in id.chars() {
        match c {
            c if c.is_ascii_alphanumeric() => key.push(c),
            '_' => key.push_str("__"),
            '-' => key.push_str("_h"),
            '.' => key.push_str("_d"),
            '/' => key.push_str("_s"),
            // Valid ids and topics never get here; the code point keeps the key one-to-one anyway.
            other => {
                let _ = write!(key, "_u{:x}_", u32::from(other));
            }
        }
    }
    key
}

/// Text safe inside a quoted Mermaid label: quotes, markup and `#` (which starts an
/// entity) become Mermaid entity codes; line breaks become spaces.
fn label(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' | '<' | '>' | '&' | '#' | '`' | '|' => {
                let _ = write!(out, "#{};", u32::from(c));
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A file-name-safe form of `text` for the temporary page's name.
fn file_name_part(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// The last part of `path`, as the graph labels a node's program.
fn file_name(path: &std::path::Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |f| f.to_string_lossy().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Dataflow {
        nerve_spec::parse_str(yaml, Path::new("/nonexistent/dataflow.yml")).expect("valid")
    }

    const PAIR: &str = r"
nodes:
  - id: camera
    path: dynamic
    inputs:
      tick: dora/timer/millis/10
    outputs: [image, depth]
  - id: viewer
    path: dynamic
    inputs:
      frame:
        source: camera/image
        queue_size: 1
        queue_policy: drop_oldest
      slow: dora/timer/secs/2
  - id: logger
    path: dynamic
    inputs:
      image: camera/image
      again: dora/timer/millis/10
";

    #[test]
    fn ros_2_bridges_show_what_they_bridge() {
        let chart = mermaid(&parse(
            "
nodes:
  - id: cam
    ros2: {topic: /camera/image, message_type: sensor_msgs/Image}
    outputs: [image]
  - id: enable
    ros2: {service: /enable, service_type: std_srvs/SetBool, role: client}
    inputs: {ask: dora/timer/millis/10}
    outputs: [answer]
",
        ));
        for line in [
            "n_cam[\"cam<br/><small>ROS 2 /camera/image</small>\"]",
            "n_enable[\"enable<br/><small>ROS 2 service /enable</small>\"]",
        ] {
            assert!(chart.contains(&format!("    {line}\n")), "missing `{line}` in\n{chart}");
        }
    }

    #[test]
    fn services_are_drawn_between_callers_and_servers() {
        let chart = mermaid(&parse(
            "
nodes:
  - id: planner
    path: dynamic
    services: {serve: [plan], call: [arm/move]}
  - id: ui
    path: dynamic
    services: {call: [plan]}
  - id: arm
    path: dynamic
    services:
      serve: arm/move
",
        ));
        for line in [
            "service_plan[/\"service/plan\"/]",
            "service_arm_smove[/\"service/arm/move\"/]",
            "n_ui -. \"calls\" .-> service_plan",
            "service_plan -. \"served by\" .-> n_planner",
            "n_planner -. \"calls\" .-> service_arm_smove",
            "service_arm_smove -. \"served by\" .-> n_arm",
            "class service_arm_smove,service_plan service",
        ] {
            assert!(chart.contains(&format!("    {line}\n")), "missing `{line}` in\n{chart}");
        }
        assert_eq!(chart.matches("[/\"service/plan\"/]").count(), 1, "{chart}");
    }

    #[test]
    fn actions_are_drawn_apart_from_services() {
        let chart = mermaid(&parse(
            "
nodes:
  - id: navigator
    path: dynamic
    actions: {serve: [navigate], call: [arm/move]}
    services: {serve: [navigate]}
  - id: ui
    path: dynamic
    actions: {call: navigate}
  - id: arm
    path: dynamic
    actions: {serve: [arm/move]}
",
        ));
        for line in [
            "action_navigate[\\\"action/navigate\"\\]",
            "service_navigate[/\"service/navigate\"/]",
            "n_ui -. \"sends goals\" .-> action_navigate",
            "action_navigate -. \"served by\" .-> n_navigator",
            "n_navigator -. \"sends goals\" .-> action_arm_smove",
            "action_arm_smove -. \"served by\" .-> n_arm",
            "class action_arm_smove,action_navigate action",
            "class service_navigate service",
        ] {
            assert!(chart.contains(&format!("    {line}\n")), "missing `{line}` in\n{chart}");
        }
    }

    #[test]
    fn edges_timers_and_unread_outputs() {
        let chart = mermaid(&parse(PAIR));
        assert!(chart.starts_with("flowchart TB\n"), "{chart}");
        for line in [
            "timer_millis_10([\"timer 10 ms\"])",
            "timer_millis_2000([\"timer 2 s\"])",
            "n_camera[\"camera<br/><small>dynamic</small>\"]",
            "timer_millis_10 -- \"tick\" --> n_camera",
            "n_camera -- \"image as frame [queue 1, drop_oldest]\" --> n_viewer",
            "timer_millis_2000 -- \"slow\" --> n_viewer",
            "n_camera -- \"image\" --> n_logger",
            "timer_millis_10 -- \"again\" --> n_logger",
            "out_camera_odepth((\" \"))",
            "n_camera -. \"depth\" .-> out_camera_odepth",
            "class timer_millis_10,timer_millis_2000 timer",
            "class n_camera,n_viewer,n_logger dynamic",
            "class out_camera_odepth unread",
        ] {
            assert!(chart.contains(&format!("    {line}\n")), "missing `{line}` in\n{chart}");
        }
        // One stadium per distinct interval, however many inputs use it.
        assert_eq!(chart.matches("([\"timer 10 ms\"])").count(), 1, "{chart}");
    }

    #[test]
    fn topics_are_hexagons_between_nodes_and_topics() {
        let chart = mermaid(&parse(
            "nodes:
  - id: camera
    path: dynamic
    inputs:
      pose: topic/robot/pose
    outputs:
      - id: image
        topic: camera/image
      - id: depth
        topic: camera/depth
  - id: viewer
    path: dynamic
    inputs:
      image: camera/image
      tf:
        source: topic/tf
        queue_size: 1
      again: topic/robot/pose
    outputs:
      - id: overlay
        topic: camera/image
",
        ));
        for line in [
            "topic_robot_spose{{\"topic/robot/pose\"}}",
            "topic_camera_simage{{\"topic/camera/image\"}}",
            "topic_tf{{\"topic/tf\"}}",
            "topic_robot_spose -- \"pose\" --> n_camera",
            "topic_robot_spose -- \"again\" --> n_viewer",
            "topic_tf -- \"tf [queue 1, drop_oldest]\" --> n_viewer",
            "n_camera -- \"image\" --> topic_camera_simage",
            "n_camera -- \"image\" --> n_viewer",
            "n_camera -- \"depth\" --> topic_camera_sdepth",
            "n_viewer -- \"overlay\" --> topic_camera_simage",
            "class topic_camera_sdepth,topic_camera_simage,topic_robot_spose,topic_tf topic",
        ] {
            assert!(chart.contains(&format!("    {line}\n")), "missing `{line}` in\n{chart}");
        }
        // One hexagon per topic; outputs published on a topic are not "unread".
        assert_eq!(chart.matches("{{\"topic/camera/image\"}}").count(), 1, "{chart}");
        assert!(!chart.contains("out_"), "{chart}");
    }

    #[test]
    fn only_non_default_queues_are_annotated() {
        let chart = mermaid(&parse(
            "nodes:\n  - id: a\n    path: dynamic\n    outputs: [x]\n  - id: b\n    path: dynamic\n    inputs:\n      x: a/x\n      y:\n        source: a/x\n        queue_size: 3\n",
        ));
        assert!(chart.contains("n_a -- \"x\" --> n_b\n"), "{chart}");
        assert!(chart.contains("n_a -- \"x as y [queue 3, backpressure]\" --> n_b\n"), "{chart}");
    }

    #[test]
    fn awkward_ids_make_distinct_plain_keys() {
        let ids = ["end", "a-b", "a_hb", "a.b", "a_db", "1x", "o", "x-", "a/b", "a_sb"];
        let keys: BTreeSet<String> = ids.iter().map(|id| node_key(id)).collect();
        assert_eq!(keys.len(), ids.len(), "{keys:?}");
        for key in &keys {
            assert!(key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "{key}");
            assert!(key.starts_with("n_"), "{key}");
        }
        let chart = mermaid(&parse(
            "nodes:\n  - id: end\n    path: dynamic\n    outputs: [a.b-c]\n  - id: x-.y\n    path: dynamic\n    inputs:\n      i: end/a.b-c\n",
        ));
        assert!(chart.contains("n_end -- \"a.b-c as i\" --> n_x_h_dy\n"), "{chart}");
    }

    #[test]
    fn labels_escape_mermaid_and_html() {
        assert_eq!(label("a\"b<c>#&"), "a#34;b#60;c#62;#35;#38;");
        assert_eq!(label("two\nlines"), "two lines");
        assert_eq!(html_escape("<a href=\"x\">&</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;");
    }

    #[test]
    fn program_file_names_in_labels() {
        let mut df = parse("nodes:\n  - id: cam\n    path: dynamic\n");
        df.nodes[0].path = NodePath::Python(PathBuf::from("/robot/nodes/cam\"era.py"));
        let chart = mermaid(&df);
        assert!(chart.contains("n_cam[\"cam<br/><small>cam#34;era.py</small>\"]"), "{chart}");
        assert!(!chart.contains("class n_cam dynamic"), "{chart}");
    }

    #[test]
    fn intervals() {
        assert_eq!(timer_key(Duration::from_millis(10)), "timer_millis_10");
        assert_eq!(timer_key(Duration::from_nanos(333_333_333)), "timer_nanos_333333333");
        assert_eq!(human_interval(Duration::from_secs(3)), "3 s");
        assert_eq!(human_interval(Duration::from_millis(1500)), "1500 ms");
        assert_eq!(human_interval(Duration::from_micros(20)), "20 µs");
        assert_eq!(human_interval(Duration::from_nanos(333_333_333)), "3 Hz");
        assert_eq!(human_interval(Duration::from_nanos(142_857_142)), "7 Hz");
        assert_eq!(human_interval(Duration::from_nanos(1_234_568)), "1234568 ns");
    }

    #[test]
    fn html_page_embeds_the_escaped_chart_and_the_renderer() {
        let df = parse(PAIR);
        let page = html(&df);
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(!MERMAID_JS.contains("</script"), "the renderer would end its script element early");
        assert!(page.contains(&format!("<script>{MERMAID_JS}</script>")));
        assert!(!page.contains("src=\"http"), "the page loads nothing from the network");
        assert!(page.contains(&html_escape(&mermaid(&df))));
        assert!(page.contains("n_camera[&quot;camera&lt;br/&gt;"), "{page}");
        assert!(markdown(&df).starts_with("```mermaid\nflowchart TB\n"));
    }

    #[test]
    fn formats_by_extension() {
        assert_eq!(Format::of(Path::new("g.HTML")), Format::Html);
        assert_eq!(Format::of(Path::new("g.htm")), Format::Html);
        assert_eq!(Format::of(Path::new("g.md")), Format::Markdown);
        assert_eq!(Format::of(Path::new("g.mmd")), Format::Mermaid);
        assert_eq!(Format::of(Path::new("graph")), Format::Mermaid);
    }
}

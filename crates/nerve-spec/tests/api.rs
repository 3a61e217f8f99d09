//! Behaviour that fixtures cannot show well: machine-dependent paths, generated
//! hostile input, and the accessors of the public API.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nerve_spec::{
    DEFAULT_QUEUE_SIZE, Dataflow, InputSource, MAX_DEPTH, MAX_READERS_PER_OUTPUT, NodePath, QueuePolicy, SpecError,
};

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases")
}

fn parse(text: &str) -> Result<Dataflow, SpecError> {
    nerve_spec::parse_str(text, &cases_dir().join("generated.yml"))
}

fn problems(text: &str) -> Vec<String> {
    match parse(text) {
        Ok(_) => panic!("expected problems for:\n{text}"),
        Err(e) => e.problems().iter().map(|p| format!("{}:{}: {}: {}", p.line, p.column, p.field, p.message)).collect(),
    }
}

/// Runs `f` on a thread with a stack far too small for recursion per nesting
/// level of a 100 000-deep document, so a recursive parser would crash here.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .expect("spawn thread")
        .join()
        .expect("parser must not overflow its stack")
}

fn assert_nesting_refused(text: String) {
    let found = on_small_stack(move || problems(&text));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("(yaml)"), "{found:?}");
    assert!(found[0].contains("nest"), "{found:?}");
}

#[test]
fn deeply_nested_flow_sequences_are_refused_without_recursion() {
    assert_nesting_refused("[".repeat(100_000));
    assert_nesting_refused(format!("nodes:\n  - id: a\n    path: dynamic\n    env: {}", "[".repeat(100_000)));
}

#[test]
fn deeply_nested_flow_mappings_are_refused_without_recursion() {
    assert_nesting_refused("{a: ".repeat(100_000));
}

#[test]
fn deeply_nested_block_collections_are_refused_without_recursion() {
    assert_nesting_refused("- ".repeat(100_000) + "x\n");
    let mut text = String::new();
    for depth in 0..10_000 {
        let _ = writeln!(text, "{}k:", " ".repeat(depth));
    }
    assert_nesting_refused(text);
}

#[test]
fn nesting_up_to_the_limit_is_accepted() {
    // Two levels are taken by the top mapping and the node list, two by the
    // node mapping and `args`' list... the rest may nest inside `args`.
    let inner = MAX_DEPTH - 4;
    let text =
        format!("nodes:\n  - id: a\n    path: dynamic\n    args: [x, {}{}]\n", "[".repeat(inner), "]".repeat(inner));
    let found = problems(&text);
    // Nesting is fine; only a list as an argument is not.
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("args[1]: expected a string"), "{found:?}");

    let too_deep = format!(
        "nodes:\n  - id: a\n    path: dynamic\n    args: [x, {}{}]\n",
        "[".repeat(inner + 1),
        "]".repeat(inner + 1)
    );
    assert!(problems(&too_deep)[0].contains("nest deeper than the limit"));
}

#[test]
fn alias_bombs_are_refused() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let p = i - 1;
        let _ = writeln!(text, "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]");
    }
    let found = problems(&text);
    assert!(found[0].contains("more than"), "{found:?}");
}

#[test]
fn program_on_path_is_resolved() {
    let dataflow = nerve_spec::load(&cases_dir().join("valid-path-lookup.yml")).expect("loads");
    let shell = dataflow.node("shell").expect("declared");
    match &shell.path {
        NodePath::Executable(path) => {
            assert!(path.is_absolute(), "{path:?}");
            assert!(path.is_file(), "{path:?}");
            assert_eq!(path.file_name().and_then(|n| n.to_str()), Some("sh"));
        }
        other => panic!("expected an executable found on PATH, got {other:?}"),
    }
    assert_eq!(shell.args, ["-c", "cat"]);
}

#[test]
fn base_dir_is_the_canonical_directory_of_the_file() {
    let dataflow = nerve_spec::load(&cases_dir().join("valid-minimal.yml")).expect("loads");
    assert_eq!(dataflow.base_dir, cases_dir().canonicalize().expect("exists"));
    assert_eq!(dataflow.file, cases_dir().join("valid-minimal.yml"));

    // A bare file name is relative to the working directory.
    let dataflow = nerve_spec::parse_str("nodes: [{id: a, path: dynamic}]", Path::new("dataflow.yml")).expect("valid");
    let cwd = std::env::current_dir().expect("cwd");
    assert_eq!(dataflow.base_dir, cwd.canonicalize().unwrap_or(cwd));
}

#[test]
fn relative_paths_resolve_against_the_file_not_the_working_directory() {
    let nested = cases_dir().join("nodes").join("dataflow.yml");
    let dataflow = nerve_spec::parse_str(
        "nodes:\n  - id: l\n    path: listener\n  - id: t\n    path: ../nodes/talker.py\n",
        &nested,
    )
    .expect("valid");
    let dir = cases_dir().canonicalize().expect("exists");
    assert_eq!(dataflow.nodes[0].path, NodePath::Executable(dir.join("nodes/listener")));
    assert_eq!(dataflow.nodes[1].path, NodePath::Python(dir.join("nodes/../nodes/talker.py")));
}

#[test]
fn readers_are_listed_in_declaration_order() {
    let dataflow = parse(
        "nodes:
  - id: camera
    path: dynamic
    outputs: [image, depth]
  - id: b
    path: dynamic
    inputs:
      second: camera/image
      first: camera/image
      other: camera/depth
  - id: a
    path: dynamic
    inputs:
      img: camera/image
",
    )
    .expect("valid");
    let pair = |n: &str, i: &str| (n.to_owned(), i.to_owned());
    assert_eq!(dataflow.readers_of("camera", "image"), [pair("b", "second"), pair("b", "first"), pair("a", "img")]);
    assert_eq!(dataflow.readers_of("camera", "depth"), [pair("b", "other")]);
    assert!(dataflow.readers_of("camera", "nothing").is_empty());
    assert!(dataflow.readers_of("nobody", "image").is_empty());
    assert!(dataflow.node("a").is_some());
    assert!(dataflow.node("camera/image").is_none());

    let input = &dataflow.node("b").expect("declared").inputs[0];
    assert_eq!(input.id, "second");
    assert_eq!(input.queue_size, DEFAULT_QUEUE_SIZE);
    assert_eq!(input.policy, QueuePolicy::Backpressure);
    assert_eq!(input.line, 8);
    assert_eq!(input.source.to_string(), "camera/image");
}

fn fan_in(readers: usize) -> String {
    let mut text = String::from("nodes:\n  - id: src\n    path: dynamic\n    outputs: [out]\n");
    for i in 0..readers {
        let _ = write!(text, "  - id: r{i}\n    path: dynamic\n    inputs:\n      x: src/out\n");
    }
    text
}

#[test]
fn readers_per_output_are_capped() {
    let dataflow = parse(&fan_in(MAX_READERS_PER_OUTPUT)).expect("63 readers are fine");
    assert_eq!(dataflow.readers_of("src", "out").len(), MAX_READERS_PER_OUTPUT);
    let found = problems(&fan_in(MAX_READERS_PER_OUTPUT + 1));
    assert_eq!(found, ["4:15: nodes[src].outputs[0]: output `src/out` has 64 readers, more than the limit of 63"]);
}

#[test]
fn node_config_is_the_node_mapping_as_json() {
    let dataflow = parse(
        "nodes:
  - id: cam
    path: dynamic
    env: {WIDTH: 640, NAME: left}
    inputs:
      tick: {source: dora/timer/hz/30, queue_size: 1, queue_policy: drop_oldest}
",
    )
    .expect("valid");
    let cam = dataflow.node("cam").expect("declared");
    assert_eq!(
        cam.config,
        serde_json::json!({
            "id": "cam",
            "path": "dynamic",
            "env": {"WIDTH": 640, "NAME": "left"},
            "inputs": {"tick": {"source": "dora/timer/hz/30", "queue_size": 1, "queue_policy": "drop_oldest"}},
        })
    );
    assert_eq!(dataflow.descriptor["nodes"][0], cam.config);
    assert_eq!(cam.env["WIDTH"], "640");
    assert_eq!(cam.inputs[0].source, InputSource::Timer { interval: Duration::from_nanos(33_333_333) });
    assert_eq!(cam.inputs[0].policy, QueuePolicy::DropOldest);
    assert_eq!(cam.line, 2);
}

#[test]
fn display_has_one_line_per_problem() {
    let err = nerve_spec::parse_str(
        "nodes:\n  - id: a\n    path: dynamic\n    inputs: {x: b/c, y: timer/hz/0}\n",
        Path::new("flow.yml"),
    )
    .expect_err("invalid");
    assert_eq!(
        err.to_string(),
        "flow.yml:4:17: nodes[a].inputs.x: unknown source node `b` (known nodes: a)\n\
         flow.yml:4:25: nodes[a].inputs.y: bad timer `timer/hz/0`: N must be a positive number, found `0`"
    );
    assert_eq!(err.problems().len(), 2);
    assert_eq!(err.problems()[1].line, 4);
    assert_eq!(err.problems()[1].column, 25);
    assert_eq!(err.problems()[1].field, "nodes[a].inputs.y");
}

#[test]
fn unreadable_files_are_io_errors() {
    let missing = cases_dir().join("no-such-file.yml");
    match nerve_spec::load(&missing) {
        Err(SpecError::Io { file, source }) => {
            assert_eq!(file, missing);
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("expected an I/O error, got {other:?}"),
    }
    let err = nerve_spec::load(&missing).expect_err("missing");
    assert!(err.to_string().contains("no-such-file.yml"), "{err}");
    assert!(err.problems().is_empty());
}

#[test]
fn large_dataflows_load_quickly() {
    // A chain of nodes, each reading the previous one: catches accidental
    // quadratic checks, which would take minutes here.
    let count = 20_000;
    let mut text = String::from("nodes:\n");
    for i in 0..count {
        let _ = write!(text, "  - id: n{i}\n    path: dynamic\n    outputs: [o]\n");
        if i > 0 {
            let _ = writeln!(text, "    inputs: {{i: n{}/o}}", i - 1);
        }
    }
    let started = std::time::Instant::now();
    let dataflow = parse(&text).expect("valid");
    assert_eq!(dataflow.nodes.len(), count);
    assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());

    // Typos in a huge dataflow list a bounded number of known nodes.
    let text = text + "  - id: typo\n    path: dynamic\n    inputs: {i: nope/o}\n";
    let found = problems(&text);
    assert_eq!(found.len(), 1);
    assert!(found[0].contains("… and 19981 more)"), "{}", found[0]);
}

#[test]
fn types_round_trip_through_serde() {
    let dataflow = nerve_spec::load(&cases_dir().join("valid-dora-python-dataflow.yml")).expect("loads");
    let json = serde_json::to_string(&dataflow).expect("serializes");
    let back: Dataflow = serde_json::from_str(&json).expect("deserializes");
    assert_eq!(back, dataflow);
}

#[test]
fn byte_order_mark_and_crlf_line_ends_are_accepted() {
    let dataflow = parse("\u{feff}nodes:\r\n  - id: a\r\n    path: dynamic\r\n    outputs: [o]\r\n").expect("valid");
    assert_eq!(dataflow.nodes[0].outputs, ["o"]);
    assert_eq!(dataflow.nodes[0].line, 2);
}

#[test]
fn topics_are_inputs_and_outputs_but_not_edges() {
    let dataflow = nerve_spec::load(&cases_dir().join("valid-topics.yml")).expect("loads");
    let camera = dataflow.node("camera").expect("declared");
    let pose = &camera.inputs[1];
    assert_eq!(pose.source, InputSource::Topic { topic: "robot/pose".to_owned() });
    assert_eq!(pose.source.to_string(), "topic/robot/pose");
    // Topic inputs drop by default; node inputs keep their backpressure default.
    assert_eq!(pose.policy, QueuePolicy::DropOldest);
    assert_eq!(pose.queue_size, DEFAULT_QUEUE_SIZE);
    assert_eq!(camera.inputs[0].policy, QueuePolicy::Backpressure);
    assert_eq!(camera.outputs, ["image", "depth", "info"]);
    let topics: Vec<(&str, &str)> = camera.output_topics.iter().map(|(o, t)| (o.as_str(), t.as_str())).collect();
    assert_eq!(topics, [("depth", "camera/depth"), ("info", "camera/info")]);

    let viewer = dataflow.node("viewer").expect("declared");
    assert_eq!(viewer.inputs[2].source, InputSource::Topic { topic: "tf".to_owned() });
    assert_eq!(viewer.inputs[2].queue_size, 1);
    assert_eq!(viewer.output_topics.get("overlay").map(String::as_str), Some("camera/depth"));
    assert!(!viewer.output_topics.contains_key("plain"));

    // A topic is not an output of any node, whoever publishes it.
    assert_eq!(dataflow.readers_of("camera", "depth"), [("viewer".to_owned(), "depth".to_owned())]);
    assert!(dataflow.readers_of("topic", "tf").is_empty());
    assert!(dataflow.readers_of("robot", "pose").is_empty());
}

#[test]
fn topic_readers_do_not_count_against_the_reader_limit() {
    let mut text = String::from("nodes:\n");
    for i in 0..=MAX_READERS_PER_OUTPUT {
        let _ = write!(text, "  - id: r{i}\n    path: dynamic\n    inputs:\n      x: topic/shared\n");
    }
    let dataflow = parse(&text).expect("any number of nodes may read one topic");
    assert_eq!(dataflow.nodes.len(), MAX_READERS_PER_OUTPUT + 1);
}

#[test]
fn topic_problems_point_at_the_source() {
    let found = problems(
        "nodes:
  - id: a
    path: dynamic
    inputs:
      x: {source: topic//tf, queue_size: 2}
    outputs:
      - {id: o, topic: a/../b}
",
    );
    let segments = "segments between `/` must be non-empty and not `.` or `..`";
    assert_eq!(
        found,
        [
            format!("5:19: nodes[a].inputs.x.source: bad topic `topic//tf`: {segments}"),
            format!("7:24: nodes[a].outputs[0].topic: bad topic `a/../b`: {segments}"),
        ]
    );
}

#[test]
fn network_is_read_and_absent_means_unset() {
    let df = parse(
        "network:\n  discovery_range: subnet\n  connect: [tcp/10.0.0.2:7447]\nnodes:\n  - id: n\n    path: dynamic\n",
    )
    .expect("valid");
    assert_eq!(df.network.discovery_range, Some(nerve_spec::DiscoveryRange::Subnet));
    assert_eq!(df.network.connect, ["tcp/10.0.0.2:7447"]);
    let plain = parse("nodes:\n  - id: n\n    path: dynamic\n").expect("valid");
    assert_eq!(plain.network, nerve_spec::NetworkSpec::default());
}

#[test]
fn on_failure_is_the_dataflows_default_unless_a_node_says_its_own() {
    let df = parse(
        "on_failure: stop_all\nnodes:\n  - id: a\n    path: dynamic\n  - id: b\n    path: dynamic\n    on_failure: continue\n",
    )
    .expect("valid");
    let policies: Vec<_> = df.nodes.iter().map(|n| n.on_failure).collect();
    assert_eq!(policies, [Some(nerve_spec::FailurePolicy::StopAll), Some(nerve_spec::FailurePolicy::Continue)]);
    assert_eq!(parse("nodes:\n  - id: a\n    path: dynamic\n").expect("valid").nodes[0].on_failure, None);
    assert_eq!(
        problems("on_failure: stop\nnodes:\n  - id: a\n    path: dynamic\n    on_failure: [x]\n"),
        [
            "1:13: on_failure: expected continue or stop_all, found `stop`",
            "5:17: nodes[a].on_failure: expected continue or stop_all, found a list"
        ]
    );
}

//! From a validated dataflow to every node's channel table.

use std::collections::BTreeSet;

use nerve_message::channel_table::{
    Called, CalledKind, InboxSpec, InputChannel, OutputChannel, Policy, QueueShape, ReaderChannel, TOPIC_FEEDS,
};
use nerve_message::{ChannelTable, log_record};
use nerve_spec::{DEFAULT_QUEUE_SIZE, Dataflow, InputSource};

/// One reader edge of an output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// Reader node index.
    pub reader: usize,
    /// Reader's input id.
    pub input: String,
    /// Queue index in the reader's inbox.
    pub queue: usize,
    /// Edge number on the output (holder bit).
    pub edge: usize,
}

/// Every node's channels, computed once before anything starts.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Per node: its inbox's queues (one per shared-memory input).
    pub inboxes: Vec<Vec<QueueShape>>,
    /// Per node, per output: the output id and its reader edges.
    pub outputs: Vec<Vec<(String, Vec<Edge>)>>,
    /// Per node: its inputs' channels.
    pub inputs: Vec<Vec<InputChannel>>,
    /// Per node: the first queue of its areas for inputs connected at run time, after those of
    /// its declared inputs.
    pub spare: Vec<usize>,
}

/// Inputs a node can be given while it runs (`nerve node connect`), over the whole run: each
/// takes an area of its inbox that is never given again, since a publisher may still write
/// into a queue for a moment after its subscriber has left.
pub const SPARE_INPUTS: usize = 4;

/// The queues of an input connected at run time: a topic's, of the default size.
pub const CONNECTED_QUEUE: QueueShape = QueueShape { capacity: DEFAULT_QUEUE_SIZE, policy: Policy::DropOldest };

/// How a node's inputs from other nodes' outputs are fed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Feed {
    /// Through shared-memory edges that the writer fills directly: a dataflow's own nodes.
    Edges,
    /// Through the outputs' topics: a node added while its writers run.
    Topics,
}

/// The outputs a node's process writes: nerve writes those that carry its log.
fn written_outputs(node: &nerve_spec::NodeSpec) -> Vec<(String, Vec<Edge>)> {
    node.outputs.iter().filter(|o| !node.logs.carries(o)).map(|o| (o.clone(), Vec::new())).collect()
}

/// The topic output `output` of node `node` is also published on: the one the dataflow names,
/// or `<node>/<output>` in the run's scope (see `nerve_node`'s outputs).
#[must_use]
pub fn output_topic(df: &Dataflow, node: &str, output: &str) -> String {
    df.node(node).and_then(|n| n.output_topics.get(output).cloned()).unwrap_or_else(|| format!("{node}/{output}"))
}

impl Plan {
    /// Lays out queues and edges for `df`.
    #[must_use]
    pub fn new(df: &Dataflow) -> Self {
        let mut plan = Self {
            inboxes: vec![Vec::new(); df.nodes.len()],
            outputs: df.nodes.iter().map(written_outputs).collect(),
            inputs: vec![Vec::new(); df.nodes.len()],
            spare: Vec::new(),
        };
        for r in 0..df.nodes.len() {
            plan.lay_inputs(df, r, Feed::Edges);
        }
        plan
    }

    /// Lays out the last node of `df`, added to the running dataflow this plan was made for
    /// (`nerve node add`): the outputs it reads come to it as their topics, since their
    /// writers, already running, hand their messages only to the readers they started with.
    pub fn add_node(&mut self, df: &Dataflow) {
        let r = df.nodes.len() - 1;
        self.inboxes.push(Vec::new());
        self.outputs.push(written_outputs(&df.nodes[r]));
        self.inputs.push(Vec::new());
        self.lay_inputs(df, r, Feed::Topics);
    }

    /// The first queue of node `n`'s `k`th area for inputs connected at run time (`nerve node
    /// connect`): [`TOPIC_FEEDS`] queues of [`CONNECTED_QUEUE`].
    #[must_use]
    pub fn spare_area(&self, n: usize, k: usize) -> usize {
        self.spare[n] + k * TOPIC_FEEDS
    }

    fn lay_inputs(&mut self, df: &Dataflow, r: usize, feed: Feed) {
        let Self { inboxes, outputs, inputs, spare } = self;
        let node = &df.nodes[r];
        let index = |id: &str| df.nodes.iter().position(|n| n.id == id);
        for input in node.inputs.iter().filter(|input| !node.in_process(input)) {
            // The node subscribes itself, with one queue per publisher process in its
            // inbox: the topic's messages ring the node's doorbell like any input's.
            let mut from_topic = |topic: String| {
                let queue = inboxes[r].len();
                let shape = QueueShape { capacity: input.queue_size, policy: Policy::DropOldest };
                inboxes[r].extend(std::iter::repeat_n(shape, TOPIC_FEEDS));
                inputs[r].push(InputChannel::Topic {
                    id: input.id.clone(),
                    topic,
                    queue_size: input.queue_size,
                    queue,
                });
            };
            match &input.source {
                InputSource::Timer { interval } => inputs[r].push(InputChannel::Timer {
                    id: input.id.clone(),
                    period_ns: u64::try_from(interval.as_nanos()).unwrap_or(u64::MAX),
                }),
                InputSource::Topic { topic } => from_topic(topic.clone()),
                InputSource::Logs { .. } => from_topic(log_record::input_feed(&node.id, &input.id)),
                InputSource::Output { node: p, output } if df.node(p).is_some_and(|n| n.logs.carries(output)) => {
                    from_topic(log_record::output_feed(p, output));
                }
                InputSource::Output { node: p, output } if feed == Feed::Topics => {
                    from_topic(output_topic(df, p, output));
                }
                InputSource::Output { node: p, output } => {
                    // Validation guarantees both exist; a miss here would be a spec bug.
                    let Some(p) = index(p) else { continue };
                    let Some(o) = outputs[p].iter().position(|(x, _)| x == output) else { continue };
                    let queue = inboxes[r].len();
                    inboxes[r].push(QueueShape {
                        capacity: input.queue_size,
                        policy: match input.policy {
                            nerve_spec::QueuePolicy::DropOldest => Policy::DropOldest,
                            nerve_spec::QueuePolicy::Backpressure => Policy::Backpressure,
                        },
                    });
                    let edges = &mut outputs[p][o].1;
                    let edge = edges.len();
                    edges.push(Edge { reader: r, input: input.id.clone(), queue, edge });
                    inputs[r].push(InputChannel::Shm { id: input.id.clone(), queue, producer: p, output: o, edge });
                }
            }
        }
        spare.push(inboxes[r].len());
        inboxes[r].extend(std::iter::repeat_n(CONNECTED_QUEUE, SPARE_INPUTS * TOPIC_FEEDS));
    }

    /// The channel table handed to node `n`.
    #[must_use]
    pub fn table(
        &self,
        df: &Dataflow,
        n: usize,
        run_id: &str,
        pool_capacity: usize,
        max_message: usize,
    ) -> ChannelTable {
        let mut touched = BTreeSet::from([n]);
        for input in &self.inputs[n] {
            if let InputChannel::Shm { producer, .. } = input {
                touched.insert(*producer);
            }
        }
        let outputs = self.outputs[n]
            .iter()
            .enumerate()
            .map(|(index, (id, edges))| {
                touched.extend(edges.iter().map(|e| e.reader));
                OutputChannel {
                    id: id.clone(),
                    topic: df.nodes[n].output_topics.get(id).cloned(),
                    declared_type: df.nodes[n].output_types.get(id).cloned(),
                    index,
                    readers: edges
                        .iter()
                        .map(|e| ReaderChannel { node: e.reader, queue: e.queue, edge: e.edge })
                        .collect(),
                }
            })
            .collect();
        ChannelTable {
            run_id: run_id.to_owned(),
            // The run's, set by the run as `sim_time` is.
            run_name: String::new(),
            share: df.share.clone(),
            node_id: df.nodes[n].id.clone(),
            node_index: n,
            // The run's count, set by the run as `sim_time` is.
            restarts: 0,
            nerve_version: nerve_message::NERVE_VERSION.to_owned(),
            inputs: self.inputs[n].clone(),
            outputs,
            inboxes: touched.into_iter().map(|node| InboxSpec { node, queues: self.inboxes[node].clone() }).collect(),
            pool_capacity,
            max_message,
            lock_memory: df.nodes[n].realtime.as_ref().is_some_and(|rt| rt.lock_memory),
            sim_time: false,
            exit_when_nodes_finish: df.exit_when_nodes_finish,
            params: df.nodes[n].params.clone(),
            types: df.types.clone(),
            descriptor: df.descriptor.clone(),
            config: df.nodes[n].config.clone(),
            calls: calls(df, n),
            server_wait_ms: None,
            input_timeouts: df.nodes[n]
                .inputs
                .iter()
                .filter_map(|i| Some((i.id.clone(), u64::try_from(i.timeout?.as_nanos()).unwrap_or(u64::MAX))))
                .collect(),
        }
    }
}

/// The services and actions node `n` calls and does not serve itself, each with the nodes that
/// declare serving it.
fn calls(df: &Dataflow, n: usize) -> Vec<Called> {
    let node = &df.nodes[n];
    let kinds = [(CalledKind::Service, &node.services), (CalledKind::Action, &node.actions)];
    kinds
        .into_iter()
        .flat_map(|(kind, declared)| {
            declared.call.iter().filter(|name| !declared.serve.contains(name)).map(move |name| {
                let served_by = df
                    .nodes
                    .iter()
                    .filter(|m| {
                        let serves = match kind {
                            CalledKind::Service => &m.services.serve,
                            CalledKind::Action => &m.actions.serve,
                        };
                        serves.contains(name)
                    })
                    .map(|m| m.id.clone())
                    .collect();
                Called { kind, name: name.clone(), served_by }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(yaml: &str) -> (Dataflow, Plan) {
        let dir = std::env::temp_dir().join(format!("nerve-plan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("n.py"), "").expect("node file");
        let df = nerve_spec::parse_str(yaml, &dir.join("dataflow.yml")).expect("valid dataflow");
        let plan = Plan::new(&df);
        (df, plan)
    }

    #[test]
    fn a_nodes_table_names_what_it_calls_and_who_serves_it() {
        let (df, plan) = plan(
            "nodes:\n\
             - {id: planner, path: n.py, services: {serve: [plan]}, actions: {serve: [navigate]}}\n\
             - {id: arm, path: n.py, services: {serve: [plan, grip]}}\n\
             - {id: brain, path: n.py, services: {serve: [grip], call: [plan, grip, map/get]}, actions: {call: [navigate]}}\n",
        );
        let called = |kind, name: &str, served_by: &[&str]| Called {
            kind,
            name: name.to_owned(),
            served_by: served_by.iter().map(|s| (*s).to_owned()).collect(),
        };
        // What a node serves itself is not waited for; what no node serves is, from outside.
        assert_eq!(
            plan.table(&df, 2, "run", 1 << 20, 1 << 20).calls,
            vec![
                called(CalledKind::Service, "plan", &["planner", "arm"]),
                called(CalledKind::Service, "map/get", &[]),
                called(CalledKind::Action, "navigate", &["planner"]),
            ]
        );
        assert!(plan.table(&df, 0, "run", 1 << 20, 1 << 20).calls.is_empty());
    }

    #[test]
    fn edges_queues_and_tables() {
        let (df, plan) = plan(
            "nodes:\n\
             - {id: cam, path: n.py, inputs: {tick: timer/hz/30}, outputs: [image, depth]}\n\
             - {id: det, path: n.py, inputs: {image: cam/image, depth: {source: cam/depth, queue_size: 1, queue_policy: drop_oldest}}}\n\
             - {id: log, path: n.py, inputs: {image: cam/image}}\n",
        );
        // Timers take no queue; each shared-memory input takes one, in declaration order; the
        // areas for inputs connected at run time come after.
        assert_eq!(plan.spare, vec![0, 2, 1]);
        assert_eq!(plan.inboxes[0], vec![CONNECTED_QUEUE; SPARE_INPUTS * TOPIC_FEEDS]);
        assert_eq!(plan.inboxes[1].len(), 2 + SPARE_INPUTS * TOPIC_FEEDS);
        assert_eq!(plan.inboxes[1][1], QueueShape { capacity: 1, policy: Policy::DropOldest });
        assert_eq!(plan.inboxes[1][0], QueueShape { capacity: 10, policy: Policy::Backpressure });
        // `cam/image` has two readers with distinct holder bits.
        let image = &plan.outputs[0][0].1;
        assert_eq!(image.iter().map(|e| (e.reader, e.edge, e.queue)).collect::<Vec<_>>(), vec![(1, 0, 0), (2, 1, 0)]);
        let table = plan.table(&df, 1, "run", 1 << 20, 1 << 20);
        assert_eq!(
            table.inputs,
            vec![
                InputChannel::Shm { id: "image".into(), queue: 0, producer: 0, output: 0, edge: 0 },
                InputChannel::Shm { id: "depth".into(), queue: 1, producer: 0, output: 1, edge: 0 },
            ]
        );
        // The reader maps its own inbox and its producer's (to wake it), nothing else.
        assert_eq!(table.inboxes.iter().map(|i| i.node).collect::<Vec<_>>(), vec![0, 1]);
        let cam = plan.table(&df, 0, "run", 1 << 20, 1 << 20);
        assert_eq!(cam.inboxes.iter().map(|i| i.node).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert!(matches!(cam.inputs[0], InputChannel::Timer { period_ns: 33_333_333, .. }));
    }

    #[test]
    fn a_node_added_while_running_reads_outputs_as_topics() {
        let (df, mut plan) = plan(
            "nodes:\n- {id: cam, path: n.py, outputs: [image, {id: depth, topic: robot/depth}]}\n- {id: det, path: n.py, inputs: {image: cam/image}}\n",
        );
        let df = nerve_spec::with_added_node(
            &df,
            "id: viewer\npath: n.py\ninputs: {image: cam/image, depth: cam/depth, tick: timer/hz/1}\noutputs: [shown]\n",
            &df.base_dir.join("viewer.yml"),
        )
        .expect("valid node");
        let before = plan.outputs[0].clone();
        plan.add_node(&df);
        // The running writer's edges stay as they were; the new reader subscribes.
        assert_eq!(plan.outputs[0], before);
        assert_eq!(plan.outputs[2], vec![("shown".to_owned(), Vec::new())]);
        assert_eq!(
            plan.inputs[2],
            vec![
                InputChannel::Topic { id: "image".into(), topic: "cam/image".into(), queue_size: 10, queue: 0 },
                InputChannel::Topic {
                    id: "depth".into(),
                    topic: "robot/depth".into(),
                    queue_size: 10,
                    queue: TOPIC_FEEDS
                },
                InputChannel::Timer { id: "tick".into(), period_ns: 1_000_000_000 },
            ]
        );
        assert_eq!(plan.spare_area(2, 1), 3 * TOPIC_FEEDS);
        assert_eq!(plan.inboxes[2].len(), (2 + SPARE_INPUTS) * TOPIC_FEEDS);
    }

    #[test]
    fn operators_reading_one_another_take_no_channel() {
        let (_, plan) = plan(
            "nodes:
  - {id: cam, path: n.py, outputs: [image]}
  - id: pair
    operators:
      - {id: a, python: n.py, inputs: {image: cam/image}, outputs: [mask]}
      - {id: b, python: n.py, inputs: {mask: pair/a/mask}}
",
        );
        // `pair/b/mask` is handed over inside the node's process: no queue, no edge.
        assert_eq!(plan.spare[1], 1);
        assert!(plan.outputs[1][0].1.is_empty());
        assert!(matches!(&plan.inputs[1][..], [InputChannel::Shm { id, .. }] if id == "a/image"));
    }

    #[test]
    fn a_topic_input_takes_one_queue_per_publisher_process_in_the_inbox() {
        let (df, plan) = plan(
            "nodes:\n\
             - id: nav\n  path: n.py\n  inputs: {pose: topic/robot/pose, tick: timer/hz/10, map: {source: topic/map, queue_size: 1}}\n  outputs: [{id: cmd, topic: /robot/cmd}, log]\n",
        );
        let drop_oldest = |capacity| QueueShape { capacity, policy: Policy::DropOldest };
        let mut expected = vec![drop_oldest(10); TOPIC_FEEDS];
        expected.extend(vec![drop_oldest(1); TOPIC_FEEDS]);
        expected.extend(vec![CONNECTED_QUEUE; SPARE_INPUTS * TOPIC_FEEDS]);
        assert_eq!(plan.inboxes[0], expected);
        let table = plan.table(&df, 0, "run", 1 << 20, 1 << 20);
        assert_eq!(
            table.inputs[0],
            InputChannel::Topic { id: "pose".into(), topic: "robot/pose".into(), queue_size: 10, queue: 0 }
        );
        assert_eq!(
            table.inputs[2],
            InputChannel::Topic { id: "map".into(), topic: "map".into(), queue_size: 1, queue: TOPIC_FEEDS }
        );
        let topics: Vec<_> = table.outputs.iter().map(|o| (o.id.as_str(), o.topic.as_deref())).collect();
        assert_eq!(topics, vec![("cmd", Some("robot/cmd")), ("log", None)]);
    }

    #[test]
    fn log_outputs_and_log_inputs_read_the_runs_log_feeds() {
        let (df, plan) = plan(
            "nodes:\n\
             - {id: proc, path: n.py, send_logs_as: entries, send_stdout_as: lines, outputs: [result, entries, lines]}\n\
             - {id: mon, path: n.py, inputs: {entries: proc/entries, result: proc/result, errors: dora/logs/error}}\n",
        );
        // The node's process writes only `result`: nerve writes the other two from its log.
        let proc = plan.table(&df, 0, "run", 1 << 20, 1 << 20);
        assert_eq!(proc.outputs.iter().map(|o| o.id.as_str()).collect::<Vec<_>>(), vec!["result"]);
        let mon = plan.table(&df, 1, "run", 1 << 20, 1 << 20);
        let feeds: Vec<_> = mon
            .inputs
            .iter()
            .map(|i| match i {
                InputChannel::Topic { id, topic, .. } => (id.as_str(), topic.as_str()),
                InputChannel::Shm { id, .. } => (id.as_str(), "shm"),
                InputChannel::Timer { id, .. } => (id.as_str(), "timer"),
            })
            .collect();
        assert_eq!(
            feeds,
            vec![
                ("entries", "nerve/logs/output/proc/entries"),
                ("result", "shm"),
                ("errors", "nerve/logs/input/mon/errors"),
            ]
        );
    }
}

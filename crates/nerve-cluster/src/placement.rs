//! Where each node runs, and what each machine runs of a dataflow.
//!
//! A machine's part is a dataflow of its own, run by the machine's runtime like any other:
//!
//! - the nodes placed on the machine, as written;
//! - for every node of another machine whose outputs nodes here read, a stand-in with the same
//!   id and only those outputs: the daemon serves it, writing what arrives from the network
//!   into shared memory once for every reader here (the message bridge);
//! - if nodes elsewhere read outputs of this machine, one [`BRIDGE`] node reading each of
//!   those outputs once: the daemon serves it, sending each message once on the network,
//!   however many machines and readers take it.
//!
//! Local edges stay shared memory: nothing of a machine's own traffic goes on the network.

use std::collections::BTreeMap;

use nerve_spec::{
    Dataflow, HostLossPolicy, InputSource, InputSpec, MAX_READERS_PER_OUTPUT, NodePath, NodeSpec, QueuePolicy,
    RestartSpec, ServicesSpec,
};

use crate::protocol::Placement;

/// Id of the node that sends a machine's outputs to the other machines (no dataflow node can
/// have it: node ids have no `@`).
pub const BRIDGE: &str = "@bridge";

/// The labels of each connected machine, by machine id.
pub type MachineLabels = BTreeMap<String, BTreeMap<String, String>>;

/// Where each node of `df` runs: its `deploy: machine` (or the dataflow's); else, when it asks
/// for labels, `default_machine` if that has them all or the first machine (by id) that does;
/// else `default_machine`.
///
/// # Errors
/// A node whose labels no machine of `machines` has all of (or its own machine lacks), naming
/// the node, its labels and each machine's.
pub fn place(df: &Dataflow, default_machine: &str, machines: &MachineLabels) -> Result<Placement, String> {
    let has = |machine: &str, wanted: &BTreeMap<String, String>| {
        machines.get(machine).is_some_and(|labels| wanted.iter().all(|(k, v)| labels.get(k) == Some(v)))
    };
    let shown = |labels: &BTreeMap<String, String>| {
        let pairs: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        if pairs.is_empty() { "no labels".to_owned() } else { pairs.join(", ") }
    };
    let mut placement = Placement::new();
    for node in &df.nodes {
        let machine = match &node.machine {
            Some(m) if node.labels.is_empty() || !machines.contains_key(m) || has(m, &node.labels) => m.clone(),
            Some(m) => {
                return Err(format!(
                    "node `{}` runs on machine `{m}` (`deploy: machine`) but asks for labels {} it lacks (it has {})",
                    node.id,
                    shown(&node.labels),
                    shown(&machines[m])
                ));
            }
            None if node.labels.is_empty() || has(default_machine, &node.labels) => default_machine.to_owned(),
            None => match machines.keys().find(|m| has(m, &node.labels)) {
                Some(m) => m.clone(),
                None => {
                    let each: Vec<String> = machines.iter().map(|(m, l)| format!("`{m}` ({})", shown(l))).collect();
                    return Err(format!(
                        "node `{}` asks for labels {}, which no connected daemon has all of (connected: {}); \
                         start one with `nerve daemon --label KEY=VALUE`",
                        node.id,
                        shown(&node.labels),
                        if each.is_empty() { "none".to_owned() } else { each.join(", ") }
                    ));
                }
            },
        };
        placement.insert(node.id.clone(), machine);
    }
    Ok(placement)
}

/// Outputs of a node of another machine that nodes of this machine read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inbound {
    /// The producing node (its stand-in here has the same id).
    pub node: String,
    /// Its machine.
    pub machine: String,
    /// The outputs read here, with their readers here.
    pub outputs: Vec<InboundOutput>,
}

/// One output of another machine and who reads it here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboundOutput {
    /// Output id.
    pub output: String,
    /// Its readers here.
    pub readers: Vec<Reader>,
}

/// An input that reads an output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reader {
    /// Reading node.
    pub node: String,
    /// Its input id.
    pub input: String,
    /// What the node does if the producer's machine is lost.
    pub on_host_lost: HostLossPolicy,
    /// The input drops its oldest messages when full (`queue_policy: drop_oldest`).
    pub drop_oldest: bool,
}

impl Reader {
    fn of(df: &Dataflow, node: &str, input: &str) -> Self {
        let spec = df.node(node);
        let policy = spec.and_then(|n| n.inputs.iter().find(|i| i.id == input)).map(|i| i.policy);
        Self {
            node: node.to_owned(),
            input: input.to_owned(),
            on_host_lost: spec.map(|n| n.on_host_lost).unwrap_or_default(),
            drop_oldest: policy == Some(QueuePolicy::DropOldest),
        }
    }
}

/// One output of this machine that other machines read: an input of the [`BRIDGE`] node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outbound {
    /// The bridge's input id, `node/output`.
    pub input: String,
    /// Producing node.
    pub node: String,
    /// Output id.
    pub output: String,
    /// The machines that read it.
    pub machines: Vec<String>,
    /// Every reader elsewhere drops its oldest messages when full: so may the bridge, and the
    /// network, sending the freshest messages a slow link can carry rather than holding the
    /// producer back.
    pub drop_oldest: bool,
}

/// What one machine runs of a dataflow.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// The machine's dataflow: its nodes, the stand-ins, and the bridge.
    pub dataflow: Dataflow,
    /// The nodes the daemon serves itself (stand-ins and bridge).
    pub helpers: Vec<String>,
    /// What arrives from other machines.
    pub inbound: Vec<Inbound>,
    /// What leaves for other machines.
    pub outbound: Vec<Outbound>,
}

/// Why a machine's part of a dataflow cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartError {
    /// An output read here and elsewhere needs more readers than an output can have, counting
    /// the bridge to the other machines.
    #[error(
        "output `{node}/{output}` has {local} readers on machine `{machine}` and more elsewhere: with the \
         bridge to the other machines that is over the {MAX_READERS_PER_OUTPUT} readers an output can have"
    )]
    TooManyReaders {
        /// The output's node.
        node: String,
        /// The output.
        output: String,
        /// The machine whose part it is.
        machine: String,
        /// Its readers on that machine.
        local: usize,
    },
}

/// The part of `df` that `machine` runs.
///
/// # Errors
/// [`PartError::TooManyReaders`] when an output would need more readers than one output can
/// have, counting the bridge.
pub fn part(df: &Dataflow, placement: &Placement, machine: &str) -> Result<Part, PartError> {
    let here = |node: &str| placement.get(node).is_some_and(|m| m == machine);
    let mut nodes = Vec::new();
    let mut inbound = Vec::new();
    let mut outbound = Vec::new();
    for node in &df.nodes {
        let readers: Vec<(String, Vec<(String, String)>)> =
            node.outputs.iter().map(|o| (o.clone(), df.readers_of(&node.id, o))).collect();
        if here(&node.id) {
            nodes.push(node.clone());
            for (output, readers) in &readers {
                let mut machines: Vec<String> =
                    readers.iter().filter(|(r, _)| !here(r)).filter_map(|(r, _)| placement.get(r).cloned()).collect();
                machines.sort();
                machines.dedup();
                if machines.is_empty() {
                    continue;
                }
                let local = readers.iter().filter(|(r, _)| here(r)).count();
                if local + 1 > MAX_READERS_PER_OUTPUT {
                    return Err(PartError::TooManyReaders {
                        node: node.id.clone(),
                        output: output.clone(),
                        machine: machine.to_owned(),
                        local,
                    });
                }
                outbound.push(Outbound {
                    input: format!("{}/{output}", node.id),
                    node: node.id.clone(),
                    output: output.clone(),
                    machines,
                    drop_oldest: readers
                        .iter()
                        .filter(|(r, _)| !here(r))
                        .all(|(r, i)| Reader::of(df, r, i).drop_oldest),
                });
            }
            continue;
        }
        let outputs: Vec<InboundOutput> = readers
            .iter()
            .filter_map(|(output, readers)| {
                let readers: Vec<Reader> =
                    readers.iter().filter(|(r, _)| here(r)).map(|(r, input)| Reader::of(df, r, input)).collect();
                (!readers.is_empty()).then(|| InboundOutput { output: output.clone(), readers })
            })
            .collect();
        if outputs.is_empty() {
            continue;
        }
        nodes.push(stand_in(node, outputs.iter().map(|o| o.output.clone()).collect()));
        inbound.push(Inbound {
            node: node.id.clone(),
            machine: placement.get(&node.id).cloned().unwrap_or_default(),
            outputs,
        });
    }
    let mut helpers: Vec<String> = inbound.iter().map(|i| i.node.clone()).collect();
    if !outbound.is_empty() {
        nodes.push(bridge(BRIDGE, machine, &outbound));
        helpers.push(BRIDGE.to_owned());
    }
    Ok(Part { dataflow: Dataflow { nodes, ..df.clone() }, helpers, inbound, outbound })
}

/// A node of another machine as this machine sees it: a `path: dynamic` node with the same id
/// and only the outputs read here.
pub(crate) fn stand_in(node: &NodeSpec, outputs: Vec<String>) -> NodeSpec {
    NodeSpec {
        path: NodePath::Dynamic,
        args: Vec::new(),
        env: BTreeMap::new(),
        build: None,
        inputs: Vec::new(),
        outputs,
        output_topics: BTreeMap::new(),
        restart: RestartSpec::default(),
        realtime: None,
        services: ServicesSpec::default(),
        params: BTreeMap::new(),
        actions: ServicesSpec::default(),
        // The node's failure is its own machine's to act on.
        on_failure: None,
        ..node.clone()
    }
}

/// Node `id` that reads each outbound output once. Its queues hold one message: the readers'
/// own queues, on their machines, hold what they declared; one here keeps what waits for a
/// slow link (and so the latency it adds) to a single message.
pub(crate) fn bridge(id: &str, machine: &str, outbound: &[Outbound]) -> NodeSpec {
    let inputs = outbound
        .iter()
        .map(|o| InputSpec {
            id: o.input.clone(),
            source: InputSource::Output { node: o.node.clone(), output: o.output.clone() },
            queue_size: 1,
            policy: if o.drop_oldest { QueuePolicy::DropOldest } else { QueuePolicy::Backpressure },
            timeout: None,
            line: 0,
        })
        .collect();
    NodeSpec {
        name: Some("bridge to the other machines".to_owned()),
        inputs,
        machine: Some(machine.to_owned()),
        ..NodeSpec::new(id, NodePath::Dynamic)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dataflow(yaml: &str) -> Dataflow {
        nerve_spec::parse_str(yaml, std::path::Path::new("/tmp/dataflow.yml")).expect("valid")
    }

    #[test]
    fn labels_pick_a_machine_that_has_them_all() {
        let df = dataflow(
            "nodes:\n\
            - {id: any, path: dynamic}\n\
            - {id: gpu, path: dynamic, deploy: {labels: {gpu: \"true\"}}}\n\
            - {id: arm, path: dynamic, deploy: {labels: {gpu: \"true\", arch: arm64}}}\n",
        );
        let label = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        let machines: MachineLabels = [
            ("a".to_owned(), label(&[])),
            ("b".to_owned(), label(&[("gpu", "true"), ("arch", "arm64")])),
            ("c".to_owned(), label(&[("gpu", "true")])),
        ]
        .into();
        let placed = place(&df, "c", &machines).expect("placed");
        assert_eq!((placed["any"].as_str(), placed["gpu"].as_str(), placed["arm"].as_str()), ("c", "c", "b"));
        assert_eq!(place(&df, "a", &machines).expect("placed")["gpu"], "b");
        let none = place(&df, "a", &[("a".to_owned(), label(&[]))].into()).expect_err("no gpu");
        assert!(none.contains("node `gpu` asks for labels gpu=true, which no connected daemon has"), "{none}");
        let pinned = dataflow("nodes:\n- {id: n, path: dynamic, deploy: {machine: a, labels: {gpu: \"true\"}}}\n");
        let lacks = place(&pinned, "a", &machines).expect_err("a has no gpu");
        assert!(lacks.contains("runs on machine `a` (`deploy: machine`) but asks for labels gpu=true"), "{lacks}");
    }

    const SPLIT: &str = "nodes:\n\
        - {id: cam, path: dynamic, deploy: {machine: robot}, outputs: [image, depth, log]}\n\
        - {id: det, path: dynamic, deploy: {machine: edge}, inputs: {image: cam/image}, outputs: [boxes]}\n\
        - {id: view, path: dynamic, deploy: {machine: edge}, on_host_lost: wait,\n   \
           inputs: {image: {source: cam/image, queue_size: 1, queue_policy: drop_oldest}, boxes: det/boxes}}\n\
        - {id: ctl, path: dynamic, deploy: {machine: robot}, inputs: {boxes: det/boxes, depth: cam/depth}}\n\
        - {id: base, path: dynamic, inputs: {log: cam/log}}\n";

    #[test]
    fn each_machine_gets_its_nodes_stand_ins_and_a_bridge() {
        let df = dataflow(SPLIT);
        let placement = place(&df, "station", &MachineLabels::new()).expect("placed");
        assert_eq!(placement["base"], "station");
        assert_eq!(placement["cam"], "robot");

        let robot = part(&df, &placement, "robot").expect("part");
        let ids: Vec<&str> = robot.dataflow.nodes.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(ids, ["cam", "det", "ctl", BRIDGE]);
        // `det` stands in for the edge's node: only what the robot reads, no inputs.
        let det = &robot.dataflow.nodes[1];
        assert_eq!(
            (det.path.clone(), det.outputs.clone(), det.inputs.len()),
            (NodePath::Dynamic, vec!["boxes".into()], 0)
        );
        assert_eq!(robot.helpers, ["det", BRIDGE]);
        // `cam/image` is read on one other machine, `cam/log` on another; `cam/depth` stays here.
        let out: Vec<(&str, Vec<String>)> =
            robot.outbound.iter().map(|o| (o.input.as_str(), o.machines.clone())).collect();
        assert_eq!(out, [("cam/image", vec!["edge".to_owned()]), ("cam/log", vec!["station".to_owned()])]);
        // The bridge reads `cam/image` back-pressured: `det` on the edge back-pressures it.
        let bridge = robot.dataflow.nodes.last().expect("bridge");
        assert_eq!((bridge.inputs[0].policy, bridge.inputs[0].queue_size), (QueuePolicy::Backpressure, 1));
        // In the robot's plan the bridge is `cam/image`'s one reader.
        let plan = nerve_runtime::Plan::new(&robot.dataflow);
        let readers: Vec<usize> = plan.outputs[0][0].1.iter().map(|e| e.reader).collect();
        assert_eq!(readers, [3]);

        let edge = part(&df, &placement, "edge").expect("part");
        assert_eq!(edge.inbound.len(), 1);
        let inbound = &edge.inbound[0];
        assert_eq!((inbound.node.as_str(), inbound.machine.as_str()), ("cam", "robot"));
        let readers: Vec<(&str, HostLossPolicy, bool)> =
            inbound.outputs[0].readers.iter().map(|r| (r.node.as_str(), r.on_host_lost, r.drop_oldest)).collect();
        assert_eq!(readers, [("det", HostLossPolicy::Close, false), ("view", HostLossPolicy::Wait, true)]);
        assert_eq!(edge.outbound.len(), 1, "det/boxes goes to the robot");
    }

    #[test]
    fn a_bridge_drops_only_when_every_remote_reader_does() {
        let df = dataflow(
            "nodes:\n\
             - {id: cam, path: dynamic, deploy: {machine: a}, outputs: [image]}\n\
             - {id: v, path: dynamic, deploy: {machine: b}, inputs: {i: {source: cam/image, queue_size: 2, queue_policy: drop_oldest}}}\n\
             - {id: w, path: dynamic, deploy: {machine: c}, inputs: {i: {source: cam/image, queue_size: 5, queue_policy: drop_oldest}}}\n",
        );
        let a = part(&df, &place(&df, "a", &MachineLabels::new()).expect("placed"), "a").expect("part");
        let input = &a.dataflow.nodes.last().expect("bridge").inputs[0];
        assert_eq!((input.policy, input.queue_size), (QueuePolicy::DropOldest, 1));
        assert!(a.outbound[0].drop_oldest);
        assert!(a.inbound.is_empty());
    }
}

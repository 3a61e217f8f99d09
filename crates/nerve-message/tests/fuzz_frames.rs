//! Fuzzing the control-plane decoder: whatever arrives on a node's or the runtime's socket —
//! random bytes, or real frames mutated at random — reading gives a message or an error,
//! never a panic and never an allocation beyond the frame limit. `PROPTEST_CASES=100000` runs a
//! long pass.

use nerve_message::frame;
use nerve_message::node_to_runtime::NodeRequest;
use nerve_message::runtime_to_node::RuntimeMessage;
use proptest::prelude::*;

/// Real frames of each kind: the seeds mutations start from.
fn corpus() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    let requests = [
        NodeRequest::Register { node_id: "camera".into(), nerve_version: "0.1.0".into(), pid: 4242 },
        NodeRequest::Ready,
        NodeRequest::CloseOutputs { outputs: vec!["image".into(), "depth".into()] },
    ];
    for r in &requests {
        let mut wire = Vec::new();
        frame::write(&mut wire, r).expect("encode");
        seeds.push(wire);
    }
    for m in [RuntimeMessage::Start, RuntimeMessage::Stop, RuntimeMessage::InputClosed { input: "tick".into() }] {
        let mut wire = Vec::new();
        frame::write(&mut wire, &m).expect("encode");
        seeds.push(wire);
    }
    seeds
}

fn read_all(bytes: &[u8]) {
    let mut r = bytes;
    while !r.is_empty() && frame::read::<NodeRequest>(&mut r).is_ok() {}
    let mut r = bytes;
    while !r.is_empty() && frame::read::<RuntimeMessage>(&mut r).is_ok() {}
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        read_all(&bytes);
    }

    #[test]
    fn mutated_frames_never_panic(
        seed in 0usize..64,
        edits in prop::collection::vec((any::<usize>(), any::<u8>()), 1..8),
    ) {
        let corpus = corpus();
        let mut bytes = corpus[seed % corpus.len()].clone();
        for (at, value) in edits {
            let at = at % bytes.len();
            bytes[at] = value;
        }
        read_all(&bytes);
    }
}

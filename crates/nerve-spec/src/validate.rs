//! Checks that need the whole dataflow: unique ids, and inputs that name
//! outputs which exist and are not read by too many inputs.

use std::collections::{HashMap, HashSet};

use crate::parse::ParsedNode;
use crate::spec::{InputSource, MAX_READERS_PER_OUTPUT};
use crate::tree::Problems;

pub(crate) fn validate(nodes: &[ParsedNode], p: &mut Problems) {
    // First declaration wins: later duplicates are reported, and sources
    // naming the id resolve to the first node.
    let mut by_id: HashMap<&str, &ParsedNode> = HashMap::new();
    for node in nodes {
        let id = node.spec.id.as_str();
        match by_id.get(id) {
            Some(first) => p.push(
                node.id_mark,
                format!("{}.id", node.field),
                format!("duplicate node id `{id}` (first declared at line {})", first.id_mark.line),
            ),
            None => {
                by_id.insert(id, node);
            }
        }
    }
    let known = known_list(nodes);
    let declared: HashSet<(&str, &str)> =
        by_id.iter().flat_map(|(id, n)| n.spec.outputs.iter().map(move |o| (*id, o.as_str()))).collect();

    let mut readers: HashMap<(&str, &str), usize> = HashMap::new();
    for reader in nodes {
        for (input, place) in reader.spec.inputs.iter().zip(&reader.inputs) {
            let (node, output) = match &input.source {
                InputSource::Output { node, output } => (node, output),
                InputSource::Logs { node: Some(node), .. } => {
                    if !by_id.contains_key(node.as_str()) {
                        p.push(
                            place.source_mark,
                            &place.field,
                            format!("unknown node `{node}` in a log source (known nodes: {known})"),
                        );
                    }
                    continue;
                }
                _ => continue,
            };
            if reader.spec.in_process(input) && input.timeout.is_some() {
                p.push(
                    place.source_mark,
                    &place.field,
                    "`input_timeout` is for inputs from other nodes and topics: this input is handed over \
                     by another operator of the node, inside its process",
                );
            }
            let Some(writer) = by_id.get(node.as_str()) else {
                p.push(place.source_mark, &place.field, format!("unknown source node `{node}` (known nodes: {known})"));
                continue;
            };
            if declared.contains(&(node.as_str(), output.as_str())) {
                *readers.entry((node, output)).or_insert(0) += 1;
            } else {
                let outputs = if writer.spec.outputs.is_empty() {
                    "it declares no outputs".to_owned()
                } else {
                    format!("its outputs: {}", writer.spec.outputs.join(", "))
                };
                p.push(place.source_mark, &place.field, format!("node `{node}` has no output `{output}` ({outputs})"));
            }
        }
    }

    // Reported at the output's declaration: that is the line to split or fan out.
    for (id, writer) in &by_id {
        let outputs = writer.spec.outputs.iter().zip(&writer.output_marks);
        for (position, (output, mark)) in outputs.enumerate() {
            let count = readers.get(&(*id, output.as_str())).copied().unwrap_or(0);
            if count > MAX_READERS_PER_OUTPUT {
                p.push(
                    *mark,
                    format!("{}.outputs[{position}]", writer.field),
                    format!(
                        "output `{id}/{output}` has {count} readers, more than the limit of {MAX_READERS_PER_OUTPUT}"
                    ),
                );
            }
        }
    }
}

fn known_list(nodes: &[ParsedNode]) -> String {
    // Enough to spot a typo without flooding the report of a huge dataflow.
    const SHOWN: usize = 20;
    let mut seen = HashSet::new();
    let ids: Vec<&str> = nodes.iter().map(|n| n.spec.id.as_str()).filter(|id| seen.insert(*id)).collect();
    match ids.len() {
        0 => "none".to_owned(),
        n if n > SHOWN => format!("{}, … and {} more", ids[..SHOWN].join(", "), n - SHOWN),
        _ => ids.join(", "),
    }
}

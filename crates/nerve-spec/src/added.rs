//! A node added to a running dataflow (`nerve node add`, dora-rs's `dora node add
//! --from-yaml`): one node mapping in a file of its own, read as the dataflow's `nodes:` list
//! would read it and checked against the nodes already there.

use std::path::Path;

use crate::error::SpecError;
use crate::fields::key_str;
use crate::parse::{InputPlace, ParsedNode};
use crate::port_types::PortDecl;
use crate::spec::Dataflow;
use crate::tree::{self, Mark, Problems, Value};

/// `df` with the node that `text` declares added last: a bare node mapping (`id:`, `path:`,
/// `inputs:`, …), read from `file`, whose relative paths are relative to `file`'s folder.
///
/// The node is checked as if the dataflow had declared it: its keys, ids unique, every input
/// naming an output that exists, declared types agreeing on each edge. The dataflow's
/// top-level `env:`, `deploy:` and `on_failure:` are not applied to it: they were the file's.
///
/// # Errors
/// [`SpecError::Invalid`] naming `file`, with every problem found.
pub fn with_added_node(df: &Dataflow, text: &str, file: &Path) -> Result<Dataflow, SpecError> {
    let invalid = |problems| SpecError::Invalid { file: file.to_path_buf(), problems };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let item = match tree::parse(text) {
        Ok(Some(item)) => item,
        Ok(None) => {
            let mut p = Problems::default();
            p.push(Mark::START, "(node)", "the file is empty: expected one node mapping (`id:`, `path:`, …)");
            return Err(invalid(p.into_sorted()));
        }
        Err(problems) => return Err(invalid(problems)),
    };
    let mut p = Problems::default();
    if let Value::Map(entries) = &item.value {
        for (key, _) in entries {
            match key_str(key) {
                "nodes" => p.push(
                    key.mark,
                    "nodes",
                    "this is a whole dataflow: `nerve node add` takes one node mapping (`id:`, `path:`, …)",
                ),
                k @ "module" => p.push(
                    key.mark,
                    k,
                    "a module adds several nodes: add them one by one, or run the dataflow with the module",
                ),
                _ => {}
            }
        }
    }
    if !p.is_empty() {
        return Err(invalid(p.into_sorted()));
    }
    let index = df.nodes.len();
    let Some(added) = crate::parse::parse_node(&mut p, index, &item, &crate::base_dir_of(file)) else {
        return Err(invalid(p.into_sorted()));
    };
    if let Some(existing) = df.node(&added.spec.id) {
        p.push(
            added.id_mark,
            format!("{}.id", added.field),
            format!(
                "the dataflow already has a node `{}` (declared at line {} of {}); choose another id",
                existing.id,
                existing.line,
                df.file.display()
            ),
        );
        return Err(invalid(p.into_sorted()));
    }
    // The nodes already there were checked when the dataflow was loaded: they take part here
    // only as ends of the new node's edges, so their marks are never reported.
    let mut nodes: Vec<ParsedNode> = df.nodes.iter().map(as_parsed).collect();
    nodes.push(added);
    crate::validate::validate(&nodes, &mut p);
    crate::port_types::check(&nodes, &df.types, &mut p);
    if !p.is_empty() {
        return Err(invalid(p.into_sorted()));
    }
    let mut grown = df.clone();
    if let Some(list) = grown.descriptor.get_mut("nodes").and_then(serde_json::Value::as_array_mut) {
        list.push(item.to_json());
    }
    grown.nodes.extend(nodes.pop().map(|n| n.spec));
    crate::logs::settle_log_readers(&mut grown.nodes);
    Ok(grown)
}

fn as_parsed(spec: &crate::spec::NodeSpec) -> ParsedNode {
    let field = format!("nodes[{}]", spec.id);
    let decls = |types: &std::collections::BTreeMap<String, String>, output: bool| {
        types
            .iter()
            .map(|(port, text)| PortDecl {
                port: port.clone(),
                output,
                text: text.clone(),
                mark: Mark::START,
                field: field.clone(),
            })
            .collect::<Vec<_>>()
    };
    let mut port_types = decls(&spec.output_types, true);
    port_types.extend(decls(&spec.input_types, false));
    ParsedNode {
        spec: spec.clone(),
        id_mark: Mark::START,
        output_marks: vec![Mark::START; spec.outputs.len()],
        inputs: spec.inputs.iter().map(|_| InputPlace { source_mark: Mark::START, field: field.clone() }).collect(),
        port_types,
        field,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::with_added_node;
    use crate::spec::InputSource;

    fn base() -> crate::Dataflow {
        let yaml = "nodes:\n  - id: sender\n    path: dynamic\n    outputs: [value]\n    output_types: {value: std_msgs/msg/Int64}\n  - id: receiver\n    path: dynamic\n    inputs: {value: sender/value}\n";
        crate::parse_str(yaml, Path::new("/df/dataflow.yml")).expect("valid")
    }

    #[test]
    fn a_node_is_added_last_with_its_inputs_resolved() {
        let df = with_added_node(
            &base(),
            "id: filter\npath: dynamic\ninputs: {input: sender/value}\noutputs: [output]\n",
            Path::new("/df/filter-node.yml"),
        )
        .expect("valid");
        let filter = &df.nodes[2];
        assert_eq!(filter.id, "filter");
        assert_eq!(filter.inputs[0].source, InputSource::Output { node: "sender".into(), output: "value".into() });
        assert_eq!(df.descriptor["nodes"].as_array().map(Vec::len), Some(3));
    }

    #[test]
    fn mistakes_name_the_file_and_line() {
        let refused =
            |yaml: &str| with_added_node(&base(), yaml, Path::new("/df/f.yml")).expect_err("refused").to_string();
        let dup = refused("id: receiver\npath: dynamic\n");
        assert!(
            dup.starts_with("/df/f.yml:1:5: nodes[receiver].id: the dataflow already has a node `receiver`"),
            "{dup}"
        );
        let unknown = refused("id: f\npath: dynamic\ninputs:\n  x: camera/image\n");
        assert!(unknown.contains("f.yml:4:6") && unknown.contains("unknown source node `camera`"), "{unknown}");
        let output = refused("id: f\npath: dynamic\ninputs: {x: sender/nope}\n");
        assert!(output.contains("node `sender` has no output `nope` (its outputs: value)"), "{output}");
        let types = refused("id: f\npath: dynamic\ninputs: {x: sender/value}\ninput_types: {x: std_msgs/msg/String}\n");
        assert!(types.contains("std_msgs/msg/String") && types.contains("std_msgs/msg/Int64"), "{types}");
        assert!(refused("nodes: []\n").contains("one node mapping"));
        assert!(refused("").contains("the file is empty"));
    }
}

//! {{name}}: a nerve node. It answers every input with the number of values that input held,
//! on output `out`.

use nerve_node::arrow_array::{Array, UInt64Array};
use nerve_node::{Event, Message, Node, Parameters};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (node, mut events) = Node::init_from_env()?;
    while let Some(event) = events.recv() {
        match event {
            Event::Input(Message { id, metadata, data, .. }) => {
                println!("{id}: {} values, sent at {} ns", data.len(), metadata.timestamp);
                // Replace this with the node's work. Every output it sends must be listed under
                // the node's `outputs:` in the dataflow.
                let count = UInt64Array::from(vec![u64::try_from(data.len())?]);
                node.send_output("out", &Parameters::new(), &count)?;
            }
            Event::InputClosed { id } => println!("input {id} closed"),
            Event::InputRecovered { id } => println!("input {id} recovered"),
            Event::Stop => break,
            Event::Error(e) => eprintln!("{e}"),
        }
    }
    Ok(())
}

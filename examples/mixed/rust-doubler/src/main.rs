//! Doubles every float it receives and passes the sender's metadata along.

use nerve_node::arrow_array::{Array, Float64Array};
use nerve_node::{Event, Message, Node};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (node, mut events) = Node::init_from_env()?;
    let mut count = 0usize;
    while let Some(event) = events.recv() {
        match event {
            Event::Input(Message { id, metadata, data, .. }) if id == "numbers" => {
                let numbers = data.as_any().downcast_ref::<Float64Array>().ok_or("numbers must be float64")?;
                let doubled: Float64Array = numbers.iter().map(|v| v.map(|x| x * 2.0)).collect();
                node.send_output("doubled", &metadata.parameters, &doubled)?;
                count += 1;
            }
            Event::Stop => break,
            _ => {}
        }
    }
    println!("doubled {count} arrays");
    Ok(())
}

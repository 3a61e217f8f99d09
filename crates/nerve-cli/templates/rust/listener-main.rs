//! listener: prints every message that arrives on its `message` input.

use nerve_node::arrow_array::{Array, StringArray};
use nerve_node::{Event, Message, Node};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (_node, mut events) = Node::init_from_env()?;
    let mut received = 0;
    while let Some(event) = events.recv() {
        match event {
            Event::Input(Message { id, metadata, data, .. }) if id == "message" => {
                let Some(texts) = data.as_any().downcast_ref::<StringArray>() else {
                    eprintln!("listener: expected strings, got {}", data.data_type());
                    continue;
                };
                for text in texts.iter().flatten() {
                    println!("listener got {text:?} (sent at {} ns)", metadata.timestamp);
                }
                received += 1;
            }
            Event::Stop => break,
            Event::Error(e) => eprintln!("listener: {e}"),
            Event::Input(_) | Event::InputClosed { .. } | Event::InputRecovered { .. } => {}
        }
    }
    println!("listener received {received} messages");
    Ok(())
}

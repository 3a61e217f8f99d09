//! talker: sends a greeting on `message` at every tick, ten times, then exits.

use nerve_node::arrow_array::StringArray;
use nerve_node::{Event, Message, Node, Parameters};

const MESSAGES: u32 = 10;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (node, mut events) = Node::init_from_env()?;
    let mut sent = 0;
    while let Some(event) = events.recv() {
        match event {
            Event::Input(Message { id, .. }) if id == "tick" => {
                let text = StringArray::from(vec![format!("hello #{sent}")]);
                node.send_output("message", &Parameters::new(), &text)?;
                sent += 1;
                if sent == MESSAGES {
                    break;
                }
            }
            Event::Stop => break,
            Event::Error(e) => eprintln!("talker: {e}"),
            Event::Input(_) | Event::InputClosed { .. } | Event::InputRecovered { .. } => {}
        }
    }
    println!("talker sent {sent} messages");
    Ok(())
}

//! Sends a counter and a block of bytes derived from it on every tick, then finishes.

use nerve_node::arrow_array::UInt64Array;
use nerve_node::{Event, Message, Node, Parameters};

const MESSAGES: u64 = 100;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (node, mut events) = Node::init_from_env()?;
    let mut sent = 0u64;
    while let Some(event) = events.recv() {
        match event {
            Event::Input(Message { id, .. }) if id == "tick" => {
                node.send_output("counter", &Parameters::new(), &UInt64Array::from(vec![sent]))?;
                // 64 KiB written straight into shared memory: no intermediate buffer.
                node.send_output_raw("blob", &Parameters::new(), 64 * 1024, |buf| {
                    for (i, b) in buf.iter_mut().enumerate() {
                        *b = (sent as usize + i) as u8;
                    }
                })?;
                sent += 1;
                if sent == MESSAGES {
                    break;
                }
            }
            Event::Stop => break,
            _ => {}
        }
    }
    println!("sent {sent} counters and blobs");
    Ok(())
}

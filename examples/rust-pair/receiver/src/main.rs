//! Checks that counters arrive in order and every blob is intact.

use nerve_node::arrow_array::{Array, UInt8Array, UInt64Array};
use nerve_node::{Event, Message, Node};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (_node, mut events) = Node::init_from_env()?;
    let (mut counters, mut blobs) = (0u64, 0u64);
    while let Some(event) = events.recv() {
        match event {
            Event::Input(Message { id, data, .. }) if id == "counter" => {
                let values = data.as_any().downcast_ref::<UInt64Array>().ok_or("counter is not UInt64")?;
                assert_eq!(values.value(0), counters, "counter out of order");
                counters += 1;
            }
            Event::Input(Message { id, data, .. }) if id == "blob" => {
                let bytes = data.as_any().downcast_ref::<UInt8Array>().ok_or("blob is not UInt8")?;
                let first = bytes.value(0) as usize;
                let intact = bytes.values().iter().enumerate().all(|(i, &b)| b == (first + i) as u8);
                assert!(intact && bytes.len() == 64 * 1024, "blob corrupted");
                blobs += 1;
            }
            Event::InputClosed { id } => println!("input {id} closed"),
            Event::Stop => break,
            _ => {}
        }
    }
    println!("received {counters} counters and {blobs} intact blobs");
    if counters != 100 || blobs != 100 {
        return Err(format!("expected 100 of each, got {counters} counters and {blobs} blobs").into());
    }
    Ok(())
}

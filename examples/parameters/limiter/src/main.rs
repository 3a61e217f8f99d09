//! Caps every speed command at the `max_speed` parameter, which must stay positive.

use nerve_node::arrow_array::{Array, Float64Array};
use nerve_node::{Event, Message, Node, ParamValue};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (node, mut events) = Node::init_from_env()?;
    let params = node.params();
    params.on_change(|key, value| match (key, value) {
        ("max_speed", ParamValue::Float(v)) if *v <= 0.0 => Err(format!("max_speed must be > 0, got {v:?}").into()),
        _ => Ok(()),
    });
    // The same callback guards changes from this code and from `nerve param set`.
    if let Err(e) = params.set("max_speed", ParamValue::Float(-1.0)) {
        println!("refused as expected: {e}");
    }
    let (mut count, mut limited, mut max) = (0usize, 0usize, None);
    while let Some(event) = events.recv() {
        match event {
            Event::Input(Message { id, data, .. }) if id == "command" => {
                let Some(ParamValue::Float(now)) = params.get("max_speed") else {
                    return Err("max_speed must be declared as a float (params: limiter.yml)".into());
                };
                if max != Some(now) {
                    max = Some(now);
                    println!("max_speed is now {now:?}");
                }
                let commands = data.as_any().downcast_ref::<Float64Array>().ok_or("commands must be float64")?;
                count += 1;
                if commands.iter().flatten().any(|speed| speed > now) {
                    limited += 1;
                }
            }
            Event::InputClosed { .. } | Event::Stop => break,
            _ => {}
        }
    }
    println!("limited {limited} of {count} commands");
    Ok(())
}

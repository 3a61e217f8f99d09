//! Writes the Rust types of this example's own message package, `detection_msgs`, from its
//! interface files (the shipped ones, `sensor_msgs` and the rest, are in `nerve_node::msg`).

use std::path::{Path, PathBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let types = Path::new(env!("CARGO_MANIFEST_DIR")).join("../types");
    println!("cargo::rerun-if-changed={}", types.display());
    let registry = nerve_types::Registry::new(&[types]);
    let code = nerve_types::rust_code(&registry, &["detection_msgs".to_owned()], nerve_types::NODE_ROOT)?;
    std::fs::write(PathBuf::from(std::env::var("OUT_DIR")?).join("msgs.rs"), code)?;
    Ok(())
}

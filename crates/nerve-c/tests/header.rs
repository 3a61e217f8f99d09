//! `include/nerve.h` is what cbindgen makes of this crate now: CI fails when a change to the C
//! API was not carried into the checked-in header.

use std::path::Path;

#[test]
fn nerve_h_is_up_to_date() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen cannot read the crate")
        .write(&mut generated);
    let header = crate_dir.join("include/nerve.h");
    if std::env::var_os("NERVE_UPDATE_HEADER").is_some() {
        std::fs::write(&header, &generated).expect("write include/nerve.h");
    }
    let checked_in = std::fs::read(&header).unwrap_or_default();
    assert!(
        checked_in == generated,
        "include/nerve.h is not what cbindgen makes of crates/nerve-c/src: run \
         `NERVE_UPDATE_HEADER=1 cargo test --release -p nerve-c --test header` and commit it"
    );
}

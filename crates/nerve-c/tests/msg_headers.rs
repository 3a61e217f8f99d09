//! `include/nerve/msg/*.hpp`, the C++ types of the packages nerve ships, are what
//! `nerve types cpp` writes today: CI fails when a change to the generator or to a shipped
//! interface was not carried into the installed headers.

use std::collections::BTreeSet;
use std::path::Path;

use nerve_types::{Registry, cpp_headers, shipped_packages};

#[test]
fn the_shipped_packages_cpp_headers_are_current() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Registry::with_folders(Vec::new());
    let headers = cpp_headers(&registry, &shipped_packages())?;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/nerve/msg");
    if std::env::var_os("NERVE_UPDATE_HEADER").is_some() {
        std::fs::create_dir_all(&dir)?;
        for (package, text) in &headers {
            std::fs::write(dir.join(format!("{package}.hpp")), text)?;
        }
    }
    let mut stale = Vec::new();
    for (package, text) in &headers {
        if std::fs::read_to_string(dir.join(format!("{package}.hpp"))).ok().as_deref() != Some(text.as_str()) {
            stale.push(package.as_str());
        }
    }
    let files: BTreeSet<String> =
        std::fs::read_dir(&dir)?.filter_map(|e| e.ok()?.path().file_stem()?.to_str().map(str::to_owned)).collect();
    let extra: Vec<&String> = files.iter().filter(|f| !headers.contains_key(*f)).collect();
    assert!(
        stale.is_empty() && extra.is_empty(),
        "include/nerve/msg is stale ({stale:?}; no such package: {extra:?}): run \
         `NERVE_UPDATE_HEADER=1 cargo test --release -p nerve-c --test msg_headers` and commit it"
    );
    Ok(())
}

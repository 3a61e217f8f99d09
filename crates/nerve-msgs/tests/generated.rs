//! The shipped packages' Rust code is what the generator writes today, and every generated type
//! is the Arrow type the registry maps its definition to.

use std::path::Path;

use nerve_types::{Registry, TypeName, arrow_type, rust_code, shipped_packages};

/// Compares the file at `path` (relative to the crate) with `code`, or rewrites it when asked.
fn check_current(path: &str, code: &str) -> Result<(), Box<dyn std::error::Error>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    if std::env::var_os("NERVE_UPDATE_GENERATED").is_some() {
        std::fs::write(&path, code)?;
    }
    assert!(
        std::fs::read_to_string(&path)? == code,
        "{} is stale: run `NERVE_UPDATE_GENERATED=1 cargo test -p nerve-msgs --test generated`",
        path.display()
    );
    Ok(())
}

#[test]
fn the_shipped_packages_code_is_current() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Registry::with_folders(Vec::new());
    check_current("src/generated.rs", &rust_code(&registry, &shipped_packages(), "crate")?)
}

#[test]
fn the_test_packages_code_is_current() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Registry::with_folders(vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/types")]);
    check_current(
        "tests/user_package/generated.rs",
        &rust_code(&registry, &["defaults_msgs".to_owned()], "::nerve_msgs")?,
    )
}

#[test]
fn every_generated_type_is_its_definitions_arrow_type() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Registry::with_folders(Vec::new());
    assert!(nerve_msgs::TYPES.len() > 100, "{} types", nerve_msgs::TYPES.len());
    for (name, data_type) in nerve_msgs::TYPES {
        assert_eq!(data_type(), arrow_type(&registry, &TypeName::parse(name)?)?, "{name}");
    }
    Ok(())
}

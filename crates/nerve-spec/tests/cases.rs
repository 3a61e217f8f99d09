//! Fixture-driven tests: every `tests/cases/valid-*.yml` must load, and every
//! `invalid-*.yml` must fail with exactly the text of its `.expected` sidecar.
//!
//! A valid case may have a `.json` sidecar: the loaded [`Dataflow`] as JSON.
//! Sidecars use `{file}` for the fixture's path and `{dir}` for its directory.
//! `NERVE_SPEC_BLESS=1 cargo test -p nerve-spec --test cases` rewrites the
//! sidecars that exist (and creates `.expected` ones) from the current output;
//! review the diff before keeping it.

use std::fs;
use std::path::{Path, PathBuf};

use nerve_spec::Dataflow;

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases")
}

fn bless() -> bool {
    std::env::var_os("NERVE_SPEC_BLESS").is_some_and(|v| v == "1")
}

fn canonical_dir() -> String {
    let dir = cases_dir();
    dir.canonicalize().unwrap_or(dir).to_string_lossy().into_owned()
}

fn check_valid(path: &Path) -> Result<(), String> {
    let dataflow = nerve_spec::load(path).map_err(|e| format!("failed to load:\n{e}"))?;
    let sidecar = path.with_extension("json");
    if !sidecar.exists() {
        return Ok(());
    }
    let actual = render_valid(&dataflow, path);
    if bless() {
        fs::write(&sidecar, &actual).map_err(|e| e.to_string())?;
        return Ok(());
    }
    let expected = fs::read_to_string(&sidecar).map_err(|e| e.to_string())?;
    if expected.trim_end() != actual.trim_end() {
        return Err(format!(
            "JSON differs from {}:\n--- expected\n{expected}\n--- actual\n{actual}",
            sidecar.display()
        ));
    }
    Ok(())
}

fn render_valid(dataflow: &Dataflow, path: &Path) -> String {
    let json = serde_json::to_string_pretty(dataflow).unwrap_or_else(|e| e.to_string());
    json.replace(&path.to_string_lossy().into_owned(), "{file}").replace(&canonical_dir(), "{dir}") + "\n"
}

fn check_invalid(path: &Path) -> Result<(), String> {
    let actual = match nerve_spec::load(path) {
        Ok(dataflow) => return Err(format!("loaded but should not have: {dataflow:#?}")),
        Err(e) => {
            e.to_string().replace(&path.to_string_lossy().into_owned(), "{file}").replace(&canonical_dir(), "{dir}")
                + "\n"
        }
    };
    let sidecar = path.with_extension("expected");
    if bless() {
        fs::write(&sidecar, &actual).map_err(|e| e.to_string())?;
        return Ok(());
    }
    let expected = fs::read_to_string(&sidecar)
        .map_err(|e| format!("cannot read {}: {e}\nactual:\n{actual}", sidecar.display()))?;
    if expected.trim_end() != actual.trim_end() {
        return Err(format!(
            "error text differs from {}:\n--- expected\n{expected}--- actual\n{actual}",
            sidecar.display()
        ));
    }
    Ok(())
}

#[test]
fn fixtures() {
    let mut paths: Vec<PathBuf> = fs::read_dir(cases_dir())
        .expect("tests/cases exists")
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml"))
        .collect();
    paths.sort();

    let mut failures = Vec::new();
    let (mut valid, mut invalid) = (0, 0);
    for path in &paths {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let outcome = if name.starts_with("valid-") {
            valid += 1;
            check_valid(path)
        } else if name.starts_with("invalid-") {
            invalid += 1;
            check_invalid(path)
        } else {
            Err("fixture names start with `valid-` or `invalid-`".to_owned())
        };
        if let Err(why) = outcome {
            failures.push(format!("{name}: {why}"));
        }
    }
    println!("{valid} valid and {invalid} invalid fixtures");
    assert!(valid >= 10 && invalid >= 20, "fixtures went missing: {valid} valid, {invalid} invalid");
    assert!(failures.is_empty(), "{} of {} fixtures failed:\n\n{}", failures.len(), paths.len(), failures.join("\n\n"));
}

//! Fuzzing the dataflow parser: every fixture of `tests/cases` (the seed corpus, kept in the
//! repository) is mutated at random; whatever comes out, loading returns a dataflow or located
//! errors, never panics. `PROPTEST_CASES=100000` runs a long pass (CI runs the default 256).

use std::path::Path;

use proptest::prelude::*;

fn corpus() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut seeds: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixture directory")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "yml"))
        .map(|e| std::fs::read_to_string(e.path()).expect("fixture"))
        .collect();
    seeds.sort();
    assert!(seeds.len() > 10, "the seed corpus is missing");
    seeds
}

/// Edits to apply to a seed: (position, kind, byte).
fn edits() -> impl Strategy<Value = Vec<(usize, u8, u8)>> {
    prop::collection::vec((any::<usize>(), 0u8..4, any::<u8>()), 1..12)
}

fn mutate(seed: &str, edits: &[(usize, u8, u8)]) -> String {
    // Bytes that matter to YAML, so mutations reach deep into the grammar.
    const TOKENS: &[u8] = b":-[]{}&*!|>'\"#,?\n \t/%@`0123456789.";
    let mut bytes = seed.as_bytes().to_vec();
    for &(at, kind, b) in edits {
        let at = if bytes.is_empty() { 0 } else { at % (bytes.len() + 1) };
        let token = TOKENS[b as usize % TOKENS.len()];
        match kind {
            0 => bytes.insert(at, token),
            1 if at < bytes.len() => {
                bytes.remove(at);
            }
            2 if at < bytes.len() => bytes[at] = token,
            _ => {
                // Duplicate a slice: repeated keys, nesting, anchors used twice.
                let end = (at + usize::from(b % 40)).min(bytes.len());
                let slice = bytes[at.min(end)..end].to_vec();
                bytes.splice(at.min(bytes.len())..at.min(bytes.len()), slice);
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

proptest! {
    #[test]
    fn mutated_dataflows_load_or_fail_with_located_errors(seed in 0usize..1000, edits in edits()) {
        let seeds = corpus();
        let text = mutate(&seeds[seed % seeds.len()], &edits);
        let dir = std::env::temp_dir();
        match nerve_spec::parse_str(&text, &dir.join("fuzz.yml")) {
            Ok(df) => prop_assert!(df.nodes.iter().all(|n| !n.id.is_empty())),
            Err(e) => prop_assert!(e.to_string().contains("fuzz.yml:"), "unlocated error: {e}"),
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,400}") {
        let _ = nerve_spec::parse_str(&text, &std::env::temp_dir().join("fuzz.yml"));
    }
}

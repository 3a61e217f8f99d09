//! Fuzzing the message decoder, which reads bytes written by another process (shared memory)
//! or another host (the network): seed messages (`tests/corpus/*.msg`, kept in the repository
//! and checked against today's encoder, so a format change is noticed) are mutated at random.
//! Decoding returns an error or an array that passes Arrow's full validation; it never panics.
//! `NERVE_BLESS=1` rewrites the corpus; `PROPTEST_CASES=100000` runs a long pass.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{Array, ArrayRef, Float64Array, Int32Array, Int64Array, StringArray, StructArray, UInt8Array};
use arrow_schema::{DataType, Field};
use nerve_shm::codec::{Decoder, aligned_copy};
use nerve_shm::message::{Frame, encode_type};
use proptest::prelude::*;

fn seeds() -> Vec<(&'static str, ArrayRef)> {
    let mut list = ListBuilder::new(StringBuilder::new());
    list.values().append_value("a");
    list.values().append_null();
    list.append(true);
    list.append(false);
    list.values().append_value("bc");
    list.append(true);
    let st = StructArray::from(vec![
        (Arc::new(Field::new("x", DataType::Int64, false)), Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
        (
            Arc::new(Field::new("y", DataType::Utf8, true)),
            Arc::new(StringArray::from(vec![Some("p"), None])) as ArrayRef,
        ),
    ]);
    vec![
        ("bytes", Arc::new(UInt8Array::from(vec![1u8, 2, 3, 4, 5])) as ArrayRef),
        ("float-nulls", Arc::new(Float64Array::from(vec![Some(1.5), None, Some(-2.0)])) as ArrayRef),
        ("int32-sliced", (Arc::new(Int32Array::from((0..100).collect::<Vec<_>>())) as ArrayRef).slice(10, 20)),
        ("strings", Arc::new(StringArray::from(vec![Some("robot"), None, Some("pose")])) as ArrayRef),
        ("list-of-strings", Arc::new(list.finish()) as ArrayRef),
        ("struct", Arc::new(st) as ArrayRef),
    ]
}

/// The whole message for `array`, as a block would hold it.
fn encode(array: &ArrayRef) -> Vec<u8> {
    let data = array.to_data();
    let meta = br#"{"frame":"map","seq":7}"#.to_vec();
    let (frame, copies) = Frame::array(&data, encode_type(data.data_type(), None).expect("type"), meta).expect("frame");
    let mut bytes = vec![0u8; frame.total_len()];
    let start = frame.data_offset();
    for (buffer, at) in &copies {
        bytes[start + at..start + at + buffer.len()].copy_from_slice(buffer.as_slice());
    }
    frame.write_head(&mut bytes, 42);
    bytes
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

fn corpus() -> Vec<Vec<u8>> {
    seeds()
        .iter()
        .map(|(name, array)| {
            let path = corpus_dir().join(format!("{name}.msg"));
            let today = encode(array);
            if std::env::var_os("NERVE_BLESS").is_some() {
                // Renamed into place: tests running side by side never read half a file.
                let tmp = path.with_extension(format!("tmp{:?}", std::thread::current().id()));
                std::fs::write(&tmp, &today).expect("write corpus");
                std::fs::rename(&tmp, &path).expect("write corpus");
            }
            let kept =
                std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e} (NERVE_BLESS=1 writes it)", path.display()));
            assert_eq!(
                kept,
                today,
                "{}: the message format changed; bump MESSAGE_VERSION and re-bless",
                path.display()
            );
            kept
        })
        .collect()
}

fn decode(bytes: &[u8]) -> Result<ArrayRef, String> {
    let (_, array) = Decoder::default().decode_buffer(&aligned_copy(bytes)).map_err(|e| e.to_string())?;
    Ok(array)
}

#[test]
fn the_corpus_decodes_to_its_arrays() {
    for ((name, array), bytes) in seeds().iter().zip(corpus()) {
        let back = decode(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(&back, array, "{name}");
    }
}

proptest! {
    #[test]
    fn mutated_messages_decode_to_valid_arrays_or_errors(
        seed in 0usize..64,
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 1..8),
        cut in any::<usize>(),
    ) {
        let corpus = corpus();
        let mut bytes = corpus[seed % corpus.len()].clone();
        for (at, value, kind) in edits {
            let at = at % bytes.len();
            match kind {
                0 => bytes[at] = value,
                1 => bytes[at] ^= 1 << (value % 8),
                // Small integers in the layout words are the likeliest to reach deep checks.
                _ => bytes[at] = value % 8,
            }
        }
        if cut % 4 == 0 {
            bytes.truncate(cut % (bytes.len() + 1));
        }
        if let Ok(array) = decode(&bytes) {
            prop_assert!(array.to_data().validate_full().is_ok(), "decoded an invalid array: {array:?}");
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = decode(&bytes);
    }
}

//! A channel declared with a ROS 2 type is written as `ros2 bag` writes it and read back.

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, StringArray, StructArray, UInt32Array};
use arrow_schema::{DataType, Field};
use nerve_record::{CDR_ENCODING, ROS2_SCHEMA_ENCODING, Recording, RecordingWriter};
use nerve_shm::codec::Metadata;
use nerve_types::{Registry, TypeName};

fn strings(values: &[&str]) -> ArrayRef {
    Arc::new(StructArray::from(vec![(
        Arc::new(Field::new("data", DataType::Utf8, false)),
        Arc::new(StringArray::from(values.to_vec())) as ArrayRef,
    )]))
}

#[test]
fn a_typed_channel_is_cdr_under_a_ros2msg_schema_and_reads_back() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::temp_dir().join(format!("nerve-record-typed-{}.mcap", std::process::id()));
    let mut writer = RecordingWriter::create(&path)?;
    let registry = Registry::with_folders(Vec::new());
    writer.declare_type("talker/text", &registry, &TypeName::parse("std_msgs/msg/String")?)?;
    let metadata = Metadata { timestamp: 7, ..Default::default() };
    writer.write("talker/text", &metadata, strings(&["hello"]).as_ref(), 1)?;
    // Two rows are two ROS 2 messages.
    writer.write("talker/text", &metadata, strings(&["a", "bc"]).as_ref(), 2)?;
    // A value that is not of the declared type is kept as Arrow, not refused.
    writer.write("talker/text", &metadata, &UInt32Array::from(vec![5]), 3)?;
    writer.write("talker/count", &metadata, &UInt32Array::from(vec![9]), 4)?;
    let totals = writer.finish()?;
    assert_eq!(totals["talker/text"].written, 4);

    let bytes = std::fs::read(&path)?;
    let summary = mcap::Summary::read(&bytes)?.ok_or("no summary")?;
    let typed: Vec<_> = summary.channels.values().filter(|c| c.message_encoding == CDR_ENCODING).collect();
    assert_eq!(typed.len(), 1);
    let schema = typed[0].schema.as_ref().ok_or("no schema")?;
    assert_eq!((schema.name.as_str(), schema.encoding.as_str()), ("std_msgs/msg/String", ROS2_SCHEMA_ENCODING));
    assert_eq!(std::str::from_utf8(&schema.data)?, "string data\n");

    let recording = Recording::open(&path)?;
    let channels = BTreeSet::from(["talker/text".to_owned(), "talker/count".to_owned()]);
    let decoded: Vec<(ArrayRef, usize)> = recording
        .messages(&channels)?
        .iter()
        .map(|m| m.decode().map(|(a, p)| (a, p.len())))
        .collect::<Result<_, _>>()?;
    let expected: Vec<ArrayRef> = vec![
        strings(&["hello"]),
        strings(&["a"]),
        strings(&["bc"]),
        Arc::new(UInt32Array::from(vec![5])),
        Arc::new(UInt32Array::from(vec![9])),
    ];
    assert_eq!(decoded.len(), expected.len());
    for ((got, _), want) in decoded.iter().zip(&expected) {
        assert_eq!(got.to_data(), want.to_data());
    }
    std::fs::remove_file(&path)?;
    Ok(())
}

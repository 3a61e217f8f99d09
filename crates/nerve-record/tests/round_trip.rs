//! A recording written by the writer reads back whole: channels, messages in order, payloads,
//! parameters, types that change within a channel, metadata, and refusals of bad files.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::PathBuf;

use nerve_record::arrow_array::{Array, Float64Array, StringArray};
use nerve_record::{DATAFLOW_METADATA, DROPS_METADATA, ReadError, Recording, RecordingWriter};
use nerve_shm::codec::Metadata;

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("nerve-record-{name}-{}.mcap", std::process::id()))
}

fn meta(stamp: u64, i: i64) -> Metadata {
    let mut m = Metadata { timestamp: stamp, ..Default::default() };
    m.parameters.insert("i".into(), i.into());
    m
}

#[test]
fn writes_and_reads_back_everything() -> Result<(), Box<dyn std::error::Error>> {
    let path = temp("all");
    let mut w = RecordingWriter::create(&path)?;
    w.write_dataflow(std::path::Path::new("df.yml"), "nodes: []\n")?;
    w.declare("quiet/out");
    let base = 1_700_000_000_000_000_000u64;
    for i in 0..100u64 {
        let i_signed = i64::try_from(i)?;
        w.write("cam/image", &meta(i, i_signed), &Float64Array::from(vec![i as f64; 3]), base + i * 10)?;
        if i % 10 == 0 {
            // Another type on the same channel gets an MCAP channel of its own.
            w.write("cam/image", &meta(i, -i_signed), &StringArray::from(vec!["x"]), base + i * 10 + 1)?;
            w.write("topic/robot/pose", &meta(i, i_signed), &Float64Array::from(vec![0.5]), base + i * 10 + 2)?;
        }
    }
    w.count_dropped("topic/robot/pose", 3);
    let totals = w.finish()?;
    assert_eq!(totals["cam/image"].written, 110);
    assert_eq!(totals["quiet/out"].written, 0);

    let r = Recording::open(&path)?;
    let channels = r.channels()?;
    assert_eq!(channels, BTreeSet::from(["cam/image".to_owned(), "topic/robot/pose".to_owned()]));
    let wanted = BTreeSet::from(["cam/image".to_owned()]);
    let messages = r.messages(&wanted)?;
    assert_eq!(messages.len(), 110);
    assert!(messages.windows(2).all(|w| w[0].log_time <= w[1].log_time));
    // A whole recording is read through its indexes, straight from the mapped file.
    assert!(messages.iter().all(|m| matches!(m.data, Cow::Borrowed(_))));
    let (array, params) = messages[1].decode()?;
    assert_eq!(array.as_any().downcast_ref::<StringArray>().map(|a| a.value(0)), Some("x"));
    assert_eq!(params["i"], 0);
    let (array, params) = messages[2].decode()?;
    assert_eq!(array.as_any().downcast_ref::<Float64Array>(), Some(&Float64Array::from(vec![1.0; 3])));
    assert_eq!((params["i"].as_i64(), messages[2].publish_time), (Some(1), 1));

    let drops = r.metadata(DROPS_METADATA)?.ok_or("no drops record")?;
    assert_eq!(drops.get("topic/robot/pose").map(String::as_str), Some("3"));
    assert_eq!(drops.get("quiet/out").map(String::as_str), Some("0"));
    let dataflow = r.metadata(DATAFLOW_METADATA)?.ok_or("no dataflow record")?;
    assert_eq!(dataflow.get("yaml").map(String::as_str), Some("nodes: []\n"));
    std::fs::remove_file(&path)?;
    Ok(())
}

#[test]
fn a_recording_cut_short_still_reads() -> Result<(), Box<dyn std::error::Error>> {
    let path = temp("cut");
    let mut w = RecordingWriter::create(&path)?;
    for i in 0..5 {
        w.write("a/b", &meta(1, i), &Float64Array::from(vec![1.0]), 10 + u64::try_from(i)?)?;
    }
    w.finish()?;
    // Everything after the data section is gone, as when the recorder is killed before it
    // finished: the messages before the cut still read.
    let bytes = std::fs::read(&path)?;
    let cut = temp("cut2");
    for (keep, whole) in [(bytes.len() - 8, true), (bytes.len() / 2, false)] {
        std::fs::write(&cut, &bytes[..keep])?;
        let r = Recording::open(&cut)?;
        let channels = r.channels()?;
        let messages = r.messages(&channels)?;
        assert_eq!(channels.len(), 1);
        assert_eq!(messages.len() == 5, whole, "{} messages read from {keep} bytes", messages.len());
        assert!(!messages.is_empty());
        // Without a summary it is read linearly, its data copied.
        assert!(messages.iter().all(|m| matches!(m.data, Cow::Owned(_))));
        for m in &messages {
            m.decode()?;
        }
    }
    std::fs::remove_file(&path)?;
    std::fs::remove_file(&cut)?;
    Ok(())
}

#[test]
fn a_file_that_is_not_mcap_is_refused() -> Result<(), Box<dyn std::error::Error>> {
    let path = temp("junk");
    std::fs::write(&path, b"nodes:\n  - id: camera\n")?;
    let err = Recording::open(&path).err().ok_or("junk was accepted")?;
    assert!(matches!(err, ReadError::NotMcap { .. }));
    assert_eq!(
        err.to_string(),
        format!("{} is not an MCAP file (it does not start with the MCAP magic bytes)", path.display())
    );
    std::fs::remove_file(&path)?;
    Ok(())
}

#[test]
fn compressed_recordings_read_back_whole_and_are_smaller() -> Result<(), Box<dyn std::error::Error>> {
    use nerve_record::Compression;
    let write = |name: &str, compression: Compression| -> Result<PathBuf, Box<dyn std::error::Error>> {
        let path = temp(name);
        let mut w = RecordingWriter::create_compressed(&path, compression)?;
        for i in 0..200u32 {
            // Mostly repeated values, as images and maps are: compression has something to do.
            let values = Float64Array::from(vec![f64::from(i % 7); 4096]);
            w.write("cam/image", &meta(u64::from(i), i64::from(i)), &values, 1_000 + u64::from(i))?;
        }
        w.finish()?;
        Ok(path)
    };
    let plain = write("plain", Compression::None)?;
    let plain_len = std::fs::metadata(&plain)?.len();
    for (name, compression) in [("zstd", Compression::Zstd), ("lz4", Compression::Lz4)] {
        let path = write(name, compression)?;
        let len = std::fs::metadata(&path)?.len();
        assert!(len * 4 < plain_len, "{name}: {len} bytes against {plain_len} uncompressed");
        let r = Recording::open(&path)?;
        let wanted = BTreeSet::from(["cam/image".to_owned()]);
        let messages = r.messages(&wanted)?;
        assert_eq!(messages.len(), 200, "{name}");
        for (i, m) in (0u32..).zip(&messages) {
            let (array, params) = m.decode()?;
            let values = array.as_any().downcast_ref::<Float64Array>().ok_or("not f64")?;
            assert_eq!(
                (values.len(), values.value(4095), params["i"].as_i64()),
                (4096, f64::from(i % 7), Some(i64::from(i)))
            );
        }
        std::fs::remove_file(&path)?;
    }
    std::fs::remove_file(&plain)?;
    Ok(())
}

#[test]
fn a_split_recording_reads_back_as_one_and_replaces_an_earlier_one() -> Result<(), Box<dyn std::error::Error>> {
    use nerve_record::{Compression, Split, part_path};
    use std::time::Duration;
    let name = temp("split");
    let write = |n: u64, split: Split| -> Result<(), Box<dyn std::error::Error>> {
        let mut w = RecordingWriter::create_split(&name, Compression::None, split)?;
        w.write_dataflow(std::path::Path::new("df.yml"), "nodes: []\n")?;
        for i in 0..n {
            // 8 KiB of values a message, 1 ms of log time apart.
            let values = Float64Array::from(vec![i as f64; 1024]);
            w.write("cam/image", &meta(i, i64::try_from(i)?), &values, 1_000_000_000 + i * 1_000_000)?;
        }
        w.count_dropped("cam/image", 2);
        w.finish()?;
        Ok(())
    };
    // An earlier, longer recording of the same name: its parts must not be read with the new one's.
    write(100, Split { bytes: Some(100 * 1024), duration: None })?;
    assert!(part_path(&name, 7).exists() && !name.exists());
    write(60, Split { bytes: None, duration: Some(Duration::from_millis(20)) })?;
    let parts: Vec<PathBuf> = (0..).map(|i| part_path(&name, i)).take_while(|p| p.exists()).collect();
    assert_eq!(parts.len(), 3, "60 ms of messages, 20 ms a part: {parts:?}");

    let r = Recording::open(&name)?;
    assert_eq!(r.files().count(), 3);
    let wanted = BTreeSet::from(["cam/image".to_owned()]);
    let messages = r.messages(&wanted)?;
    let sent: Vec<f64> = messages
        .iter()
        .map(|m| Ok(m.decode()?.0.as_any().downcast_ref::<Float64Array>().ok_or("not f64")?.value(0)))
        .collect::<Result<_, Box<dyn std::error::Error>>>()?;
    assert_eq!(sent, (0..60).map(f64::from).collect::<Vec<_>>());
    assert_eq!(r.message_counts()?["cam/image"], 60);
    assert_eq!(r.metadata(DROPS_METADATA)?.ok_or("no drops")?["cam/image"], "2");
    for part in &parts {
        // Every part stands alone: the dataflow is in each.
        assert!(Recording::open(part)?.metadata(DATAFLOW_METADATA)?.is_some(), "{}", part.display());
        std::fs::remove_file(part)?;
    }
    assert!(matches!(Recording::open(&name), Err(ReadError::Open { .. })));
    Ok(())
}

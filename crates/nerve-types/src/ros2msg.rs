//! A message type's full definition as one text, the `ros2msg` schema of MCAP recordings that
//! `ros2 bag` writes: the type's own fields, then each type it contains after a line of `=`
//! and `MSG: package/Name`. A recording carries it, so it is read back without the files.

use std::sync::Arc;

use crate::definition::Message;
use crate::name::{Kind, TypeName};
use crate::parse::{ParseError, parse_file};
use crate::registry::{Registry, TypesError};

/// The line between two definitions.
const SEPARATOR: &str = "================================================================================";

/// The `ros2msg` text of message type `name` (a `.msg` type).
///
/// # Errors
/// As [`Registry::resolve`].
pub fn ros2msg(registry: &Registry, name: &TypeName) -> Result<String, TypesError> {
    let mut messages = registry.resolve(name)?;
    let top = messages.pop().ok_or_else(|| registry.unknown(name.clone(), None))?;
    let mut text = top.to_string();
    for m in &messages {
        text.push_str(&format!("{SEPARATOR}\nMSG: {}/{}\n{m}", m.name.package, m.name.name));
    }
    Ok(text)
}

/// A registry holding the definitions of a `ros2msg` text of type `name` (types it does not
/// define are looked up among the shipped interfaces).
///
/// # Errors
/// A section that does not parse, named `<schema of NAME>` with its line in the text.
pub fn registry_of(name: &TypeName, text: &str) -> Result<Registry, ParseError> {
    let file = format!("<schema of {name}>");
    let mut messages: Vec<Message> = Vec::new();
    let mut section_name = TypeName { kind: Kind::Msg, ..name.clone() };
    let mut section = String::new();
    // Lines before each section, so a mistake is reported at its line in the whole text.
    let mut offset = 0;
    let mut lines = text.lines().enumerate().peekable();
    loop {
        let line = lines.next();
        let ends = line.is_none_or(|(_, l)| l.starts_with("=====") && l.trim_end().chars().all(|c| c == '='));
        if !ends {
            section.push_str(line.map_or("", |(_, l)| l));
            section.push('\n');
            continue;
        }
        let padded = "\n".repeat(offset) + &section;
        let parsed = parse_file(&section_name, &padded, &file)?;
        messages.extend(parsed);
        let Some((at, _)) = line else { break };
        let Some((header_at, header)) = lines.next() else {
            return Err(ParseError { file, line: at + 1, message: "a separator with no `MSG:` line after it".into() });
        };
        let stem = header.trim().strip_prefix("MSG:").map(str::trim).ok_or_else(|| ParseError {
            file: file.clone(),
            line: header_at + 1,
            message: format!("`{header}` is not `MSG: package/Name`"),
        })?;
        section_name = TypeName::parse(stem).map_err(|e| ParseError {
            file: file.clone(),
            line: header_at + 1,
            message: e.to_string(),
        })?;
        offset = header_at + 1;
        section.clear();
    }
    let registry = Registry::with_folders(Vec::new());
    registry.insert(messages.into_iter().map(Arc::new));
    Ok(registry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdr::Codec;

    #[test]
    fn an_image_schema_reads_back_to_the_same_type() -> Result<(), Box<dyn std::error::Error>> {
        let registry = Registry::with_folders(Vec::new());
        let image = TypeName::parse("sensor_msgs/msg/Image")?;
        let text = ros2msg(&registry, &image)?;
        assert!(text.starts_with("std_msgs/Header header\nuint32 height\n"), "{text}");
        assert!(text.contains(&format!("{SEPARATOR}\nMSG: builtin_interfaces/Time\nint32 sec\n")), "{text}");
        let read = registry_of(&image, &text)?;
        assert_eq!(Codec::new(&read, &image)?.data_type(), Codec::new(&registry, &image)?.data_type());
        Ok(())
    }

    #[test]
    fn a_schema_of_a_type_nowhere_else_is_enough() -> Result<(), Box<dyn std::error::Error>> {
        let text = format!("Point[] points\nstring label\n{SEPARATOR}\nMSG: my_msgs/Point\nfloat64 x\nfloat64 y\n");
        let track = TypeName::parse("my_msgs/msg/Track")?;
        let registry = registry_of(&track, &text)?;
        let fields: Vec<String> = registry.message(&track)?.fields.iter().map(|f| f.name.clone()).collect();
        assert_eq!(fields, ["points", "label"]);
        assert!(Codec::new(&registry, &track).is_ok());
        let broken = text.replace("float64 y", "float64 y z w");
        let e = registry_of(&track, &broken).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.starts_with("<schema of my_msgs/msg/Track>:6:"), "{e}");
        Ok(())
    }
}

//! ROS 2 type hashes (`RIHS01_…`, REP-2011): the SHA-256 of a type's description and of every
//! type it contains, the way ROS 2's own generator writes it, so two ends that disagree on a
//! type's layout can tell.

use std::fmt::Write;

use sha2::{Digest, Sha256};

use crate::definition::{Array, BaseType, FieldType, Message, Primitive};
use crate::name::TypeName;
use crate::registry::{Registry, TypesError};

/// The field ROS 2 adds to a message without fields (C and C++ cannot have empty structs).
const EMPTY_MEMBER: &str = "structure_needs_at_least_one_member";

/// The ROS 2 type hash of the message `name`, `RIHS01_` and 64 hex digits.
///
/// # Errors
/// As [`Registry::resolve`].
pub fn type_hash(registry: &Registry, name: &TypeName) -> Result<String, TypesError> {
    let digest = Sha256::digest(hashed_description(registry, name)?.as_bytes());
    let mut hash = String::from("RIHS01_");
    for byte in digest {
        let _ = write!(hash, "{byte:02x}");
    }
    Ok(hash)
}

/// The text that is hashed: the type's description and those of the types it contains
/// (sorted by name), without defaults, as Python's `json.dumps` writes them.
fn hashed_description(registry: &Registry, name: &TypeName) -> Result<String, TypesError> {
    let mut messages = registry.resolve(name)?;
    let Some(top) = messages.pop() else {
        return Err(registry.unknown(name.clone(), None));
    };
    messages.sort_by_key(|m| m.name.to_string());
    let referenced: Vec<String> = messages.iter().map(|m| describe(m)).collect();
    Ok(format!(
        "{{\"type_description\": {}, \"referenced_type_descriptions\": [{}]}}",
        describe(&top),
        referenced.join(", ")
    ))
}

fn describe(m: &Message) -> String {
    let mut fields: Vec<String> = m.fields.iter().map(|f| describe_field(&f.name, &f.ty)).collect();
    if fields.is_empty() {
        let dummy = FieldType { base: BaseType::Primitive(Primitive::UInt8), array: Array::Single };
        fields.push(describe_field(EMPTY_MEMBER, &dummy));
    }
    format!("{{\"type_name\": \"{}\", \"fields\": [{}]}}", m.name, fields.join(", "))
}

fn describe_field(name: &str, ty: &FieldType) -> String {
    let (base, string_capacity, nested) = match &ty.base {
        BaseType::Primitive(p) => (primitive_id(*p), 0, String::new()),
        BaseType::String(None) => (17, 0, String::new()),
        BaseType::WString(None) => (18, 0, String::new()),
        BaseType::String(Some(n)) => (21, *n, String::new()),
        BaseType::WString(Some(n)) => (22, *n, String::new()),
        BaseType::Message(t) => (1, 0, t.to_string()),
    };
    let (offset, capacity) = match ty.array {
        Array::Single => (0, 0),
        Array::Fixed(n) => (48, n),
        Array::Bounded(n) => (96, n),
        Array::Unbounded => (144, 0),
    };
    format!(
        "{{\"name\": \"{name}\", \"type\": {{\"type_id\": {}, \"capacity\": {capacity}, \"string_capacity\": \
         {string_capacity}, \"nested_type_name\": \"{nested}\"}}}}",
        base + offset
    )
}

/// `type_description_interfaces/msg/FieldType`'s ids. A `.msg` `char` is IDL's `uint8`.
fn primitive_id(p: Primitive) -> usize {
    match p {
        Primitive::Int8 => 2,
        Primitive::UInt8 | Primitive::Char => 3,
        Primitive::Int16 => 4,
        Primitive::UInt16 => 5,
        Primitive::Int32 => 6,
        Primitive::UInt32 => 7,
        Primitive::Int64 => 8,
        Primitive::UInt64 => 9,
        Primitive::Float32 => 10,
        Primitive::Float64 => 11,
        Primitive::Bool => 15,
        Primitive::Byte => 16,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hashes from the `.json` files of ROS 2's own packages (PyPI wheels, Kilted); the Python
    /// suite compares every message type of the installed wheels.
    #[test]
    fn hashes_match_ros_2s_own() -> Result<(), Box<dyn std::error::Error>> {
        let registry = Registry::with_folders(Vec::new());
        for (name, hash) in [
            ("std_msgs/msg/Header", "RIHS01_f49fb3ae2cf070f793645ff749683ac6b06203e41c891e17701b1cb597ce6a01"),
            ("builtin_interfaces/msg/Time", "RIHS01_b106235e25a4c5ed35098aa0a61a3ee9c9b18d197f398b0e4206cea9acf9c197"),
            ("std_msgs/msg/Empty", "RIHS01_20b625256f32d5dbc0d04fee44f43c41e51c70d3502f84b4a08e7a9c26a96312"),
        ] {
            assert_eq!(type_hash(&registry, &TypeName::parse(name)?)?, hash, "{name}");
        }
        Ok(())
    }
}

//! Every message type is an Arrow type: a struct of its fields, so a typed message still
//! travels zero-copy and is still a `pyarrow` value.
//!
//! | interface file | Arrow |
//! |---|---|
//! | `bool` | `Boolean` |
//! | `byte`, `char`, `uint8` | `UInt8` |
//! | `int8` … `uint64` | `Int8` … `UInt64` |
//! | `float32`, `float64` | `Float32`, `Float64` |
//! | `string`, `wstring` (bounded or not) | `Utf8` |
//! | a message | `Struct` of its fields |
//! | `T[N]` | `FixedSizeList<T, N>` |
//! | `T[]`, `T[<=N]` | `List<T>`: the elements of every row in one contiguous buffer |

use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields};

use crate::definition::{Array, BaseType, FieldType, Message, Primitive};
use crate::name::TypeName;
use crate::registry::{Registry, TypesError};

/// The Arrow type of the message `name`: a struct of its fields (see the module's table).
///
/// # Errors
/// As [`Registry::resolve`].
pub fn arrow_type(registry: &Registry, name: &TypeName) -> Result<DataType, TypesError> {
    let messages = registry.resolve(name)?;
    let mut done: Vec<(&TypeName, DataType)> = Vec::with_capacity(messages.len());
    // Contained messages come first, so each struct is built from those already done.
    for m in &messages {
        let ty = struct_of(m, &done);
        done.push((&m.name, ty));
    }
    Ok(done.pop().map(|(_, ty)| ty).unwrap_or(DataType::Null))
}

fn struct_of(m: &Message, done: &[(&TypeName, DataType)]) -> DataType {
    let fields: Fields = m.fields.iter().map(|f| Field::new(&f.name, field_type(&f.ty, done), false)).collect();
    DataType::Struct(fields)
}

fn field_type(ty: &FieldType, done: &[(&TypeName, DataType)]) -> DataType {
    let element = match &ty.base {
        BaseType::Primitive(p) => primitive(*p),
        BaseType::String(_) | BaseType::WString(_) => DataType::Utf8,
        BaseType::Message(name) => done.iter().find(|(n, _)| *n == name).map_or(DataType::Null, |(_, t)| t.clone()),
    };
    let item = || Arc::new(Field::new("item", element.clone(), false));
    match ty.array {
        Array::Single => element,
        Array::Fixed(n) => DataType::FixedSizeList(item(), i32::try_from(n).unwrap_or(i32::MAX)),
        Array::Bounded(_) | Array::Unbounded => DataType::List(item()),
    }
}

/// The Arrow type of a primitive.
#[must_use]
pub fn primitive(p: Primitive) -> DataType {
    match p {
        Primitive::Bool => DataType::Boolean,
        Primitive::Byte | Primitive::Char | Primitive::UInt8 => DataType::UInt8,
        Primitive::Int8 => DataType::Int8,
        Primitive::Int16 => DataType::Int16,
        Primitive::UInt16 => DataType::UInt16,
        Primitive::Int32 => DataType::Int32,
        Primitive::UInt32 => DataType::UInt32,
        Primitive::Int64 => DataType::Int64,
        Primitive::UInt64 => DataType::UInt64,
        Primitive::Float32 => DataType::Float32,
        Primitive::Float64 => DataType::Float64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_is_a_struct_with_a_header_and_one_byte_buffer() -> Result<(), Box<dyn std::error::Error>> {
        let registry = Registry::with_folders(Vec::new());
        let image = arrow_type(&registry, &TypeName::parse("sensor_msgs/msg/Image")?)?;
        let expected = "Struct(\"header\": non-null Struct(\"stamp\": non-null Struct(\"sec\": non-null Int32, \
                        \"nanosec\": non-null UInt32), \"frame_id\": non-null Utf8), \"height\": non-null UInt32, \
                        \"width\": non-null UInt32, \"encoding\": non-null Utf8, \"is_bigendian\": non-null UInt8, \
                        \"step\": non-null UInt32, \"data\": non-null List(non-null UInt8))";
        assert_eq!(format!("{image}"), expected);
        let info = arrow_type(&registry, &TypeName::parse("sensor_msgs/CameraInfo")?)?;
        let DataType::Struct(fields) = info else { panic!("{info}") };
        let k = fields.find("k").map(|(_, f)| f.data_type().clone());
        assert_eq!(k, Some(DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Float64, false)), 9)));
        Ok(())
    }
}

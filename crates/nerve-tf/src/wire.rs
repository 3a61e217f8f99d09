//! Transforms as they travel on the `tf` and `tf_static` topics: an Arrow `StructArray`, one
//! row per transform, readable by any Arrow tool (and so by recorders).
//!
//! | field | Arrow type | meaning |
//! |---|---|---|
//! | `parent` | `Utf8` | the frame the transform maps into |
//! | `child` | `Utf8` | the frame the transform maps from |
//! | `stamp_ns` | `Int64` | nanoseconds on nerve's clock |
//! | `translation_x`, `translation_y`, `translation_z` | `Float64` | translation |
//! | `rotation_x`, `rotation_y`, `rotation_z`, `rotation_w` | `Float64` | unit quaternion |
//!
//! No field may be null. Readers look fields up by name, so extra fields are ignored.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Float64Array, Int64Array, StringArray, StructArray};
use arrow_schema::{DataType, Field, Fields};

use crate::transform::{StampedTransform, Transform};

/// Topic of time-stamped (moving) transforms.
pub const TF_TOPIC: &str = "tf";
/// Topic of static transforms, valid at every time.
pub const TF_STATIC_TOPIC: &str = "tf_static";

const TRANSLATION: [&str; 3] = ["translation_x", "translation_y", "translation_z"];
const ROTATION: [&str; 4] = ["rotation_x", "rotation_y", "rotation_z", "rotation_w"];

/// The Arrow fields of one transform, in order.
#[must_use]
pub fn fields() -> Fields {
    let mut fields = vec![Field::new("parent", DataType::Utf8, false), Field::new("child", DataType::Utf8, false)];
    fields.push(Field::new("stamp_ns", DataType::Int64, false));
    fields.extend(TRANSLATION.iter().chain(&ROTATION).map(|name| Field::new(*name, DataType::Float64, false)));
    Fields::from(fields)
}

/// One message holding `transforms`.
#[must_use]
pub fn encode(transforms: &[StampedTransform]) -> ArrayRef {
    let floats = |value: &dyn Fn(&Transform) -> f64| -> ArrayRef {
        Arc::new(transforms.iter().map(|t| value(&t.transform)).collect::<Float64Array>())
    };
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(transforms.iter().map(|t| Some(t.parent.as_str())).collect::<StringArray>()),
        Arc::new(transforms.iter().map(|t| Some(t.child.as_str())).collect::<StringArray>()),
        Arc::new(transforms.iter().map(|t| t.stamp_ns).collect::<Int64Array>()),
    ];
    columns.extend((0..3).map(|i| floats(&|t| t.translation[i])));
    columns.extend((0..4).map(|i| floats(&|t| t.rotation[i])));
    Arc::new(StructArray::new(fields(), columns, None))
}

/// What keeps an array from being a message of transforms (see [`decode`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Not a struct array.
    #[error("expected a struct array of transforms, got {0}")]
    NotStruct(DataType),
    /// A whole row is null.
    #[error("a row is null")]
    NullRow,
    /// A field of the schema is missing.
    #[error("no field `{0}`")]
    MissingField(&'static str),
    /// A field holds nulls.
    #[error("field `{0}` has nulls")]
    NullField(&'static str),
    /// A field is of another type.
    #[error("field `{name}` is {found}, expected {expected}")]
    WrongType {
        /// The field.
        name: &'static str,
        /// Its type.
        found: DataType,
        /// The schema's.
        expected: DataType,
    },
}

/// The transforms of one message.
///
/// # Errors
/// [`DecodeError`]: what keeps `array` from being a list of transforms: not a struct, a missing
/// field, a field of the wrong type, a null.
pub fn decode(array: &ArrayRef) -> Result<Vec<StampedTransform>, DecodeError> {
    let rows = array
        .as_any()
        .downcast_ref::<StructArray>()
        .ok_or_else(|| DecodeError::NotStruct(array.data_type().clone()))?;
    if rows.null_count() > 0 {
        return Err(DecodeError::NullRow);
    }
    let parent = column::<StringArray>(rows, "parent", &DataType::Utf8)?;
    let child = column::<StringArray>(rows, "child", &DataType::Utf8)?;
    let stamp = column::<Int64Array>(rows, "stamp_ns", &DataType::Int64)?;
    let float = |name| column::<Float64Array>(rows, name, &DataType::Float64);
    let translation = [float(TRANSLATION[0])?, float(TRANSLATION[1])?, float(TRANSLATION[2])?];
    let rotation = [float(ROTATION[0])?, float(ROTATION[1])?, float(ROTATION[2])?, float(ROTATION[3])?];
    Ok((0..rows.len())
        .map(|i| {
            let transform =
                Transform { translation: translation.map(|c| c.value(i)), rotation: rotation.map(|c| c.value(i)) };
            StampedTransform::new(parent.value(i), child.value(i), stamp.value(i), transform)
        })
        .collect())
}

fn column<'a, T: 'static>(
    rows: &'a StructArray,
    name: &'static str,
    expected: &DataType,
) -> Result<&'a T, DecodeError> {
    let c = rows.column_by_name(name).ok_or(DecodeError::MissingField(name))?;
    if c.null_count() > 0 {
        return Err(DecodeError::NullField(name));
    }
    c.as_any().downcast_ref::<T>().ok_or_else(|| DecodeError::WrongType {
        name,
        found: c.data_type().clone(),
        expected: expected.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transforms_survive_the_round_trip() -> Result<(), DecodeError> {
        let sent = vec![
            StampedTransform::new(
                "world",
                "base",
                42,
                Transform { translation: [1.0, 2.0, 3.0], rotation: [0.0, 0.0, 0.6, 0.8] },
            ),
            StampedTransform::new("base", "camera", -7, Transform::IDENTITY),
        ];
        let array = encode(&sent);
        assert_eq!(array.data_type(), &DataType::Struct(fields()));
        assert_eq!(decode(&array)?, sent);
        assert!(decode(&encode(&[]))?.is_empty());
        Ok(())
    }

    #[test]
    fn a_foreign_array_is_refused_with_the_reason() {
        let numbers: ArrayRef = Arc::new(Float64Array::from(vec![1.0]));
        assert!(decode(&numbers).expect_err("not a struct").to_string().contains("struct"));
        let wrong: ArrayRef = Arc::new(StructArray::from(vec![(
            Arc::new(Field::new("parent", DataType::Float64, false)),
            Arc::new(Float64Array::from(vec![1.0])) as ArrayRef,
        )]));
        assert_eq!(decode(&wrong).expect_err("wrong type").to_string(), "field `parent` is Float64, expected Utf8");
    }
}

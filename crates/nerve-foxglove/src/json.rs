//! Arrow values as JSON, and back: the `json` encoding of untyped channels, of client publish
//! and of service calls.
//!
//! A message goes out as one object, `{"timestamp": NS, "parameters": {…}, "value": [...]}`:
//! the sender's stamp and metadata parameters, and the array's values as a JSON list (a struct
//! row as an object, a list as a list), so a Foxglove message path such as `/topic.value[0]`
//! plots a number. Values JSON has no form for (decimals, times, durations) are written as Arrow
//! prints them.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, StringArray};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::DataType;
use nerve_topic::{Message, Parameters};
use serde_json::{Map, Value};

use crate::error::PayloadError;

/// The name of [`MESSAGE_SCHEMA`].
pub const MESSAGE_SCHEMA_NAME: &str = "nerve.Message";

/// The JSON schema of a message's object, which Foxglove offers message paths from.
pub const MESSAGE_SCHEMA: &str = r#"{"title":"nerve.Message","type":"object","properties":{"timestamp":{"type":"integer"},"parameters":{"type":"object"},"value":{"type":"array"}}}"#;

/// The JSON object a message goes out as (see the module's documentation).
#[must_use]
pub fn message(message: &Message) -> Vec<u8> {
    let mut object = Map::new();
    object.insert("timestamp".into(), message.metadata.timestamp.into());
    object.insert("parameters".into(), Value::Object(message.metadata.parameters.clone()));
    object.insert("value".into(), values(message.data.as_ref()));
    // Serializing a `Value` cannot fail: its keys are strings.
    serde_json::to_vec(&Value::Object(object)).unwrap_or_default()
}

/// Every value of `array`, as a JSON list.
#[must_use]
pub fn values(array: &dyn Array) -> Value {
    values_up_to(array, usize::MAX)
}

/// Like [`values`], but a list (the array itself, a list inside it, bytes) of more than `limit`
/// items keeps its first `limit` and ends with a string saying how many more there are: a
/// preview of a value too large to show whole (an image's pixels, a point cloud).
#[must_use]
pub fn values_up_to(array: &dyn Array, limit: usize) -> Value {
    listed(array.len(), limit, |i| value(array, i, limit))
}

/// A JSON list of `len` items: the first `limit`, made by `item`, then a string counting the
/// rest.
fn listed(len: usize, limit: usize, item: impl Fn(usize) -> Value) -> Value {
    let shown = len.min(limit);
    let mut items: Vec<Value> = (0..shown).map(item).collect();
    if shown < len {
        items.push(format!("… {} more", len - shown).into());
    }
    Value::Array(items)
}

/// Value `i` of `array` as JSON: `null` for a null, a number, a string, a list or an object.
fn value(array: &dyn Array, i: usize, limit: usize) -> Value {
    if array.is_null(i) {
        return Value::Null;
    }
    match array.data_type() {
        DataType::Null => Value::Null,
        DataType::Boolean => array.as_boolean().value(i).into(),
        DataType::Int8 => array.as_primitive::<Int8Type>().value(i).into(),
        DataType::Int16 => array.as_primitive::<Int16Type>().value(i).into(),
        DataType::Int32 => array.as_primitive::<Int32Type>().value(i).into(),
        DataType::Int64 => array.as_primitive::<Int64Type>().value(i).into(),
        DataType::UInt8 => array.as_primitive::<UInt8Type>().value(i).into(),
        DataType::UInt16 => array.as_primitive::<UInt16Type>().value(i).into(),
        DataType::UInt32 => array.as_primitive::<UInt32Type>().value(i).into(),
        DataType::UInt64 => array.as_primitive::<UInt64Type>().value(i).into(),
        DataType::Float16 => float(f64::from(array.as_primitive::<Float16Type>().value(i))),
        DataType::Float32 => float(f64::from(array.as_primitive::<Float32Type>().value(i))),
        DataType::Float64 => float(array.as_primitive::<Float64Type>().value(i)),
        DataType::Utf8 => array.as_string::<i32>().value(i).into(),
        DataType::LargeUtf8 => array.as_string::<i64>().value(i).into(),
        DataType::Utf8View => array.as_string_view().value(i).into(),
        DataType::Binary => bytes(array.as_binary::<i32>().value(i), limit),
        DataType::LargeBinary => bytes(array.as_binary::<i64>().value(i), limit),
        DataType::FixedSizeBinary(_) => bytes(array.as_fixed_size_binary().value(i), limit),
        DataType::List(_) => values_up_to(array.as_list::<i32>().value(i).as_ref(), limit),
        DataType::LargeList(_) => values_up_to(array.as_list::<i64>().value(i).as_ref(), limit),
        DataType::FixedSizeList(..) => values_up_to(array.as_fixed_size_list().value(i).as_ref(), limit),
        DataType::Struct(fields) => {
            let row = array.as_struct();
            let object = fields.iter().zip(row.columns()).map(|(f, c)| (f.name().clone(), value(c.as_ref(), i, limit)));
            Value::Object(object.collect())
        }
        _ => displayed(array, i),
    }
}

/// A float as a JSON number; NaN and the infinities, which JSON lacks, as `null`.
fn float(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// Bytes as a list of numbers, as JSON has no bytes (the first `limit`, as [`values_up_to`]).
fn bytes(b: &[u8], limit: usize) -> Value {
    listed(b.len(), limit, |i| b[i].into())
}

/// Value `i` as Arrow prints it, for the types JSON has no form for.
fn displayed(array: &dyn Array, i: usize) -> Value {
    let options = FormatOptions::new();
    match ArrayFormatter::try_new(array, &options) {
        Ok(formatter) => formatter.value(i).to_string().into(),
        Err(e) => format!("<cannot display: {e}>").into(),
    }
}

/// A request or a published message in JSON, as nerve values: `{"value": V, "parameters": {…},
/// "type": "Float32"}` with the last two optional, or `V` alone. `V` is a list or one value,
/// read as `nerve topic pub` reads its values: integers as `Int64`, other numbers `Float64`,
/// booleans `Boolean`, anything else `Utf8`, unless `type` names an Arrow type.
///
/// # Errors
/// [`PayloadError`] for text that is not JSON, a `parameters` that is not an object, an unknown
/// type, or values that do not fit it.
pub fn parse(payload: &[u8]) -> Result<(ArrayRef, Parameters), PayloadError> {
    let json: Value = serde_json::from_slice(payload).map_err(|e| PayloadError::Json(e.to_string()))?;
    let (value, parameters, type_name) = match json {
        Value::Object(mut object) if object.contains_key("value") => {
            let parameters = match object.remove("parameters") {
                None | Some(Value::Null) => Parameters::new(),
                Some(Value::Object(p)) => p,
                Some(other) => return Err(PayloadError::Parameters(other.to_string())),
            };
            let type_name = match object.remove("type") {
                None | Some(Value::Null) => None,
                Some(Value::String(t)) => Some(t),
                Some(other) => return Err(PayloadError::UnknownType(other.to_string())),
            };
            (object.remove("value").unwrap_or(Value::Null), parameters, type_name)
        }
        Value::Object(_) => return Err(PayloadError::NoValue),
        other => (other, Parameters::new(), None),
    };
    let items = match value {
        Value::Array(items) => items,
        one => vec![one],
    };
    let target = match type_name {
        Some(name) => name.parse::<DataType>().map_err(|_| PayloadError::UnknownType(name))?,
        None if items.iter().all(Value::is_i64) => DataType::Int64,
        None if items.iter().all(Value::is_number) => DataType::Float64,
        None if items.iter().all(Value::is_boolean) => DataType::Boolean,
        None => DataType::Utf8,
    };
    // Through text, as Arrow's casts read numbers and booleans from it exactly.
    let text: StringArray = items
        .iter()
        .map(|v| match v {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        })
        .collect();
    let options = arrow_cast::CastOptions { safe: false, ..Default::default() };
    let array = arrow_cast::cast_with_options(&text, &target, &options)
        .map_err(|e| PayloadError::Values { data_type: target.to_string(), why: e.to_string() })?;
    Ok((array, parameters))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::builder::{Float64Builder, ListBuilder};
    use arrow_array::{BooleanArray, Float32Array, Int64Array, StructArray, UInt8Array};
    use arrow_schema::{Field, Fields};
    use nerve_topic::Metadata;

    use super::*;

    fn json(array: &dyn Array) -> String {
        values(array).to_string()
    }

    #[test]
    fn numbers_strings_lists_and_structs_take_their_json_form() {
        assert_eq!(json(&Int64Array::from(vec![Some(1), None, Some(-3)])), "[1,null,-3]");
        assert_eq!(json(&Float32Array::from(vec![0.5, f32::NAN])), "[0.5,null]");
        assert_eq!(json(&StringArray::from(vec!["a\"b"])), r#"["a\"b"]"#);
        let mut lists = ListBuilder::new(Float64Builder::new());
        lists.values().append_slice(&[1.0, 2.5]);
        lists.append(true);
        lists.append(false);
        assert_eq!(json(&lists.finish()), "[[1.0,2.5],null]");
        let fields =
            Fields::from(vec![Field::new("x", DataType::UInt8, false), Field::new("ok", DataType::Boolean, false)]);
        let columns: Vec<ArrayRef> =
            vec![Arc::new(UInt8Array::from(vec![7])), Arc::new(BooleanArray::from(vec![true]))];
        let row = StructArray::new(fields, columns, None);
        assert_eq!(json(&row), r#"[{"ok":true,"x":7}]"#);
    }

    #[test]
    fn a_message_carries_its_stamp_and_parameters() {
        let mut parameters = Parameters::new();
        parameters.insert("frame".into(), "map".into());
        let data: ArrayRef = Arc::new(Int64Array::from(vec![4]));
        let m =
            Message::new(Arc::<str>::from("t").into(), Metadata { timestamp: 9, parameters, extension: None }, data);
        let text = String::from_utf8_lossy(&message(&m)).into_owned();
        assert_eq!(text, r#"{"parameters":{"frame":"map"},"timestamp":9,"value":[4]}"#);
    }

    #[test]
    fn payloads_read_as_nerve_topic_pub_reads_values() -> Result<(), PayloadError> {
        let (array, parameters) = parse(b"[1, 2, 3]")?;
        assert_eq!(array.data_type(), &DataType::Int64);
        assert!(parameters.is_empty());
        let (array, _) = parse(b"2.5")?;
        assert_eq!(array.as_primitive::<Float64Type>().values().as_ref(), &[2.5]);
        let (array, parameters) = parse(br#"{"value": [1, 2], "type": "Float32", "parameters": {"k": 1}}"#)?;
        assert_eq!(array.data_type(), &DataType::Float32);
        assert_eq!(parameters.get("k"), Some(&Value::from(1)));
        let (array, _) = parse(br#"["a", 1]"#)?;
        assert_eq!(array.as_string::<i32>().value(1), "1");
        Ok(())
    }

    #[test]
    fn bad_payloads_say_what_is_wrong() {
        let error = |p: &[u8]| parse(p).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error(b"{").starts_with("the payload is not JSON"), "{}", error(b"{"));
        assert_eq!(
            error(br#"{"data": 1}"#),
            "a JSON object payload needs a `value` key (and may have `parameters`, `type`)"
        );
        assert_eq!(error(br#"{"value": 1, "type": "Int65"}"#), "`Int65` is not an Arrow type");
        assert!(error(br#"{"value": ["x"], "type": "Int8"}"#).starts_with("the values are not all Int8"));
        assert_eq!(error(br#"{"value": 1, "parameters": [1]}"#), "`parameters` must be a JSON object, not [1]");
    }
}

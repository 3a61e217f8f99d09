//! Values typed on the command line (`nerve topic pub`, `nerve service call`): JSON into Arrow.

use std::str::FromStr;

use anyhow::Context;
use arrow_array::{ArrayRef, StringArray};
use arrow_schema::DataType;
use nerve_topic::Parameters;

/// The parameters of `--metadata`: a JSON object, or none.
///
/// # Errors
/// Text that is not a JSON object.
pub(crate) fn json_metadata(text: Option<&str>) -> anyhow::Result<Parameters> {
    match text {
        Some(text) => serde_json::from_str(text).context("--metadata must be a JSON object"),
        None => Ok(Parameters::new()),
    }
}

/// The values of `json` (a list, or one value) as an Arrow array of `data_type`, or of the type
/// the JSON suggests.
///
/// # Errors
/// Text that is not JSON, an unknown type name, or values that do not fit the type.
pub(crate) fn json_array(json: &str, data_type: Option<&str>) -> anyhow::Result<ArrayRef> {
    let value: serde_json::Value = serde_json::from_str(json).context("the values must be JSON, like `[1, 2]`")?;
    let items = match value {
        serde_json::Value::Array(items) => items,
        one => vec![one],
    };
    let target = match data_type {
        Some(name) => named_type(name)?,
        None if items.iter().all(|v| v.is_i64()) => DataType::Int64,
        None if items.iter().all(serde_json::Value::is_number) => DataType::Float64,
        None if items.iter().all(serde_json::Value::is_boolean) => DataType::Boolean,
        None => DataType::Utf8,
    };
    let text: StringArray = items
        .iter()
        .map(|v| match v {
            serde_json::Value::Null => None,
            serde_json::Value::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        })
        .collect();
    let options = arrow_cast::CastOptions { safe: false, ..Default::default() };
    arrow_cast::cast_with_options(&text, &target, &options).with_context(|| format!("the values are not all {target}"))
}

/// The types a name picks whatever its case (`int64` as `Int64`); others, with parameters
/// (`Timestamp(Second, None)`), are written as Arrow prints them.
const NAMED_TYPES: [DataType; 17] = [
    DataType::Boolean,
    DataType::Int8,
    DataType::Int16,
    DataType::Int32,
    DataType::Int64,
    DataType::UInt8,
    DataType::UInt16,
    DataType::UInt32,
    DataType::UInt64,
    DataType::Float16,
    DataType::Float32,
    DataType::Float64,
    DataType::Utf8,
    DataType::LargeUtf8,
    DataType::Binary,
    DataType::LargeBinary,
    DataType::Date32,
];

/// The Arrow type `--type` names.
fn named_type(name: &str) -> anyhow::Result<DataType> {
    if let Some(named) = NAMED_TYPES.iter().find(|t| t.to_string().eq_ignore_ascii_case(name)) {
        return Ok(named.clone());
    }
    DataType::from_str(name).map_err(|e| {
        let names: Vec<String> = NAMED_TYPES.iter().map(ToString::to_string).collect();
        anyhow::anyhow!("--type {name}: {e} (types by name, in any case: {})", names.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_are_taken_in_any_case() {
        for name in ["Int64", "int64", "INT64"] {
            assert_eq!(named_type(name).ok(), Some(DataType::Int64), "{name}");
        }
        assert_eq!(named_type("utf8").ok(), Some(DataType::Utf8));
        assert!(named_type("Timestamp(Second, None)").is_ok());
        let unknown = named_type("int65").map_err(|e| e.to_string());
        assert!(
            unknown.as_ref().is_err_and(|e| e.contains("types by name, in any case: Boolean, Int8")),
            "{unknown:?}"
        );
    }
}

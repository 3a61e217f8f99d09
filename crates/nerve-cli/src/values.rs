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
        Some(name) => DataType::from_str(name).map_err(|e| anyhow::anyhow!("--type {name}: {e}"))?,
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

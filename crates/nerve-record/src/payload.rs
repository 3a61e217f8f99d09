//! One message as MCAP stores it: an Arrow IPC stream holding the schema (one column, the
//! array's type, the sender's parameters in the schema's metadata) and one record batch.

use std::collections::HashMap;
use std::io::Cursor;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{ArrowError, DataType, Field, Schema};
use nerve_shm::codec::Parameters;

/// Name of the one column of every recorded batch.
pub const VALUE_COLUMN: &str = "value";

/// Key of the IPC schema's metadata holding the sender's parameters, as a JSON object.
pub const PARAMETERS_KEY: &str = "nerve.parameters";

fn schema(data_type: &DataType, parameters: Option<&Parameters>) -> Schema {
    let field = Field::new(VALUE_COLUMN, data_type.clone(), true);
    let metadata: HashMap<String, String> = parameters
        .filter(|p| !p.is_empty())
        .map(|p| [(PARAMETERS_KEY.to_owned(), serde_json::Value::Object(p.clone()).to_string())].into())
        .unwrap_or_default();
    Schema::new_with_metadata(vec![field], metadata)
}

/// The MCAP schema's data for arrays of `data_type`: an Arrow IPC stream holding only the
/// schema (`pyarrow.ipc.open_stream(data).schema` reads it).
///
/// # Errors
/// When Arrow cannot describe the type in IPC.
pub fn schema_stream(data_type: &DataType) -> Result<Vec<u8>, ArrowError> {
    let mut writer = StreamWriter::try_new(Vec::new(), &schema(data_type, None))?;
    writer.finish()?;
    writer.into_inner()
}

/// Why a message's payload is not nerve's encoding (see [`decode`]).
///
/// Arrow's reason is part of the message, not a [`std::error::Error::source`], so that a chain
/// printed whole (`nerve`'s `error: …`) says it once.
#[derive(Debug, thiserror::Error)]
pub enum PayloadError {
    /// The bytes are not an Arrow IPC stream.
    #[error("not Arrow IPC: {0}")]
    NotIpc(arrow_schema::ArrowError),
    /// The sender's parameters, in the schema's metadata, are not a JSON object.
    #[error("`{key}` is not a JSON object: {json}", key = PARAMETERS_KEY)]
    Parameters {
        /// What the metadata holds.
        json: String,
    },
    /// The stream's record batch cannot be read.
    #[error("unreadable record batch: {0}")]
    Batch(arrow_schema::ArrowError),
    /// The stream holds a schema and no record batch.
    #[error("the IPC stream holds no record batch")]
    NoBatch,
    /// The stream holds more than the one record batch of a message.
    #[error("the IPC stream holds more than one record batch")]
    SeveralBatches,
    /// The batch has other than one column.
    #[error("expected one column, found {0}")]
    Columns(usize),
}

/// Encodes one message: `data` as the single column of one batch, `parameters` in the schema's
/// metadata under [`PARAMETERS_KEY`] (left out when empty).
///
/// # Errors
/// When Arrow cannot encode the array in IPC.
pub fn encode(data: &dyn Array, parameters: &Parameters) -> Result<Vec<u8>, ArrowError> {
    let schema = Arc::new(schema(data.data_type(), Some(parameters)));
    let batch = RecordBatch::try_new(schema.clone(), vec![arrow_array::make_array(data.to_data())])?;
    let mut writer = StreamWriter::try_new(Vec::with_capacity(data.get_array_memory_size() + 512), &schema)?;
    writer.write(&batch)?;
    writer.finish()?;
    writer.into_inner()
}

/// Decodes a message written by [`encode`]: the array and the sender's parameters.
///
/// # Errors
/// A payload that is not an IPC stream of exactly one batch of one column, or parameters that
/// are not a JSON object.
pub fn decode(bytes: &[u8]) -> Result<(ArrayRef, Parameters), PayloadError> {
    let mut reader = StreamReader::try_new(Cursor::new(bytes), None).map_err(PayloadError::NotIpc)?;
    let parameters = match reader.schema().metadata().get(PARAMETERS_KEY) {
        Some(json) => match serde_json::from_str(json) {
            Ok(serde_json::Value::Object(map)) => map,
            Ok(_) | Err(_) => return Err(PayloadError::Parameters { json: json.clone() }),
        },
        None => Parameters::new(),
    };
    let batch = match reader.next() {
        Some(batch) => batch.map_err(PayloadError::Batch)?,
        None => return Err(PayloadError::NoBatch),
    };
    if reader.next().is_some() {
        return Err(PayloadError::SeveralBatches);
    }
    if batch.num_columns() != 1 {
        return Err(PayloadError::Columns(batch.num_columns()));
    }
    Ok((batch.column(0).clone(), parameters))
}

#[cfg(test)]
mod tests {
    use arrow_array::{Float32Array, ListArray, StringArray, types::Int32Type};

    use super::*;

    fn round_trip(data: &dyn Array, parameters: &Parameters) {
        let bytes = encode(data, parameters).expect("encodes");
        let (back, params) = decode(&bytes).expect("decodes");
        assert_eq!(back.to_data(), data.to_data());
        assert_eq!(&params, parameters);
    }

    #[test]
    fn arrays_and_parameters_survive() {
        let mut params = Parameters::new();
        params.insert("frame".into(), 7.into());
        params.insert("nested".into(), serde_json::json!({"a": [1, 2.5, null], "b": "x"}));
        round_trip(&Float32Array::from(vec![Some(1.5), None, Some(-3.0)]), &params);
        round_trip(&StringArray::from(vec!["a", "", "ünï"]), &Parameters::new());
        let list = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![Some(vec![Some(1), None]), None]);
        round_trip(&list, &params);
        // A slice is recorded as the values it shows, not its parent's.
        let parent = Float32Array::from(vec![1.0, 2.0, 3.0, 4.0]);
        let (back, _) = decode(&encode(&parent.slice(1, 2), &Parameters::new()).expect("encodes")).expect("decodes");
        assert_eq!(back.as_ref(), &Float32Array::from(vec![2.0, 3.0]) as &dyn Array);
    }

    #[test]
    fn schema_stream_names_the_type() {
        let bytes = schema_stream(&DataType::UInt16).expect("encodes");
        let reader = StreamReader::try_new(Cursor::new(bytes), None).expect("a stream");
        assert_eq!(reader.schema().field(0).data_type(), &DataType::UInt16);
    }

    #[test]
    fn garbage_is_refused() {
        assert!(decode(b"not arrow at all").is_err());
        let schema_only = schema_stream(&DataType::Int8).expect("encodes");
        assert_eq!(decode(&schema_only).expect_err("no batch").to_string(), "the IPC stream holds no record batch");
    }
}

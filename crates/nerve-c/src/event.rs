//! `nerve_event`: what a node receives, and reading it.

use std::ffi::{CStr, CString, c_char, c_int};
use std::sync::Arc;

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{Array, downcast_primitive_array};
use arrow_schema::DataType;
use nerve_node::Message;

use crate::args::{out, text, write_text};
use crate::error::{ApiError, NerveStatus, guard};
use crate::handles::{self, Kind};

/// The type of a `nerve_event`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NerveEventType {
    /// A message on an input: its id, timestamp, parameters and value.
    Input = 1,
    /// The producer of an input finished: nothing more comes on it (its id says which).
    InputClosed = 2,
    /// The dataflow is stopping: finish up and return.
    Stop = 3,
    /// Something went wrong receiving; the stream goes on (`nerve_event_error` says what).
    Error = 4,
    /// An input its `input_timeout` closed has a message again, which comes next (its id says
    /// which).
    InputRecovered = 5,
}

/// One event of a node, or one message of a topic or a service (opaque), read alike. Its value
/// views shared memory in place.
///
/// Thread-safety: read-only; any number of threads may read one event at once, and free it
/// once none does.
pub enum NerveEvent {
    /// A message.
    Input {
        /// Input id.
        id: Arc<CStr>,
        /// The message.
        message: Message,
    },
    /// An input closed.
    InputClosed {
        /// Input id.
        id: Arc<CStr>,
    },
    /// An input recovered from its `input_timeout`.
    InputRecovered {
        /// Input id.
        id: Arc<CStr>,
    },
    /// Stop.
    Stop,
    /// A receive error.
    Error(CString),
}

impl NerveEvent {
    fn kind(&self) -> NerveEventType {
        match self {
            Self::Input { .. } => NerveEventType::Input,
            Self::InputClosed { .. } => NerveEventType::InputClosed,
            Self::InputRecovered { .. } => NerveEventType::InputRecovered,
            Self::Stop => NerveEventType::Stop,
            Self::Error(_) => NerveEventType::Error,
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            Self::Input { .. } => "INPUT",
            Self::InputClosed { .. } => "INPUT_CLOSED",
            Self::InputRecovered { .. } => "INPUT_RECOVERED",
            Self::Stop => "STOP",
            Self::Error(_) => "ERROR",
        }
    }

    /// The input id of an input or input-closed event.
    pub(crate) fn id(&self) -> Option<&CStr> {
        match self {
            Self::Input { id, .. } | Self::InputClosed { id } | Self::InputRecovered { id } => Some(id),
            Self::Stop | Self::Error(_) => None,
        }
    }

    pub(crate) fn message(&self, field: &'static str) -> Result<&Message, ApiError> {
        match self {
            Self::Input { message, .. } => Ok(message),
            other => Err(ApiError::WrongEvent { event: other.type_name(), field }),
        }
    }

    /// The value of an INPUT event.
    fn value(&self) -> Result<&arrow_array::ArrayRef, ApiError> {
        let message = self.message("value")?;
        if message.object.is_some() {
            // A Python publisher of this process hands its subscribers the object it sent.
            return Err(ApiError::WrongType(format!(
                "the value on `{}` is a Python object sent by a publisher of this process, not an Arrow array",
                message.id
            )));
        }
        Ok(&message.data)
    }

    /// The value's bytes, when it is one buffer: a primitive array without nulls (its values,
    /// as laid out in memory) or a null array (no bytes).
    pub(crate) fn bytes(&self) -> Result<&[u8], ApiError> {
        let data = self.value()?;
        if *data.data_type() == DataType::Null {
            return Ok(&[]);
        }
        // Formatted only when refusing: reading bytes is on every message's path.
        let id = || self.id().map(CStr::to_string_lossy).unwrap_or_default();
        if data.null_count() > 0 {
            return Err(ApiError::WrongType(format!(
                "the value on input `{}` has {} nulls, which bytes cannot show: read it with nerve_event_arrow",
                id(),
                data.null_count()
            )));
        }
        // The typed array's values buffer, already cut to the array's offset and length: no
        // `to_data` (which builds a whole ArrayData, with allocations, per call).
        let values: &[u8] = downcast_primitive_array!(
            data => data.values().inner().as_slice(),
            other => {
                return Err(ApiError::WrongType(format!(
                    "the value on input `{}` is {other}, which is not one buffer of bytes: read it with nerve_event_arrow",
                    id()
                )));
            }
        );
        // SAFETY: `values` points into a buffer that the message's `data` keeps alive, so it
        // lives as long as `self`.
        Ok(unsafe { std::slice::from_raw_parts(values.as_ptr(), values.len()) })
    }

    fn parameter(&self, key: &str) -> Result<&serde_json::Value, ApiError> {
        let message = self.message("metadata")?;
        message.metadata.parameters.get(key).ok_or_else(|| ApiError::NotFound(key.to_owned()))
    }
}

/// Runs `body` with live event `event`.
///
/// # Safety
/// `event` is NULL or a pointer no other thread frees meanwhile.
unsafe fn with_event(
    function: &str,
    event: *const NerveEvent,
    body: impl FnOnce(&NerveEvent) -> Result<(), ApiError>,
) -> c_int {
    guard(function, || {
        // SAFETY: as the caller promises.
        body(unsafe { handles::get(event, Kind::Event, "event") }?)?;
        Ok(NerveStatus::Ok)
    })
}

/// The type of `event` in `*type`.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `event` is a live handle no other thread frees meanwhile; `type` is valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_event_get_type(event: *const NerveEvent, r#type: *mut NerveEventType) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_event("nerve_event_get_type", event, |e| {
            out(r#type, "type")?.write(e.kind());
            Ok(())
        })
    }
}

/// The input id of an INPUT or INPUT_CLOSED event: `*id` is a NUL-terminated string owned by
/// the event, valid until it is freed. Fails with `NERVE_STATUS_WRONG_EVENT` for other events.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `event` is a live handle no other thread frees meanwhile; `id` is valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_event_input_id(event: *const NerveEvent, id: *mut *const c_char) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_event("nerve_event_input_id", event, |e| {
            let own = e.id().ok_or(ApiError::WrongEvent { event: e.type_name(), field: "input id" })?;
            out(id, "id")?.write(own.as_ptr());
            Ok(())
        })
    }
}

/// The message of an ERROR event: a NUL-terminated string owned by the event, valid until it
/// is freed. Fails with `NERVE_STATUS_WRONG_EVENT` for other events.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `event` is a live handle no other thread frees meanwhile; `message` is valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_event_error(event: *const NerveEvent, message: *mut *const c_char) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_event("nerve_event_error", event, |e| match e {
            NerveEvent::Error(text) => {
                out(message, "message")?.write(text.as_ptr());
                Ok(())
            }
            other => Err(ApiError::WrongEvent { event: other.type_name(), field: "error message" }),
        })
    }
}

/// The send time of an INPUT event's message: the sender's `CLOCK_MONOTONIC` in nanoseconds
/// (comparable across the processes of one host).
///
/// Thread-safety: any thread.
///
/// # Safety
/// `event` is a live handle no other thread frees meanwhile; `timestamp` is valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_event_timestamp(event: *const NerveEvent, timestamp: *mut u64) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_event("nerve_event_timestamp", event, |e| {
            let stamp = e.message("timestamp")?.timestamp();
            out(timestamp, "timestamp")?.write(stamp);
            Ok(())
        })
    }
}

/// The value of an INPUT event as plain bytes, for callers without Arrow: `*data` points to
/// `*len` bytes of shared memory, owned by the event and valid until it is freed. A primitive
/// array gives its values as laid out in memory (8 bytes per `int64`, ...); a timer tick gives
/// no bytes (`*data` may be NULL). Other Arrow types (strings, lists, structs), and values with
/// nulls, fail with `NERVE_STATUS_WRONG_TYPE`: read them with `nerve_event_arrow`.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `event` is a live handle no other thread frees meanwhile; `data` and `len` are valid for
/// writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_event_bytes(event: *const NerveEvent, data: *mut *const u8, len: *mut usize) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_event("nerve_event_bytes", event, |e| {
            let (data, len) = (out(data, "data")?, out(len, "len")?);
            let bytes = e.bytes()?;
            data.write(if bytes.is_empty() { std::ptr::null() } else { bytes.as_ptr() });
            len.write(bytes.len());
            Ok(())
        })
    }
}

/// Exports the value of an INPUT event through the Arrow C data interface, without a copy: the
/// array's buffers are the shared memory the message was written to.
///
/// Ownership: `*array` and `*schema` are the caller's, each to be released (through its
/// `release` callback) by whoever holds it last, for instance Arrow C++'s `ImportArray`. The
/// array keeps the shared memory alive by itself: it may outlive the event and the node.
/// Whatever `*array` and `*schema` held before is overwritten, not released.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `event` is a live handle no other thread frees meanwhile; `array` and `schema` are valid
/// for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_event_arrow(
    event: *const NerveEvent,
    array: *mut FFI_ArrowArray,
    schema: *mut FFI_ArrowSchema,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_event("nerve_event_arrow", event, |e| {
            let (array, schema) = (out(array, "array")?, out(schema, "schema")?);
            let data = e.value()?.to_data();
            schema.write(FFI_ArrowSchema::try_from(data.data_type())?);
            array.write(FFI_ArrowArray::new(&data));
            Ok(())
        })
    }
}

/// Runs `body` with metadata parameter `key` of an INPUT event.
///
/// # Safety
/// As [`with_event`]; `key` is NULL or a NUL-terminated string.
unsafe fn with_parameter(
    function: &str,
    event: *const NerveEvent,
    key: *const c_char,
    body: impl FnOnce(&serde_json::Value) -> Result<(), ApiError>,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_event(function, event, |e| {
            let key = text(key, "key")?;
            body(e.parameter(key)?)
        })
    }
}

fn wrong_parameter(key: *const c_char, value: &serde_json::Value, wanted: &str) -> ApiError {
    // SAFETY: read as text already by `with_parameter`.
    let key = unsafe { CStr::from_ptr(key) }.to_string_lossy();
    ApiError::WrongType(format!("metadata parameter `{key}` is `{value}`, not {wanted}"))
}

/// Metadata parameter `key` of an INPUT event as an integer. Fails with `NERVE_STATUS_NOT_FOUND` when
/// the message has none of that key, `NERVE_STATUS_WRONG_TYPE` when it is no integer.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `event` is a live handle no other thread frees meanwhile; `key` is a NUL-terminated string;
/// `value` is valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_event_parameter_int(
    event: *const NerveEvent,
    key: *const c_char,
    value: *mut i64,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_parameter("nerve_event_parameter_int", event, key, |v| {
            let n = v.as_i64().ok_or_else(|| wrong_parameter(key, v, "an integer"))?;
            out(value, "value")?.write(n);
            Ok(())
        })
    }
}

/// Metadata parameter `key` of an INPUT event as a number. Fails as
/// `nerve_event_parameter_int`.
///
/// Thread-safety: any thread.
///
/// # Safety
/// As `nerve_event_parameter_int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_event_parameter_float(
    event: *const NerveEvent,
    key: *const c_char,
    value: *mut f64,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_parameter("nerve_event_parameter_float", event, key, |v| {
            let n = v.as_f64().ok_or_else(|| wrong_parameter(key, v, "a number"))?;
            out(value, "value")?.write(n);
            Ok(())
        })
    }
}

/// Metadata parameter `key` of an INPUT event as text: `*text` points to `*len` bytes of UTF-8
/// (not NUL-terminated) owned by the event, valid until it is freed. Fails as
/// `nerve_event_parameter_int`.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `event` is a live handle no other thread frees meanwhile; `key` is a NUL-terminated string;
/// `text` and `len` are valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_event_parameter_string(
    event: *const NerveEvent,
    key: *const c_char,
    text: *mut *const c_char,
    len: *mut usize,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_parameter("nerve_event_parameter_string", event, key, |v| {
            let s = v.as_str().ok_or_else(|| wrong_parameter(key, v, "text"))?;
            let (text, len) = (out(text, "text")?, out(len, "len")?);
            text.write(s.as_ptr().cast());
            len.write(s.len());
            Ok(())
        })
    }
}

/// Metadata parameter `key` of an INPUT event as JSON text, whatever its type, written with a
/// closing NUL into the caller's `buffer` of `capacity` bytes; `*len` is the text's length
/// (without the NUL). When the buffer is too small it fails with `NERVE_STATUS_BUFFER_TOO_SMALL` and
/// `*len` says how long the text is. Fails as `nerve_event_parameter_int` too.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `event` is a live handle no other thread frees meanwhile; `key` is a NUL-terminated string;
/// `buffer` is valid for writing `capacity` bytes (or NULL with `capacity` 0); `len` is valid
/// for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_event_parameter_json(
    event: *const NerveEvent,
    key: *const c_char,
    buffer: *mut c_char,
    capacity: usize,
    len: *mut usize,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_parameter("nerve_event_parameter_json", event, key, |v| write_text(&v.to_string(), buffer, capacity, len))
    }
}

/// Frees an event; NULL is allowed. Pointers read from it (input id, bytes, parameters) are
/// invalid afterwards; Arrow arrays exported from it are not.
///
/// Thread-safety: no other thread may use the event during or after the call.
///
/// # Safety
/// `event` is NULL or a live handle no other thread uses.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_event_free(event: *mut NerveEvent) -> c_int {
    // SAFETY: as the caller promises.
    unsafe { handles::free("nerve_event_free", event, Kind::Event, "event") }
}

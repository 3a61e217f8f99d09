//! Reading the C caller's arguments: text, parameters, Arrow arrays, timeouts, and where results
//! go.

use std::ffi::{CStr, c_char};
use std::time::Duration;

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema, from_ffi};
use arrow_array::{ArrayRef, make_array};
use nerve_node::Parameters;

use crate::error::ApiError;

/// The NUL-terminated UTF-8 text at `ptr`.
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string that outlives `'a`.
pub(crate) unsafe fn text<'a>(ptr: *const c_char, arg: &'static str) -> Result<&'a str, ApiError> {
    if ptr.is_null() {
        return Err(ApiError::Null(arg));
    }
    // SAFETY: a NUL-terminated string, by the caller's contract.
    let text = unsafe { CStr::from_ptr(ptr) };
    text.to_str().map_err(|e| ApiError::InvalidArgument { arg, problem: format!("is not UTF-8 text: {e}") })
}

/// The `len` bytes of UTF-8 text at `ptr` (no NUL needed).
///
/// # Safety
/// `ptr` is NULL or points to `len` readable bytes that outlive `'a`.
pub(crate) unsafe fn text_of_len<'a>(ptr: *const c_char, len: usize, arg: &'static str) -> Result<&'a str, ApiError> {
    // SAFETY: as the caller promises.
    let bytes = unsafe { bytes(ptr.cast(), len, arg) }?;
    std::str::from_utf8(bytes)
        .map_err(|e| ApiError::InvalidArgument { arg, problem: format!("is not UTF-8 text: {e}") })
}

/// The `len` bytes at `ptr`; NULL is allowed for no bytes.
///
/// # Safety
/// `ptr` is NULL or points to `len` readable bytes that outlive `'a`.
pub(crate) unsafe fn bytes<'a>(ptr: *const u8, len: usize, arg: &'static str) -> Result<&'a [u8], ApiError> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(ApiError::Null(arg));
    }
    // SAFETY: `len` readable bytes, by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// A message's parameters, given as the text of a JSON object; NULL for none.
///
/// # Safety
/// As [`text`].
pub(crate) unsafe fn parameters(json: *const c_char, arg: &'static str) -> Result<Parameters, ApiError> {
    if json.is_null() {
        return Ok(Parameters::new());
    }
    // SAFETY: as the caller promises.
    let text = unsafe { text(json, arg) }?;
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(other) => Err(ApiError::InvalidArgument { arg, problem: format!("is not a JSON object but `{other}`") }),
        Err(e) => Err(ApiError::InvalidArgument { arg, problem: format!("is not JSON: {e}") }),
    }
}

/// Where a result goes.
///
/// # Safety
/// `ptr` is NULL or valid for writes of a `T`, and no other reference to it is in use.
pub(crate) unsafe fn out<'a, T>(ptr: *mut T, arg: &'static str) -> Result<&'a mut std::mem::MaybeUninit<T>, ApiError> {
    if ptr.is_null() {
        return Err(ApiError::Null(arg));
    }
    // SAFETY: valid for writes, by the caller's contract; written, never read, through this.
    Ok(unsafe { &mut *ptr.cast::<std::mem::MaybeUninit<T>>() })
}

/// An Arrow array given through the C data interface, imported without a copy (its buffers stay
/// where they are, released through the caller's callback once no one holds them).
///
/// `array` is moved into nerve before anything else is checked, and the caller's struct marked
/// released, so it is released exactly once, by nerve, whatever fails next; `schema` stays the
/// caller's. Call this first, so that a failure of another argument releases it too.
///
/// # Safety
/// `array` and `schema` are NULL or point to valid, not yet released C data interface structs,
/// `schema` describing `array`.
pub(crate) unsafe fn arrow(array: *mut FFI_ArrowArray, schema: *const FFI_ArrowSchema) -> Result<ArrayRef, ApiError> {
    if array.is_null() {
        return Err(ApiError::Null("array"));
    }
    // SAFETY: a valid ArrowArray, by the caller's contract; an empty one (no release callback)
    // takes its place, which is how the C data interface marks a moved array.
    let array = unsafe { std::ptr::replace(array, FFI_ArrowArray::empty()) };
    if schema.is_null() {
        return Err(ApiError::Null("schema"));
    }
    // SAFETY: a valid ArrowSchema describing `array`, by the caller's contract.
    let data = unsafe { from_ffi(array, &*schema) }?;
    data.validate_full()?;
    Ok(make_array(data))
}

/// A wait of `ms` milliseconds; `None` (no limit) when `ms` is negative.
pub(crate) fn timeout(ms: i64) -> Option<Duration> {
    u64::try_from(ms).ok().map(Duration::from_millis)
}

/// A wait of `ms` milliseconds, which must be bounded: calls that wait for a peer always end.
pub(crate) fn bounded_timeout(ms: i64, arg: &'static str) -> Result<Duration, ApiError> {
    timeout(ms)
        .ok_or_else(|| ApiError::InvalidArgument { arg, problem: format!("is {ms}: give 0 or more milliseconds") })
}

/// Writes `text` with a closing NUL into the caller's `buffer` of `capacity` bytes, and its
/// length (without the NUL) to `len`, which is written even when the buffer is too small, so
/// the caller learns the size needed.
///
/// # Safety
/// `buffer` is valid for writing `capacity` bytes (or NULL with `capacity` 0); `len` is NULL or
/// valid for writes.
pub(crate) unsafe fn write_text(
    text: &str,
    buffer: *mut c_char,
    capacity: usize,
    len: *mut usize,
) -> Result<(), ApiError> {
    // SAFETY: as the caller promises.
    unsafe { out(len, "len") }?.write(text.len());
    if text.len() >= capacity {
        return Err(ApiError::BufferTooSmall { capacity, needed: text.len() + 1 });
    }
    // SAFETY: `buffer` holds `capacity` > `text.len()` bytes, by the caller's contract (and so
    // is not NULL).
    let buffer = unsafe { std::slice::from_raw_parts_mut(buffer.cast::<u8>(), capacity) };
    buffer[..text.len()].copy_from_slice(text.as_bytes());
    buffer[text.len()] = 0;
    Ok(())
}

/// A log level written `error`, `warn` (or `warning`), `info`, `debug` or `trace`, any case.
pub(crate) fn log_level(level: &str, arg: &'static str) -> Result<nerve_node::Level, ApiError> {
    Ok(match level.to_ascii_lowercase().as_str() {
        "error" => nerve_node::Level::ERROR,
        "warn" | "warning" => nerve_node::Level::WARN,
        "info" => nerve_node::Level::INFO,
        "debug" => nerve_node::Level::DEBUG,
        "trace" => nerve_node::Level::TRACE,
        _ => {
            return Err(ApiError::InvalidArgument {
                arg,
                problem: format!("is `{level}`, not one of error, warn, info, debug, trace"),
            });
        }
    })
}

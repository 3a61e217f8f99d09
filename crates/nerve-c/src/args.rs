//! Reading the C caller's arguments: text, parameters, and where results go.

use std::ffi::{CStr, c_char};

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

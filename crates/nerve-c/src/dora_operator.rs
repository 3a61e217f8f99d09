//! dora-rs's C operator API (`operator_api.h`): what a shared-library operator calls to read its
//! input and send its outputs. nerve's operator host loads the library, fills the [`Input`] and
//! the [`SendOutput`] of each call, and calls the operator's `dora_on_event`.
//!
//! The structs the operator reads (`DoraResult`, `RawEvent`, …) have dora's layout; [`Input`]
//! and [`SendOutput`] are opaque to the operator, so theirs is nerve's own, shared with the host
//! (`python/nerve/operators/shared_library.py`).

use std::ffi::{CStr, CString, c_char, c_int, c_void};

/// dora's `Vec_uint8_t`: bytes allocated here, handed to the operator, freed here.
#[repr(C)]
#[derive(Debug)]
pub struct DoraVec {
    /// The bytes; NULL for no value.
    pub ptr: *mut u8,
    /// How many.
    pub len: usize,
    /// The allocation's capacity.
    pub cap: usize,
}

impl DoraVec {
    const NONE: Self = Self { ptr: std::ptr::null_mut(), len: 0, cap: 0 };

    fn new(bytes: Vec<u8>) -> Self {
        let mut bytes = std::mem::ManuallyDrop::new(bytes);
        Self { ptr: bytes.as_mut_ptr(), len: bytes.len(), cap: bytes.capacity() }
    }
}

/// dora's `DoraResult_t`: success when `error` is NULL, else the error's text.
#[repr(C)]
#[derive(Debug)]
pub struct DoraResult {
    /// The error's UTF-8 text, or NULL.
    pub error: *mut DoraVec,
}

impl DoraResult {
    fn failed(message: String) -> Self {
        Self { error: Box::into_raw(Box::new(DoraVec::new(message.into_bytes()))) }
    }
}

/// dora's opaque `Input_t`: one input message, set by nerve's operator host.
#[repr(C)]
#[derive(Debug)]
pub struct Input {
    /// The input's id, as the operator declared it.
    pub id: *const c_char,
    /// The message's bytes when it is a `UInt8` array (what dora reads), else NULL.
    pub data: *const u8,
    /// How many bytes `data` holds.
    pub len: usize,
}

/// Sends one output of the operator: its id, bytes, and a buffer for an error's text; 0 on
/// success.
pub type SendFn = unsafe extern "C" fn(
    env: *mut c_void,
    id: *const c_char,
    data: *const u8,
    len: usize,
    error: *mut c_char,
    error_capacity: usize,
) -> c_int;

/// dora's opaque `SendOutput_t`: how the operator's sends reach nerve's operator host.
#[repr(C)]
#[derive(Debug)]
pub struct SendOutput {
    /// The host's state, passed back to `send`.
    pub env: *mut c_void,
    /// The host's sender.
    pub send: Option<SendFn>,
}

/// Room for a send's error text.
const ERROR_CAPACITY: usize = 1024;

/// dora's `dora_read_input_id`: a copy of the input's id, to free with `dora_free_input_id`;
/// NULL for a NULL input.
///
/// # Safety
/// `input` is NULL or the input of the event being handled.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dora_read_input_id(input: *const Input) -> *mut c_char {
    // SAFETY: as the caller promises.
    let Some(input) = (unsafe { input.as_ref() }) else {
        eprintln!("dora_read_input_id: the input is NULL");
        return std::ptr::null_mut();
    };
    if input.id.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: the host sets a NUL-terminated id that lives as long as the event.
    unsafe { CStr::from_ptr(input.id) }.to_owned().into_raw()
}

/// dora's `dora_free_input_id`: frees what `dora_read_input_id` returned; NULL does nothing.
///
/// # Safety
/// `input_id` is NULL or came from `dora_read_input_id`, and is freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dora_free_input_id(input_id: *mut c_char) {
    if !input_id.is_null() {
        // SAFETY: as the caller promises, made by `CString::into_raw`.
        drop(unsafe { CString::from_raw(input_id) });
    }
}

/// dora's `dora_read_data`: a copy of the message's bytes, to free with `dora_free_data`; `ptr`
/// is NULL when the message is not a `UInt8` array (as in dora) or the input is NULL.
///
/// # Safety
/// `input` is NULL or the input of the event being handled.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dora_read_data(input: *mut Input) -> DoraVec {
    // SAFETY: as the caller promises.
    let Some(input) = (unsafe { input.as_ref() }) else {
        eprintln!("dora_read_data: the input is NULL");
        return DoraVec::NONE;
    };
    if input.data.is_null() {
        eprintln!("dora_read_data: the message is not a UInt8 array (bytes)");
        return DoraVec::NONE;
    }
    // SAFETY: the host points `data` at `len` bytes that live as long as the event.
    DoraVec::new(unsafe { std::slice::from_raw_parts(input.data, input.len) }.to_vec())
}

/// dora's `dora_free_data`: frees what `dora_read_data` returned.
///
/// # Safety
/// `data` came from `dora_read_data` and is freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dora_free_data(data: DoraVec) {
    if !data.ptr.is_null() {
        // SAFETY: made by `DoraVec::new` from a `Vec<u8>`, as the caller promises.
        drop(unsafe { Vec::from_raw_parts(data.ptr, data.len, data.cap) });
    }
}

/// dora's `dora_send_operator_output`: sends `data_len` bytes at `data_ptr` (NULL with 0 is
/// an empty message) on the operator's output `id`. The result's error says why it failed.
///
/// # Safety
/// `send_output` is the one the operator's `dora_on_event` was given; `id` is NULL or a
/// NUL-terminated string; `data_ptr` is valid for `data_len` bytes unless `data_len` is 0.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dora_send_operator_output(
    send_output: *const SendOutput,
    id: *const c_char,
    data_ptr: *const u8,
    data_len: usize,
) -> DoraResult {
    // SAFETY: as the caller promises.
    let Some(SendOutput { env, send: Some(send) }) = (unsafe { send_output.as_ref() }) else {
        return DoraResult::failed("dora_send_operator_output: send_output is NULL".to_owned());
    };
    if id.is_null() {
        return DoraResult::failed("dora_send_operator_output: the output id is NULL".to_owned());
    }
    if data_ptr.is_null() && data_len > 0 {
        return DoraResult::failed(format!("dora_send_operator_output: data is NULL with a length of {data_len}"));
    }
    let empty = [0u8; 0];
    let data = if data_len == 0 { empty.as_ptr() } else { data_ptr };
    let mut error = vec![0 as c_char; ERROR_CAPACITY];
    // SAFETY: the host's sender, with the pointers checked above and a buffer of the size given.
    let status = unsafe { send(*env, id, data, data_len, error.as_mut_ptr(), ERROR_CAPACITY) };
    if status == 0 {
        return DoraResult { error: std::ptr::null_mut() };
    }
    // The host writes at most `ERROR_CAPACITY - 1` bytes and a NUL.
    error[ERROR_CAPACITY - 1] = 0;
    // SAFETY: NUL-terminated, just made so.
    DoraResult::failed(unsafe { CStr::from_ptr(error.as_ptr()) }.to_string_lossy().into_owned())
}

/// Frees the error of a `DoraResult_t` made by `dora_send_operator_output`: what nerve's
/// operator host calls once it has read the text, and an operator that handles a failed send
/// itself; NULL does nothing.
///
/// # Safety
/// `error` is NULL or a result's error, freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_dora_free_error(error: *mut DoraVec) {
    if !error.is_null() {
        // SAFETY: made by `DoraResult::failed`, as the caller promises.
        let error = unsafe { Box::from_raw(error) };
        // SAFETY: as above.
        unsafe { dora_free_data(*error) };
    }
}

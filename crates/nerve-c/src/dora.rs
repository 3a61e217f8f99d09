//! dora-rs's C node API (`node_api.h`), so a dora C node builds against nerve by changing its
//! include path and library only. Its context is a `nerve_node` and its events are
//! `nerve_event`s, so a node may use both headers.
//!
//! dora's functions report failure by NULL or -1 and print nothing; these print the reason to
//! standard error (which `nerve run` shows with the node's id) besides setting
//! `nerve_last_error()`, since a dora node has no other way to learn it.

use std::ffi::{CStr, c_char, c_int, c_void};

use crate::args::{bytes, log_level, text_of_len};
use crate::error::{NerveStatus, guard};
use crate::event::NerveEvent;
use crate::handles::{self, Kind};
use crate::node::{NerveNode, nerve_node_init_from_env};

/// dora's event types, in the order of its `enum DoraEventType`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DoraEventType {
    /// `DoraEventType_Stop`.
    Stop = 0,
    /// `DoraEventType_Input`.
    Input = 1,
    /// `DoraEventType_InputClosed`.
    InputClosed = 2,
    /// `DoraEventType_Error`.
    Error = 3,
    /// `DoraEventType_Unknown`: also what a handle that is not a live event reads as.
    Unknown = 4,
}

/// Prints the thread's last error when `status` is a failure.
fn report(status: c_int) {
    if status < 0 {
        let message = crate::error::nerve_last_error();
        // SAFETY: the thread's last error, a NUL-terminated string.
        eprintln!("{}", unsafe { CStr::from_ptr(message) }.to_string_lossy());
    }
}

/// dora's `init_dora_context_from_env`: connects the node `nerve run` started (as
/// `nerve_node_init_from_env`). Returns the context, to be freed with `free_dora_context`, or
/// NULL on failure (the reason printed and in `nerve_last_error()`).
#[unsafe(no_mangle)]
pub extern "C" fn init_dora_context_from_env() -> *mut c_void {
    let mut node = std::ptr::null_mut();
    // SAFETY: `node` is a local pointer to write.
    let status = unsafe { nerve_node_init_from_env(&raw mut node) };
    report(status);
    node.cast()
}

/// dora's `free_dora_context`: as `nerve_node_free`.
///
/// # Safety
/// `dora_context` is NULL or a context from `init_dora_context_from_env` no other thread uses.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn free_dora_context(dora_context: *mut c_void) {
    // SAFETY: as the caller promises.
    let status = unsafe { crate::node::nerve_node_free(dora_context.cast()) };
    report(status);
}

/// dora's `dora_next_event`: waits for the next event; NULL once the event stream has ended (or
/// on failure). Free the event with `free_dora_event`.
///
/// # Safety
/// `dora_context` is a live context no other thread frees meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dora_next_event(dora_context: *mut c_void) -> *mut c_void {
    let mut event = std::ptr::null_mut();
    // SAFETY: as the caller promises; `event` is a local pointer to write.
    let status = unsafe { crate::node::nerve_node_next_event(dora_context.cast(), -1, &raw mut event) };
    report(status);
    event.cast()
}

/// dora's `free_dora_event`: as `nerve_event_free`.
///
/// # Safety
/// `dora_event` is NULL or a live event no other thread uses.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn free_dora_event(dora_event: *mut c_void) {
    // SAFETY: as the caller promises.
    let status = unsafe { crate::event::nerve_event_free(dora_event.cast()) };
    report(status);
}

/// Runs `body` with live event `event`, or does nothing for a handle that is not one.
///
/// # Safety
/// `event` is NULL or a pointer no other thread frees meanwhile.
unsafe fn with_event(function: &str, event: *mut c_void, body: impl FnOnce(&NerveEvent)) {
    let status = guard(function, || {
        // SAFETY: as the caller promises.
        body(unsafe { handles::get(event.cast_const().cast::<NerveEvent>(), Kind::Event, "dora_event") }?);
        Ok(NerveStatus::Ok)
    });
    report(status);
}

/// dora's `read_dora_event_type`; `DoraEventType_Unknown` for a handle that is not a live event.
///
/// # Safety
/// `dora_event` is NULL or a pointer no other thread frees meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn read_dora_event_type(dora_event: *mut c_void) -> DoraEventType {
    let mut kind = DoraEventType::Unknown;
    // SAFETY: as the caller promises.
    unsafe {
        with_event("read_dora_event_type", dora_event, |e| {
            kind = match e {
                NerveEvent::Input { .. } => DoraEventType::Input,
                NerveEvent::InputClosed { .. } => DoraEventType::InputClosed,
                NerveEvent::Stop => DoraEventType::Stop,
                NerveEvent::Error(_) => DoraEventType::Error,
                // dora's C API has no such event; its node reads the message that follows.
                NerveEvent::InputRecovered { .. } => DoraEventType::Unknown,
            };
        });
    }
    kind
}

/// Writes `ptr` and `len` to the caller's out pointers, those of them that are not NULL.
///
/// # Safety
/// Each is NULL or valid for writes.
unsafe fn put(out_ptr: *mut *mut c_char, out_len: *mut usize, ptr: *const u8, len: usize) {
    if !out_ptr.is_null() {
        // SAFETY: valid for writes, by the caller's contract. dora's signature has `char **`
        // though the bytes are read-only.
        unsafe { out_ptr.write(ptr.cast_mut().cast()) };
    }
    if !out_len.is_null() {
        // SAFETY: as above.
        unsafe { out_len.write(len) };
    }
}

/// dora's `read_dora_input_id`: the input id of an input event (valid until the event is
/// freed; it is NUL-terminated too), or NULL and 0.
///
/// # Safety
/// `dora_event` is NULL or a pointer no other thread frees meanwhile; `out_ptr` and `out_len`
/// are valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn read_dora_input_id(dora_event: *mut c_void, out_ptr: *mut *mut c_char, out_len: *mut usize) {
    // SAFETY: as the caller promises.
    unsafe {
        put(out_ptr, out_len, std::ptr::null(), 0);
        with_event("read_dora_input_id", dora_event, |e| {
            if let Some(id) = e.id() {
                put(out_ptr, out_len, id.as_ptr().cast(), id.to_bytes().len());
            }
        });
    }
}

/// dora's `read_dora_input_data`: the bytes of an input event's value (as `nerve_event_bytes`;
/// valid until the event is freed), or NULL and 0 for other events and values that are not one
/// buffer.
///
/// # Safety
/// As `read_dora_input_id`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn read_dora_input_data(dora_event: *mut c_void, out_ptr: *mut *mut c_char, out_len: *mut usize) {
    // SAFETY: as the caller promises.
    unsafe {
        put(out_ptr, out_len, std::ptr::null(), 0);
        with_event("read_dora_input_data", dora_event, |e| {
            if let Ok(bytes) = e.bytes() {
                put(out_ptr, out_len, bytes.as_ptr(), bytes.len());
            }
        });
    }
}

/// dora's `read_dora_input_timestamp`: the send time of an input event's message (the sender's
/// `CLOCK_MONOTONIC` in nanoseconds), or 0.
///
/// # Safety
/// `dora_event` is NULL or a pointer no other thread frees meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn read_dora_input_timestamp(dora_event: *mut c_void) -> u64 {
    let mut stamp = 0;
    // SAFETY: as the caller promises.
    unsafe {
        with_event("read_dora_input_timestamp", dora_event, |e| {
            if let Ok(message) = e.message("timestamp") {
                stamp = message.timestamp();
            }
        });
    }
    stamp
}

/// dora's `dora_send_output`: sends `data_len` bytes on output `id` (`id_len` bytes, no NUL
/// needed). 0 on success, -1 on failure.
///
/// # Safety
/// `dora_context` is a live context; `id_ptr` and `data_ptr` point to `id_len` and `data_len`
/// readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dora_send_output(
    dora_context: *mut c_void,
    id_ptr: *const c_char,
    id_len: usize,
    data_ptr: *const c_char,
    data_len: usize,
) -> c_int {
    let status = guard("dora_send_output", || {
        // SAFETY: as the caller promises.
        let (node, output, data) = unsafe {
            (
                handles::get(dora_context.cast_const().cast::<NerveNode>(), Kind::Node, "dora_context")?,
                text_of_len(id_ptr, id_len, "id")?,
                bytes(data_ptr.cast(), data_len, "data")?,
            )
        };
        node.node.send_output_bytes(output, &nerve_node::Parameters::new(), data)?;
        Ok(NerveStatus::Ok)
    });
    report(status);
    if status == 0 { 0 } else { -1 }
}

/// dora's `dora_log`: logs `msg` at `level` (`error`, `warn`, `info`, `debug`, `trace`) as the
/// node, as `nerve_node_log` does. 0 on success, -1 on failure (an unknown level among them).
///
/// # Safety
/// `dora_context` is a live context; `level_ptr` and `msg_ptr` point to `level_len` and
/// `msg_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dora_log(
    dora_context: *mut c_void,
    level_ptr: *const c_char,
    level_len: usize,
    msg_ptr: *const c_char,
    msg_len: usize,
) -> c_int {
    let status = guard("dora_log", || {
        // SAFETY: as the caller promises.
        let (node, level, message) = unsafe {
            (
                handles::get(dora_context.cast_const().cast::<NerveNode>(), Kind::Node, "dora_context")?,
                text_of_len(level_ptr, level_len, "level")?,
                text_of_len(msg_ptr, msg_len, "msg")?,
            )
        };
        node.node.log(log_level(level, "level")?, message);
        Ok(NerveStatus::Ok)
    });
    report(status);
    if status == 0 { 0 } else { -1 }
}

//! A node's parameters (`nerve_node_param_*`): typed values the dataflow declares (`params:`) or
//! the node's code does, read and set while it runs, from the code and from `nerve param`.
//!
//! A thin binding of `nerve_node::Params`: types, checks and on-change callbacks are the Rust
//! node's, so a C node's parameters behave exactly as a Rust or Python node's.

use std::ffi::{CString, c_char, c_int, c_void};

use nerve_node::{ParamValue, Params};

use crate::args::{out, text, write_text};
use crate::error::{ApiError, NerveStatus, guard};
use crate::handles::{self, Kind};
use crate::node::NerveNode;
use crate::topic::UserData;

/// Runs `body` with the parameters of live node `node` and the text of `key`.
///
/// # Safety
/// `node` is NULL or a pointer no other thread frees meanwhile; `key` is NULL or a
/// NUL-terminated string.
unsafe fn with_param(
    function: &str,
    node: *const NerveNode,
    key: *const c_char,
    body: impl FnOnce(&Params, &str) -> Result<(), ApiError>,
) -> c_int {
    guard(function, || {
        // SAFETY: as the caller promises.
        let (node, key) = unsafe { (handles::get(node, Kind::Node, "node")?, text(key, "key")?) };
        body(&node.node.params(), key)?;
        Ok(NerveStatus::Ok)
    })
}

/// The value of parameter `key` when `pick` takes its type; `want` names that type, with its
/// article, for the message of a value of another.
fn typed<T>(
    params: &Params,
    key: &str,
    want: &str,
    pick: impl FnOnce(ParamValue) -> Result<T, ParamValue>,
) -> Result<T, ApiError> {
    pick(params.require(key)?)
        .map_err(|other| ApiError::WrongType(format!("parameter `{key}` is {}, not {want}", other.a_type())))
}

/// A parameter value given as JSON text: `3`, `0.5`, `true`, `"fast"`, `[1, 2]`.
fn from_json(json: &str, arg: &'static str) -> Result<ParamValue, ApiError> {
    let value = serde_json::from_str(json)
        .map_err(|e| ApiError::InvalidArgument { arg, problem: format!("is not JSON: {e}") })?;
    ParamValue::from_json(&value).map_err(|e| ApiError::InvalidArgument { arg, problem: e.to_string() })
}

/// The int (64-bit) parameter `key`, in `*value`.
///
/// Fails with `NERVE_STATUS_NOT_FOUND` when the node has no parameter `key` (the message lists
/// those it has), `NERVE_STATUS_WRONG_TYPE` when it is of another type (the message names it;
/// a float parameter is not read as an int, nor an int one as a float).
///
/// Thread-safety: any thread.
///
/// # Safety
/// `node` is a live handle no other thread frees meanwhile; `key` is a NUL-terminated string;
/// `value` is valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_param_get_int(
    node: *const NerveNode,
    key: *const c_char,
    value: *mut i64,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_param("nerve_node_param_get_int", node, key, |params, key| {
            let value = out(value, "value")?;
            value.write(typed(params, key, "an int", |v| if let ParamValue::Int(i) = v { Ok(i) } else { Err(v) })?);
            Ok(())
        })
    }
}

/// The float (64-bit, finite) parameter `key`, in `*value`. Fails as `nerve_node_param_get_int`.
///
/// Thread-safety: any thread.
///
/// # Safety
/// As `nerve_node_param_get_int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_param_get_float(
    node: *const NerveNode,
    key: *const c_char,
    value: *mut f64,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_param("nerve_node_param_get_float", node, key, |params, key| {
            let value = out(value, "value")?;
            value.write(typed(params, key, "a float", |v| if let ParamValue::Float(f) = v { Ok(f) } else { Err(v) })?);
            Ok(())
        })
    }
}

/// The bool parameter `key`, in `*value`. Fails as `nerve_node_param_get_int`.
///
/// Thread-safety: any thread.
///
/// # Safety
/// As `nerve_node_param_get_int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_param_get_bool(
    node: *const NerveNode,
    key: *const c_char,
    value: *mut bool,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_param("nerve_node_param_get_bool", node, key, |params, key| {
            let value = out(value, "value")?;
            value.write(typed(params, key, "a bool", |v| if let ParamValue::Bool(b) = v { Ok(b) } else { Err(v) })?);
            Ok(())
        })
    }
}

/// The string parameter `key`, copied with a closing NUL into `buffer` of `capacity` bytes;
/// its length (without the NUL) goes to `*len`, even when the buffer is too small.
///
/// Fails as `nerve_node_param_get_int`, and with `NERVE_STATUS_BUFFER_TOO_SMALL` when the
/// string and its NUL do not fit (call again with `*len` + 1 bytes).
///
/// Ownership: the caller's buffer. Thread-safety: any thread.
///
/// # Safety
/// `node` is a live handle no other thread frees meanwhile; `key` is a NUL-terminated string;
/// `buffer` is valid for writing `capacity` bytes (or NULL with `capacity` 0); `len` is valid
/// for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_param_get_string(
    node: *const NerveNode,
    key: *const c_char,
    buffer: *mut c_char,
    capacity: usize,
    len: *mut usize,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_param("nerve_node_param_get_string", node, key, |params, key| {
            let s = typed(params, key, "a string", |v| if let ParamValue::String(s) = v { Ok(s) } else { Err(v) })?;
            write_text(&s, buffer, capacity, len)
        })
    }
}

/// Parameter `key` of any type as JSON text (`3`, `0.5`, `true`, `"fast"`, `[1, 2]`), copied
/// into `buffer` as `nerve_node_param_get_string` does: the way to read lists.
///
/// Fails as `nerve_node_param_get_string`, but never with `NERVE_STATUS_WRONG_TYPE`.
///
/// Ownership: the caller's buffer. Thread-safety: any thread.
///
/// # Safety
/// As `nerve_node_param_get_string`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_param_get_json(
    node: *const NerveNode,
    key: *const c_char,
    buffer: *mut c_char,
    capacity: usize,
    len: *mut usize,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_param("nerve_node_param_get_json", node, key, |params, key| {
            write_text(&params.require(key)?.to_json().to_string(), buffer, capacity, len)
        })
    }
}

/// Sets parameter `key` to `value` once every on-change callback accepts it, as `nerve param
/// set` does. The callbacks run on the calling thread, before the value is stored.
///
/// # Safety
/// As `with_param`.
unsafe fn set(
    function: &str,
    node: *const NerveNode,
    key: *const c_char,
    value: impl FnOnce() -> Result<ParamValue, ApiError>,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_param(function, node, key, |params, key| {
            params.set(key, value()?)?;
            Ok(())
        })
    }
}

/// Sets the int parameter `key` to `value` (an int parameter, or a float one, which stores it
/// as the nearest float), once every on-change callback of the node accepts it.
///
/// The callbacks run on the calling thread before the value is stored. Fails with
/// `NERVE_STATUS_NOT_FOUND` (no such parameter: declare it first), `NERVE_STATUS_WRONG_TYPE`
/// (a parameter of another type), `NERVE_STATUS_REFUSED` (a callback refused; the message
/// holds its reason).
///
/// Thread-safety: any thread.
///
/// # Safety
/// `node` is a live handle no other thread frees meanwhile; `key` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_param_set_int(node: *const NerveNode, key: *const c_char, value: i64) -> c_int {
    // SAFETY: as the caller promises.
    unsafe { set("nerve_node_param_set_int", node, key, || Ok(ParamValue::Int(value))) }
}

/// Sets the float parameter `key` to `value`, as `nerve_node_param_set_int` does; fails as it
/// does, and with `NERVE_STATUS_INVALID_ARGUMENT` for NaN or an infinity.
///
/// Thread-safety: any thread.
///
/// # Safety
/// As `nerve_node_param_set_int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_param_set_float(node: *const NerveNode, key: *const c_char, value: f64) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        set("nerve_node_param_set_float", node, key, || {
            if value.is_finite() {
                Ok(ParamValue::Float(value))
            } else {
                Err(ApiError::InvalidArgument { arg: "value", problem: format!("is {value}, not a finite number") })
            }
        })
    }
}

/// Sets the bool parameter `key` to `value`, as `nerve_node_param_set_int` does; fails as it
/// does.
///
/// Thread-safety: any thread.
///
/// # Safety
/// As `nerve_node_param_set_int`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_param_set_bool(node: *const NerveNode, key: *const c_char, value: bool) -> c_int {
    // SAFETY: as the caller promises.
    unsafe { set("nerve_node_param_set_bool", node, key, || Ok(ParamValue::Bool(value))) }
}

/// Sets the string parameter `key` to `value`, as `nerve_node_param_set_int` does; fails as it
/// does, and with `NERVE_STATUS_INVALID_ARGUMENT` for text that is not UTF-8.
///
/// Ownership: `value` is copied. Thread-safety: any thread.
///
/// # Safety
/// As `nerve_node_param_set_int`; `value` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_param_set_string(
    node: *const NerveNode,
    key: *const c_char,
    value: *const c_char,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        set("nerve_node_param_set_string", node, key, || Ok(ParamValue::String(text(value, "value")?.to_owned())))
    }
}

/// Sets parameter `key` to the value of JSON text `json` (`3`, `0.5`, `true`, `"fast"`,
/// `[1, 2]`), as `nerve_node_param_set_int` does: the way to set lists. Fails as it does, and
/// with `NERVE_STATUS_INVALID_ARGUMENT` for text that is not JSON or no parameter value (`null`,
/// an object, a list of mixed types).
///
/// Ownership: `json` is read, not kept. Thread-safety: any thread.
///
/// # Safety
/// As `nerve_node_param_set_int`; `json` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_param_set_json(
    node: *const NerveNode,
    key: *const c_char,
    json: *const c_char,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe { set("nerve_node_param_set_json", node, key, || from_json(text(json, "json")?, "json")) }
}

/// Declares parameter `key` with default value `default_json` (JSON text, as
/// `nerve_node_param_set_json` takes), for a parameter the dataflow may not declare. When the
/// dataflow declares `key` with the same type its value stays; no callback runs.
///
/// Fails with `NERVE_STATUS_INVALID_ARGUMENT` for a key nerve does not accept (letters, digits
/// and `_`, with `.` between groups) or a default that is no parameter value,
/// `NERVE_STATUS_WRONG_TYPE` when the dataflow gave `key` another type.
///
/// Thread-safety: any thread.
///
/// # Safety
/// As `nerve_node_param_set_json`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_param_declare_json(
    node: *const NerveNode,
    key: *const c_char,
    default_json: *const c_char,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_param("nerve_node_param_declare_json", node, key, |params, key| {
            params.declare(key, from_json(text(default_json, "default_json")?, "default_json")?)?;
            Ok(())
        })
    }
}

/// A change of a parameter being decided (opaque), lent to an on-change callback for its call.
///
/// Thread-safety: the callback's thread alone.
pub struct NerveParamChange {
    /// The reason given by `nerve_param_change_refuse`; `None` accepts.
    refusal: Option<String>,
}

/// How a C on-change callback sees each change of a parameter of its node, before the value is
/// stored.
///
/// `key` and `value_json` (the new value as JSON text: `3`, `0.5`, `true`, `"fast"`, `[1, 2]`)
/// are valid during the call only. The callback accepts the change by returning, or refuses
/// it with `nerve_param_change_refuse(change, reason)`: the value is not stored and the setter
/// (`nerve_node_param_set_*`, or `nerve param set`, which prints the reason) gets
/// `NERVE_STATUS_REFUSED`. `change` is valid during the call only. `user_data` is what was given
/// with the callback.
///
/// It runs on the thread that sets: the caller's for `nerve_node_param_set_*`, the node's
/// control thread (one of nerve's) for `nerve param set`, with no lock of nerve's held, so it
/// may call `nerve_node_param_get_*` (which still sees the old value) and
/// `nerve_node_param_set_*`. It must not throw or `longjmp` out, and should return quickly:
/// `nerve param set` gives the node 5 seconds to answer.
pub type NerveParamCallback = Option<
    unsafe extern "C" fn(
        key: *const c_char,
        value_json: *const c_char,
        change: *mut NerveParamChange,
        user_data: *mut c_void,
    ),
>;

/// Adds `callback`, run with `user_data` on every later change of a parameter of the node (from
/// `nerve_node_param_set_*` or `nerve param set`) before the value is stored; see
/// `nerve_param_callback`. Callbacks run in the order added; the first to refuse stops the
/// change. A callback stays for as long as the node: there is no removing it.
///
/// Fails with `NERVE_STATUS_NULL_ARGUMENT` for a NULL callback.
///
/// Thread-safety: any thread; `user_data` must be usable from nerve's control thread and
/// valid until `nerve_node_free` returns.
///
/// # Safety
/// `node` is a live handle no other thread frees meanwhile; `callback` is NULL or a function of
/// that signature.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_param_on_change(
    node: *const NerveNode,
    callback: NerveParamCallback,
    user_data: *mut c_void,
) -> c_int {
    guard("nerve_node_param_on_change", || {
        // SAFETY: as the caller promises.
        let node = unsafe { handles::get(node, Kind::Node, "node") }?;
        let callback = callback.ok_or(ApiError::Null("callback"))?;
        let user = UserData(user_data);
        node.node.params().on_change(move |key, value| {
            let user = user;
            // Keys are checked text without NUL, and JSON escapes any NUL inside a string.
            let key = CString::new(key).unwrap_or_default();
            let json = CString::new(value.to_json().to_string()).unwrap_or_default();
            let (_, change) = handles::lend(NerveParamChange { refusal: None }, Kind::ParamChange, |change| {
                // SAFETY: the strings and the change live for the length of the call; the caller
                // vouches for the callback and its user data on this thread.
                unsafe { callback(key.as_ptr(), json.as_ptr(), change, user.0) };
            });
            change.and_then(|c| c.refusal).map_or(Ok(()), |reason| Err(reason.into()))
        });
        Ok(NerveStatus::Ok)
    })
}

/// Refuses the change lent to an on-change callback, with `reason` (which the setter's message
/// and `nerve param set` show). Fails with `NERVE_STATUS_INVALID_HANDLE` outside the callback's
/// call.
///
/// Ownership: `reason` is copied. Thread-safety: the callback's thread.
///
/// # Safety
/// `change` is the callback's; `reason` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_param_change_refuse(change: *mut NerveParamChange, reason: *const c_char) -> c_int {
    guard("nerve_param_change_refuse", || {
        // SAFETY: as the caller promises.
        let (change, reason) =
            unsafe { (handles::get_mut(change, Kind::ParamChange, "change")?, text(reason, "reason")?) };
        change.refusal = Some(reason.to_owned());
        Ok(NerveStatus::Ok)
    })
}

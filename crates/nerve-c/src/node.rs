//! `nerve_node`: connecting, receiving events, sending outputs.

use std::ffi::{CStr, CString, c_char, c_int};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use nerve_node::{Event, EventStream, InputId, Next, Node};
use rustc_hash::FxHashMap;

use crate::args::{arrow, bytes, log_level, out, parameters, text, timeout};
use crate::error::{NerveStatus, guard};
use crate::event::NerveEvent;
use crate::handles::{self, Kind};

/// A node connected to its dataflow (opaque): the sending half and the event stream.
///
/// Thread-safety: every function taking a `nerve_node` may be called from any thread at once,
/// except `nerve_node_free`; concurrent `nerve_node_next_event` calls take turns.
pub struct NerveNode {
    pub(crate) node: Node,
    events: Mutex<Events>,
}

struct Events {
    stream: EventStream,
    /// The C form of each input id, made once per input: events share it.
    ids: FxHashMap<InputId, Arc<CStr>>,
}

impl Events {
    fn c_id(&mut self, id: &InputId) -> Arc<CStr> {
        self.ids
            .entry(id.clone())
            // Input ids come from the dataflow YAML, which has no NUL in its names.
            .or_insert_with(|| CString::new(id.as_str()).unwrap_or_default().into())
            .clone()
    }
}

impl NerveNode {
    fn new((node, stream): (Node, EventStream)) -> Self {
        Self { node, events: Mutex::new(Events { stream, ids: FxHashMap::default() }) }
    }

    /// Waits at most `timeout` (forever with `None`) for the next event.
    pub(crate) fn next(&self, timeout: Option<Duration>) -> Result<NerveEvent, NerveStatus> {
        let mut events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        let event = match events.stream.next_event(timeout) {
            Next::Event(e) => e,
            Next::Timeout => return Err(NerveStatus::Timeout),
            Next::End => return Err(NerveStatus::End),
        };
        Ok(match event {
            Event::Input(message) => {
                let id = events.c_id(&message.id);
                NerveEvent::Input { id, message }
            }
            Event::InputClosed { id } => NerveEvent::InputClosed { id: events.c_id(&id) },
            Event::InputRecovered { id } => NerveEvent::InputRecovered { id: events.c_id(&id) },
            Event::Stop => NerveEvent::Stop,
            Event::Error(e) => NerveEvent::Error(CString::new(e.replace('\0', " ")).unwrap_or_default()),
        })
    }
}

impl NerveNode {
    /// Adds a timer to the node's events (waiting for a `next` under way to return).
    pub(crate) fn add_timer(&self, id: &str, period: Duration) -> Result<(), nerve_node::NodeError> {
        self.events.lock().unwrap_or_else(PoisonError::into_inner).stream.add_timer(id, period)?;
        Ok(())
    }
}

/// Sends what nerve logs to standard error (warnings, unless `NERVE_LOG` says otherwise), as the
/// Python package does: else a refused link or a skipped message would reach no one.
fn init_logging() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| nerve_cli::logging::init(nerve_cli::logging::LIBRARY_DEFAULT));
}

/// Connects the node that `nerve run` started this process as (found through its environment)
/// and waits until every node of the dataflow is ready, so all start together.
///
/// On success `*node` is a new handle, owned by the caller, to be freed with `nerve_node_free`.
/// Fails with `NERVE_STATUS_NOT_STARTED_BY_NERVE` when the process was not started by nerve,
/// `NERVE_STATUS_RUNTIME` when the runtime cannot be reached or refuses the node.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `node` is valid for writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_init_from_env(node: *mut *mut NerveNode) -> c_int {
    guard("nerve_node_init_from_env", || {
        // SAFETY: valid for writes, by the caller's contract.
        let node = unsafe { out(node, "node") }?;
        init_logging();
        node.write(handles::give(NerveNode::new(Node::init_from_env()?), Kind::Node));
        Ok(NerveStatus::Ok)
    })
}

/// Connects as node `id`: the node `nerve run` started under that id, or else a `path: dynamic`
/// node of a running dataflow, started by hand.
///
/// On success `*node` is a new handle owned by the caller (free it with `nerve_node_free`).
/// Fails as `nerve_node_init_from_env`, and with `NERVE_STATUS_RUNTIME` when no running dataflow
/// declares `id`.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `id` is a NUL-terminated string; `node` is valid for writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_init(id: *const c_char, node: *mut *mut NerveNode) -> c_int {
    guard("nerve_node_init", || {
        // SAFETY: as the caller promises.
        let (id, node) = unsafe { (text(id, "id")?, out(node, "node")?) };
        init_logging();
        node.write(handles::give(NerveNode::new(Node::init(id)?), Kind::Node));
        Ok(NerveStatus::Ok)
    })
}

/// Disconnects the node and frees its handle; NULL is allowed and does nothing. Events and
/// samples of the node stay valid until freed, and Arrow arrays exported from its events until
/// released.
///
/// Thread-safety: no other thread may use the handle during or after the call.
///
/// # Safety
/// `node` is NULL or a handle from `nerve_node_init*` that no other thread uses.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_free(node: *mut NerveNode) -> c_int {
    // SAFETY: as the caller promises.
    unsafe { handles::free("nerve_node_free", node, Kind::Node, "node") }
}

/// Waits for the node's next event: at most `timeout_ms` milliseconds, or for as long as it
/// takes when `timeout_ms` is negative. Waiting sleeps (no CPU) and a stop cuts it short.
///
/// Returns `NERVE_STATUS_OK` with `*event` a new handle owned by the caller (free it with
/// `nerve_event_free`); `NERVE_STATUS_TIMEOUT` or, once the stream has ended (a STOP was delivered,
/// or every input closed), `NERVE_STATUS_END`, both with `*event` set to NULL.
///
/// Thread-safety: any thread; concurrent calls on one node take turns.
///
/// # Safety
/// `node` is a live handle no other thread frees meanwhile; `event` is valid for writing a
/// pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_next_event(
    node: *const NerveNode,
    timeout_ms: i64,
    event: *mut *mut NerveEvent,
) -> c_int {
    guard("nerve_node_next_event", || {
        // SAFETY: as the caller promises.
        let (node, event) = unsafe { (handles::get(node, Kind::Node, "node")?, out(event, "event")?) };
        match node.next(timeout(timeout_ms)) {
            Ok(e) => {
                event.write(handles::give(e, Kind::Event));
                Ok(NerveStatus::Ok)
            }
            Err(status) => {
                event.write(std::ptr::null_mut());
                Ok(status)
            }
        }
    })
}

/// Logs `message` at `level` (`"error"`, `"warn"`, `"info"`, `"debug"` or `"trace"`) as the
/// node. Under `nerve run` the node's `min_log_level` filters it (`info` and up unless it says
/// otherwise), and it goes to the node's log file, the terminal and the readers of the run's
/// logs (`dora/logs`, `send_logs_as`).
///
/// Fails with `NERVE_STATUS_INVALID_ARGUMENT` (an unknown level, text that is not UTF-8).
/// Thread-safety: any thread.
///
/// # Safety
/// `node` is a live handle; `level` and `message` are NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_log(node: *const NerveNode, level: *const c_char, message: *const c_char) -> c_int {
    guard("nerve_node_log", || {
        // SAFETY: as the caller promises.
        let (node, level, message) =
            unsafe { (handles::get(node, Kind::Node, "node")?, text(level, "level")?, text(message, "message")?) };
        node.node.log(log_level(level, "level")?, message);
        Ok(NerveStatus::Ok)
    })
}

/// Sends `len` bytes (an Arrow `UInt8` array) on output `output`, with `parameters_json` as the
/// message's metadata parameters (the text of a JSON object, or NULL for none). The bytes are
/// copied once, into shared memory; `nerve_node_loan` avoids even that copy.
///
/// Fails with `NERVE_STATUS_UNKNOWN_OUTPUT`, `NERVE_STATUS_WRONG_TYPE` (the output declares another type),
/// `NERVE_STATUS_TOO_LARGE` (over the run's `--max-message`), `NERVE_STATUS_INVALID_ARGUMENT` (parameters
/// that are not a JSON object).
///
/// Ownership: the caller keeps `data`. Thread-safety: any thread.
///
/// # Safety
/// `node` is a live handle; `output` and `parameters_json` (unless NULL) are NUL-terminated
/// strings; `data` points to `len` readable bytes (or is NULL with `len` 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_send_bytes(
    node: *const NerveNode,
    output: *const c_char,
    parameters_json: *const c_char,
    data: *const u8,
    len: usize,
) -> c_int {
    guard("nerve_node_send_bytes", || {
        // SAFETY: as the caller promises.
        let (node, output, params, data) = unsafe {
            (
                handles::get(node, Kind::Node, "node")?,
                text(output, "output")?,
                parameters(parameters_json, "parameters_json")?,
                bytes(data, len, "data")?,
            )
        };
        node.node.send_output_bytes(output, &params, data)?;
        Ok(NerveStatus::Ok)
    })
}

/// Sends an Arrow array, given through the Arrow C data interface, on output `output`. Its
/// buffers are read where they are (no conversion) and copied once, into shared memory.
///
/// Ownership: `array` is moved into nerve, sent or not: nerve releases it and marks it
/// released (its `release` is NULL afterwards). `schema` stays the caller's, to release.
/// Fails as `nerve_node_send_bytes`, and with `NERVE_STATUS_INVALID_ARGUMENT` for an array or schema
/// that the C data interface does not allow.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `node` is a live handle; `output` and `parameters_json` (unless NULL) are NUL-terminated
/// strings; `array` and `schema` point to valid, not yet released C data interface structs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_send_arrow(
    node: *const NerveNode,
    output: *const c_char,
    parameters_json: *const c_char,
    array: *mut FFI_ArrowArray,
    schema: *const FFI_ArrowSchema,
) -> c_int {
    guard("nerve_node_send_arrow", || {
        // SAFETY: as the caller promises; taken first, so that it is released whatever fails.
        let array = unsafe { arrow(array, schema) }?;
        // SAFETY: as the caller promises.
        let (node, output, params) = unsafe {
            (
                handles::get(node, Kind::Node, "node")?,
                text(output, "output")?,
                parameters(parameters_json, "parameters_json")?,
            )
        };
        node.node.send_output(output, &params, &array)?;
        Ok(NerveStatus::Ok)
    })
}

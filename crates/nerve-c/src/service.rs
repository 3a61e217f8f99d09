//! `nerve_client` and `nerve_server`: services (a request answered by one reply) by name, from
//! any process, with no dataflow.
//!
//! A thin binding of `nerve_topic::service`: C clients and servers meet Rust and Python ones on
//! the same names. A reply, and a request as a handler sees it, is a `nerve_event` of type INPUT
//! whose input id is the service, read with the `nerve_event_*` functions.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::Arc;

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{Array, ArrayRef, NullArray, UInt8Array};
use nerve_node::{Message, Parameters, Refusal};
use nerve_topic::service::{Client, HandlerResult, Request, Server, ServiceOptions};

use crate::args::{arrow, bounded_timeout, bytes, out, parameters, text};
use crate::error::{ApiError, NerveStatus, guard};
use crate::event::NerveEvent;
use crate::handles::{self, Kind};
use crate::topic::{UserData, c_name, event_of};

/// A client of one service (opaque).
///
/// Thread-safety: every function taking a `nerve_client` may be called from any thread at once
/// (calls run side by side), except `nerve_client_free`.
pub struct NerveClient {
    client: Client,
    name: Arc<CStr>,
}

/// A client of service `service` in domain `domain` (0 unless groups of endpoints are kept
/// apart).
///
/// On success `*client` is a new handle owned by the caller, to be freed with
/// `nerve_client_free`. Fails with `NERVE_STATUS_INVALID_ARGUMENT` for a name nerve does not
/// accept, `NERVE_STATUS_RUNTIME` when the network session cannot be set up.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `service` is a NUL-terminated string; `client` is valid for writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_client_new(service: *const c_char, domain: u32, client: *mut *mut NerveClient) -> c_int {
    guard("nerve_client_new", || {
        // SAFETY: as the caller promises.
        let (service, client) = unsafe { (text(service, "service")?, out(client, "client")?) };
        let c = Client::new(service, ServiceOptions { domain, ..ServiceOptions::default() })?;
        let name = c_name(c.service());
        client.write(handles::give(NerveClient { client: c, name }, Kind::Client));
        Ok(NerveStatus::Ok)
    })
}

/// Frees a client; NULL is allowed and does nothing. Replies received stay valid until freed.
///
/// Thread-safety: no other thread may use the handle during or after the call.
///
/// # Safety
/// `client` is NULL or a live handle no other thread uses.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_client_free(client: *mut NerveClient) -> c_int {
    // SAFETY: as the caller promises.
    unsafe { handles::free("nerve_client_free", client, Kind::Client, "client") }
}

/// Runs `body` with live client `client`.
///
/// # Safety
/// `client` is NULL or a pointer no other thread frees meanwhile.
unsafe fn with_client(
    function: &str,
    client: *const NerveClient,
    body: impl FnOnce(&NerveClient) -> Result<NerveStatus, ApiError>,
) -> c_int {
    guard(function, || {
        // SAFETY: as the caller promises.
        body(unsafe { handles::get(client, Kind::Client, "client") }?)
    })
}

/// The number of servers of the client's service reachable now, in `*count`.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `client` is a live handle no other thread frees meanwhile; `count` is valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_client_server_count(client: *const NerveClient, count: *mut usize) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_client("nerve_client_server_count", client, |c| {
            out(count, "count")?.write(c.client.server_count());
            Ok(NerveStatus::Ok)
        })
    }
}

/// Waits at most `timeout_ms` milliseconds (0 or more) until a server of the service is
/// reachable: `NERVE_STATUS_OK` once one is, `NERVE_STATUS_TIMEOUT` if none is in time. Woken
/// when a server appears, it never polls.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `client` is a live handle no other thread frees meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_client_wait_for_server(client: *const NerveClient, timeout_ms: i64) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_client("nerve_client_wait_for_server", client, |c| {
            let timeout = bounded_timeout(timeout_ms, "timeout_ms")?;
            Ok(if c.client.wait_for_server(timeout) { NerveStatus::Ok } else { NerveStatus::Timeout })
        })
    }
}

/// Calls the service with `request` and `parameters_json` and waits up to `timeout` for the
/// reply, written to `reply` as a new event.
fn call(
    c: &NerveClient,
    request: &ArrayRef,
    parameters: &Parameters,
    timeout_ms: i64,
    reply: *mut *mut NerveEvent,
) -> Result<NerveStatus, ApiError> {
    // SAFETY: valid for writes, by the contract of the functions calling this.
    let reply = unsafe { out(reply, "reply") }?;
    reply.write(std::ptr::null_mut());
    let timeout = bounded_timeout(timeout_ms, "timeout_ms")?;
    let answer = c.client.call(&request.to_data(), parameters, timeout)?;
    let message = Message::new(c.client.service().into(), answer.metadata, answer.data);
    reply.write(handles::give(event_of(&c.name, message), Kind::Event));
    Ok(NerveStatus::Ok)
}

/// Calls the service with `len` bytes (an Arrow `UInt8` array) and `parameters_json` (a JSON
/// object's text, or NULL) and waits at most `timeout_ms` milliseconds (0 or more) for the
/// reply. A call never waits longer, whatever the server does.
///
/// On success `*reply` is a new INPUT event owned by the caller (free it with
/// `nerve_event_free`), whose input id is the service. Else `*reply` is NULL and the status says
/// why: `NERVE_STATUS_TIMEOUT` (no reply in time; `nerve_last_error()` says so),
/// `NERVE_STATUS_NOT_FOUND` (no server of that name), `NERVE_STATUS_REFUSED` (the server's
/// handler failed the request; the message holds its reason), `NERVE_STATUS_RUNTIME` (the server
/// went away mid-call), `NERVE_STATUS_INVALID_ARGUMENT`.
///
/// Ownership: the caller keeps `data`. Thread-safety: any thread.
///
/// # Safety
/// `client` is a live handle no other thread frees meanwhile; `parameters_json` is NULL or a
/// NUL-terminated string; `data` points to `len` readable bytes (or is NULL with `len` 0);
/// `reply` is valid for writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_client_call_bytes(
    client: *const NerveClient,
    parameters_json: *const c_char,
    data: *const u8,
    len: usize,
    timeout_ms: i64,
    reply: *mut *mut NerveEvent,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_client("nerve_client_call_bytes", client, |c| {
            let request: ArrayRef = Arc::new(UInt8Array::from(bytes(data, len, "data")?.to_vec()));
            call(c, &request, &parameters(parameters_json, "parameters_json")?, timeout_ms, reply)
        })
    }
}

/// Calls the service with an Arrow array given through the Arrow C data interface, as
/// `nerve_client_call_bytes` does with bytes.
///
/// Ownership: `array` is moved into nerve, sent or not (its `release` is NULL afterwards);
/// `schema` stays the caller's. Fails as `nerve_client_call_bytes`, and with
/// `NERVE_STATUS_INVALID_ARGUMENT` for an array or schema the C data interface does not allow.
///
/// Thread-safety: any thread.
///
/// # Safety
/// As `nerve_client_call_bytes`; `array` and `schema` point to valid, not yet released C data
/// interface structs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_client_call_arrow(
    client: *const NerveClient,
    parameters_json: *const c_char,
    array: *mut FFI_ArrowArray,
    schema: *const FFI_ArrowSchema,
    timeout_ms: i64,
    reply: *mut *mut NerveEvent,
) -> c_int {
    guard("nerve_client_call_arrow", || {
        // SAFETY: as the caller promises; taken first, so that it is released whatever fails.
        let request = unsafe { arrow(array, schema) }?;
        // SAFETY: as the caller promises.
        let (c, params) =
            unsafe { (handles::get(client, Kind::Client, "client")?, parameters(parameters_json, "parameters_json")?) };
        call(c, &request, &params, timeout_ms, reply)
    })
}

/// The reply a server's handler is filling (opaque), lent to the handler for its call.
///
/// Thread-safety: the handler's thread alone.
pub struct NerveReply {
    /// What the handler set last; an empty reply when it set nothing.
    outcome: Option<HandlerResult>,
}

/// How a C handler answers each request of a server.
///
/// `request` is a borrowed INPUT event whose input id is the service, valid during the call
/// only, not to be freed (`nerve_event_arrow` exports its value to keep). The handler answers
/// through `reply`, also valid during the call only: `nerve_reply_bytes`, `nerve_reply_arrow`,
/// or `nerve_reply_error` to fail the request with a reason; a handler that sets none replies
/// with no value. `user_data` is what was given with the handler. It runs on the server's
/// threads and must not throw or `longjmp` out.
pub type NerveServiceHandler =
    Option<unsafe extern "C" fn(request: *const NerveEvent, reply: *mut NerveReply, user_data: *mut c_void)>;

/// A server of one service (opaque); it answers until freed.
///
/// Thread-safety: `nerve_server_free` only, by one thread.
pub struct NerveServer {
    _server: Server,
}

/// Serves service `service` in domain `domain` with `handler`, run with `user_data` on
/// `workers` threads of nerve's (`nerve-srv-<service>-<i>`; at least 1), so that up to that many
/// requests are answered at once; more wait their turn.
///
/// On success `*server` is a new handle owned by the caller; `nerve_server_free` stops serving.
/// Fails with `NERVE_STATUS_NULL_ARGUMENT` for a NULL handler, `NERVE_STATUS_INVALID_ARGUMENT`
/// for a name nerve does not accept or 0 workers, `NERVE_STATUS_RUNTIME` when the network
/// session cannot be set up.
///
/// Thread-safety: any thread; `user_data` must be usable from the server's threads, and valid
/// until the server is freed and its calls under way have returned.
///
/// # Safety
/// `service` is a NUL-terminated string; `handler` is NULL or a function of that signature;
/// `server` is valid for writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_server_new(
    service: *const c_char,
    domain: u32,
    workers: usize,
    handler: NerveServiceHandler,
    user_data: *mut c_void,
    server: *mut *mut NerveServer,
) -> c_int {
    guard("nerve_server_new", || {
        let handler = handler.ok_or(ApiError::Null("handler"))?;
        // SAFETY: as the caller promises.
        let (name, server) = unsafe { (text(service, "service")?, out(server, "server")?) };
        if workers == 0 {
            return Err(ApiError::InvalidArgument { arg: "workers", problem: "is 0: a server needs a thread".into() });
        }
        let user = UserData(user_data);
        let answer = move |request: Request| -> HandlerResult {
            let user = user;
            let id = c_name(&request.service);
            let message = Message::new(request.service.into(), request.metadata, request.data);
            let (reply, _) = handles::lend(event_of(&id, message), Kind::Event, |request| {
                handles::lend(NerveReply { outcome: None }, Kind::Reply, |reply| {
                    // SAFETY: live handles for the length of the call; the caller vouches for
                    // the handler and its user data on this thread.
                    unsafe { handler(request, reply, user.0) };
                })
                .1
            });
            match reply {
                Some(NerveReply { outcome: Some(outcome) }) => outcome,
                Some(NerveReply { outcome: None }) => Ok((NullArray::new(0).into_data(), Parameters::new())),
                None => Err(Refusal::from("the handler freed its reply, which nerve lends it for the call only")),
            }
        };
        let options = ServiceOptions { domain, workers, ..ServiceOptions::default() };
        server.write(handles::give(NerveServer { _server: Server::new(name, options, answer)? }, Kind::Server));
        Ok(NerveStatus::Ok)
    })
}

/// Stops serving and frees the handle; NULL is allowed and does nothing. It waits for the handler
/// calls under way (unless a handler frees its own server), so the handler and its user data are
/// never used once it returns; requests not yet taken get no answer (their callers see the server
/// go away).
///
/// Thread-safety: no other thread may use the handle during or after the call.
///
/// # Safety
/// `server` is NULL or a live handle no other thread uses.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_server_free(server: *mut NerveServer) -> c_int {
    // SAFETY: as the caller promises.
    unsafe { handles::free("nerve_server_free", server, Kind::Server, "server") }
}

/// Sets the reply lent to a handler to what `body` makes. `body` runs first, so that an Arrow
/// array it takes is released whatever else fails.
///
/// # Safety
/// `reply` is NULL or a pointer only this thread uses.
unsafe fn with_reply(
    function: &str,
    reply: *mut NerveReply,
    body: impl FnOnce() -> Result<HandlerResult, ApiError>,
) -> c_int {
    guard(function, || {
        let outcome = body()?;
        // SAFETY: as the caller promises.
        unsafe { handles::get_mut(reply, Kind::Reply, "reply") }?.outcome = Some(outcome);
        Ok(NerveStatus::Ok)
    })
}

/// Answers the request with `len` bytes (an Arrow `UInt8` array) and `parameters_json` (a JSON
/// object's text, or NULL), replacing what the handler set before. Fails with
/// `NERVE_STATUS_INVALID_HANDLE` outside the handler's call.
///
/// Ownership: the bytes are copied; the caller keeps `data`. Thread-safety: the handler's thread.
///
/// # Safety
/// `reply` is the handler's; `parameters_json` is NULL or a NUL-terminated string; `data` points
/// to `len` readable bytes (or is NULL with `len` 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_reply_bytes(
    reply: *mut NerveReply,
    parameters_json: *const c_char,
    data: *const u8,
    len: usize,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_reply("nerve_reply_bytes", reply, || {
            let params = parameters(parameters_json, "parameters_json")?;
            Ok(Ok((UInt8Array::from(bytes(data, len, "data")?.to_vec()).into_data(), params)))
        })
    }
}

/// Answers the request with an Arrow array given through the Arrow C data interface, and
/// `parameters_json`, replacing what the handler set before.
///
/// Ownership: `array` is moved into nerve, used or not (its `release` is NULL afterwards);
/// `schema` stays the caller's. Fails with `NERVE_STATUS_INVALID_ARGUMENT` for an array or
/// schema the C data interface does not allow.
///
/// Thread-safety: the handler's thread.
///
/// # Safety
/// `reply` is the handler's; `parameters_json` is NULL or a NUL-terminated string; `array` and
/// `schema` point to valid, not yet released C data interface structs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_reply_arrow(
    reply: *mut NerveReply,
    parameters_json: *const c_char,
    array: *mut FFI_ArrowArray,
    schema: *const FFI_ArrowSchema,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_reply("nerve_reply_arrow", reply, || {
            let value = arrow(array, schema)?;
            Ok(Ok((value.to_data(), parameters(parameters_json, "parameters_json")?)))
        })
    }
}

/// Fails the request: the caller's `nerve_client_call_*` returns `NERVE_STATUS_REFUSED` with
/// `reason` in its message. Replaces what the handler set before.
///
/// Ownership: `reason` is copied. Thread-safety: the handler's thread.
///
/// # Safety
/// `reply` is the handler's; `reason` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_reply_error(reply: *mut NerveReply, reason: *const c_char) -> c_int {
    // SAFETY: as the caller promises.
    unsafe { with_reply("nerve_reply_error", reply, || Ok(Err(Refusal::from(text(reason, "reason")?)))) }
}

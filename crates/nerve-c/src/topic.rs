//! `nerve_publisher` and `nerve_subscriber`: topics by name, from any process, with no dataflow.
//!
//! A thin binding of `nerve_topic`: names are resolved, and messages carried, exactly as for Rust
//! and Python endpoints, which these meet on the same topics. A message received is a
//! `nerve_event` of type INPUT whose input id is the topic, read with the `nerve_event_*`
//! functions.

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::Arc;

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use nerve_topic::{
    CallbackMode, Callbacks, DEFAULT_MAX_MESSAGE, Message, Publisher, PublisherOptions, RunScope, Scope, Subscriber,
    SubscriberOptions,
};

use crate::args::{arrow, bounded_timeout, bytes, out, parameters, text, timeout};
use crate::error::{ApiError, NerveStatus, guard};
use crate::event::NerveEvent;
use crate::handles::{self, Kind};
use crate::sample::{self, NerveSample};

/// Scope of a topic: only endpoints of the same process.
pub const NERVE_SCOPE_PROCESS: u32 = 0;
/// Scope of a topic: endpoints of processes on this host.
pub const NERVE_SCOPE_HOST: u32 = 1;
/// Scope of a topic: endpoints anywhere the network reaches (the default).
pub const NERVE_SCOPE_NETWORK: u32 = 2;

/// How a publisher is set up; `nerve_publisher_options_default()` gives the defaults.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NervePublisherOptions {
    /// Group of endpoints that see each other (two domains never do); 0 by default.
    pub domain: u32,
    /// How far messages travel: `NERVE_SCOPE_PROCESS`, `_HOST` or `_NETWORK` (the default).
    pub scope: u32,
    /// Largest message in bytes (1 GiB by default, and when 0); a larger one gets
    /// `NERVE_STATUS_TOO_LARGE`.
    pub max_message: usize,
    /// Keep the last message and hand it to each subscriber that joins later (ROS 2's
    /// transient-local durability, depth one); false by default.
    pub latched: bool,
    /// Whose topic it is: NULL (the default) for this process's run's (a global topic outside
    /// any run, and for a name the dataflow shares), or the run named so (its `--name`, else its
    /// id), from anywhere. Read during `_new` only.
    pub run: *const c_char,
    /// A global topic, met by every run's shared names and by processes outside any run; false
    /// by default. Not with `run`.
    pub shared: bool,
}

/// How a subscriber is set up; `nerve_subscriber_options_default()` gives the defaults.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NerveSubscriberOptions {
    /// Group of endpoints that see each other; 0 by default.
    pub domain: u32,
    /// How far away publishers may be: `NERVE_SCOPE_*`, `NERVE_SCOPE_NETWORK` by default.
    pub scope: u32,
    /// Messages kept per publisher while the subscriber is busy (10 by default); past it the
    /// oldest are dropped, never the newest, and the publisher never waits.
    pub queue_size: usize,
    /// Keep only the newest message (a queue of one); false by default.
    pub keep_latest: bool,
    /// Whose topic it is: NULL (the default) for this process's run's (a global topic outside
    /// any run, and for a name the dataflow shares), or the run named so (its `--name`, else its
    /// id), from anywhere. Read during `_new` only.
    pub run: *const c_char,
    /// A global topic, met by every run's shared names and by processes outside any run; false
    /// by default. Not with `run`.
    pub shared: bool,
}

/// The default publisher options: domain 0, network scope, 1 GiB messages, not latched, the
/// run's topic.
///
/// Thread-safety: any thread.
#[unsafe(no_mangle)]
pub extern "C" fn nerve_publisher_options_default() -> NervePublisherOptions {
    let d = PublisherOptions::default();
    NervePublisherOptions {
        domain: d.domain,
        scope: scope_code(d.scope),
        max_message: d.max_message,
        latched: d.latched,
        run: std::ptr::null(),
        shared: false,
    }
}

/// The default subscriber options: domain 0, network scope, a queue of 10, not keep-latest,
/// the run's topic.
///
/// Thread-safety: any thread.
#[unsafe(no_mangle)]
pub extern "C" fn nerve_subscriber_options_default() -> NerveSubscriberOptions {
    let d = SubscriberOptions::default();
    NerveSubscriberOptions {
        domain: d.domain,
        scope: scope_code(d.scope),
        queue_size: d.queue_size,
        keep_latest: d.keep_latest,
        run: std::ptr::null(),
        shared: false,
    }
}

fn scope_code(scope: Scope) -> u32 {
    match scope {
        Scope::Process => NERVE_SCOPE_PROCESS,
        Scope::Host => NERVE_SCOPE_HOST,
        Scope::Network => NERVE_SCOPE_NETWORK,
    }
}

fn scope(code: u32) -> Result<Scope, ApiError> {
    match code {
        NERVE_SCOPE_PROCESS => Ok(Scope::Process),
        NERVE_SCOPE_HOST => Ok(Scope::Host),
        NERVE_SCOPE_NETWORK => Ok(Scope::Network),
        other => Err(ApiError::InvalidArgument {
            arg: "options->scope",
            problem: format!("is {other}, not NERVE_SCOPE_PROCESS, NERVE_SCOPE_HOST or NERVE_SCOPE_NETWORK"),
        }),
    }
}

/// Whose topic options `run` and `shared` name.
///
/// # Safety
/// `run` is NULL or a NUL-terminated string.
unsafe fn run_scope(run: *const c_char, shared: bool) -> Result<RunScope, ApiError> {
    match (run.is_null(), shared) {
        (true, false) => Ok(RunScope::Inherit),
        (true, true) => Ok(RunScope::Shared),
        // SAFETY: as the caller promises.
        (false, false) => Ok(RunScope::Run(unsafe { text(run, "options->run") }?.to_owned())),
        (false, true) => Err(ApiError::InvalidArgument {
            arg: "options->run",
            problem: "is set with options->shared: a topic is a run's or shared, not both".to_owned(),
        }),
    }
}

/// The options at `ptr`, or the defaults for NULL.
///
/// # Safety
/// `ptr` is NULL or points to a readable `T`.
unsafe fn or_default<T: Copy>(ptr: *const T, default: T) -> T {
    // SAFETY: readable when not NULL, by the caller's contract.
    unsafe { ptr.as_ref() }.copied().unwrap_or(default)
}

/// The C form of an endpoint's name, as events show it.
pub(crate) fn c_name(name: &str) -> Arc<CStr> {
    // Canonical topic and service names have no NUL (`nerve_topic::name` refuses it).
    CString::new(name).unwrap_or_default().into()
}

/// The message as a `nerve_event` whose input id is `id`.
pub(crate) fn event_of(id: &Arc<CStr>, message: Message) -> NerveEvent {
    NerveEvent::Input { id: id.clone(), message }
}

/// A topic publisher (opaque).
///
/// Thread-safety: every function taking a `nerve_publisher` may be called from any thread at
/// once, except `nerve_publisher_free`.
pub struct NervePublisher {
    publisher: Publisher,
}

/// Starts publishing on topic `topic`, with `options` (NULL for the defaults).
///
/// On success `*publisher` is a new handle owned by the caller, to be freed with
/// `nerve_publisher_free`. Fails with `NERVE_STATUS_INVALID_ARGUMENT` for a topic name or
/// options nerve does not accept, `NERVE_STATUS_RUNTIME` when the topic's registry, shared memory
/// or network session cannot be set up.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `topic` is a NUL-terminated string; `options` is NULL or readable; `publisher` is valid for
/// writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_publisher_new(
    topic: *const c_char,
    options: *const NervePublisherOptions,
    publisher: *mut *mut NervePublisher,
) -> c_int {
    guard("nerve_publisher_new", || {
        // SAFETY: as the caller promises.
        let (topic, o, publisher) = unsafe {
            (
                text(topic, "topic")?,
                or_default(options, nerve_publisher_options_default()),
                out(publisher, "publisher")?,
            )
        };
        let o = PublisherOptions {
            domain: o.domain,
            scope: scope(o.scope)?,
            max_message: if o.max_message == 0 { DEFAULT_MAX_MESSAGE } else { o.max_message },
            latched: o.latched,
            // SAFETY: as the caller promises of `options`.
            run: unsafe { run_scope(o.run, o.shared) }?,
            origin: None,
        };
        publisher.write(handles::give(NervePublisher { publisher: Publisher::new(topic, o)? }, Kind::Publisher));
        Ok(NerveStatus::Ok)
    })
}

/// Stops publishing and frees the handle; NULL is allowed and does nothing. Samples it lent and
/// did not send stay valid until freed.
///
/// Thread-safety: no other thread may use the handle during or after the call.
///
/// # Safety
/// `publisher` is NULL or a live handle no other thread uses.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_publisher_free(publisher: *mut NervePublisher) -> c_int {
    // SAFETY: as the caller promises.
    unsafe { handles::free("nerve_publisher_free", publisher, Kind::Publisher, "publisher") }
}

/// Runs `body` with live publisher `publisher`.
///
/// # Safety
/// `publisher` is NULL or a pointer no other thread frees meanwhile.
unsafe fn with_publisher(
    function: &str,
    publisher: *const NervePublisher,
    body: impl FnOnce(&Publisher) -> Result<NerveStatus, ApiError>,
) -> c_int {
    guard(function, || {
        // SAFETY: as the caller promises.
        body(&unsafe { handles::get(publisher, Kind::Publisher, "publisher") }?.publisher)
    })
}

/// Sends `len` bytes (an Arrow `UInt8` array) with `parameters_json` as the message's metadata
/// parameters (a JSON object's text, or NULL). Subscribers in other processes read one copy in
/// shared memory; `nerve_publisher_loan` avoids even that copy.
///
/// Fails with `NERVE_STATUS_TOO_LARGE` over the publisher's `max_message`,
/// `NERVE_STATUS_INVALID_ARGUMENT` for parameters that are not a JSON object.
///
/// Ownership: the caller keeps `data`. Thread-safety: any thread.
///
/// # Safety
/// `publisher` is a live handle; `parameters_json` is NULL or a NUL-terminated string; `data`
/// points to `len` readable bytes (or is NULL with `len` 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_publisher_send_bytes(
    publisher: *const NervePublisher,
    parameters_json: *const c_char,
    data: *const u8,
    len: usize,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_publisher("nerve_publisher_send_bytes", publisher, |p| {
            p.send_bytes(bytes(data, len, "data")?, &parameters(parameters_json, "parameters_json")?)?;
            Ok(NerveStatus::Ok)
        })
    }
}

/// Sends an Arrow array given through the Arrow C data interface. Subscribers of this process
/// get the very buffers given (no copy: their `nerve_event_arrow` shows the same memory, kept
/// alive until the last of them releases it); subscribers in other processes one copy in
/// shared memory.
///
/// Ownership: `array` is moved into nerve, sent or not (its `release` is NULL afterwards);
/// `schema` stays the caller's. Fails as `nerve_publisher_send_bytes`, and with
/// `NERVE_STATUS_INVALID_ARGUMENT` for an array or schema the C data interface does not allow.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `publisher` is a live handle; `parameters_json` is NULL or a NUL-terminated string; `array`
/// and `schema` point to valid, not yet released C data interface structs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_publisher_send_arrow(
    publisher: *const NervePublisher,
    parameters_json: *const c_char,
    array: *mut FFI_ArrowArray,
    schema: *const FFI_ArrowSchema,
) -> c_int {
    guard("nerve_publisher_send_arrow", || {
        // SAFETY: as the caller promises; taken first, so that it is released whatever fails.
        let array = unsafe { arrow(array, schema) }?;
        // SAFETY: as the caller promises.
        let (p, params) = unsafe {
            (handles::get(publisher, Kind::Publisher, "publisher")?, parameters(parameters_json, "parameters_json")?)
        };
        p.publisher.send(&array, &params)?;
        Ok(NerveStatus::Ok)
    })
}

/// Lends `len` bytes of shared memory, to fill in place and send with
/// `nerve_publisher_send_sample` as an Arrow `UInt8` array with `parameters_json` (a JSON
/// object's text, or NULL) as its metadata parameters: subscribers in other processes read the
/// very bytes written.
///
/// On success `*sample` is a new handle owned by the caller: sent with
/// `nerve_publisher_send_sample` or given back with `nerve_sample_free`; `nerve_sample_data`
/// gives its bytes. Fails as `nerve_publisher_send_bytes`.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `publisher` is a live handle; `parameters_json` is NULL or a NUL-terminated string; `sample`
/// is valid for writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_publisher_loan(
    publisher: *const NervePublisher,
    parameters_json: *const c_char,
    len: usize,
    sample: *mut *mut NerveSample,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_publisher("nerve_publisher_loan", publisher, |p| {
            let (params, sample) = (parameters(parameters_json, "parameters_json")?, out(sample, "sample")?);
            sample::lend(p.loan(len, &params)?, sample);
            Ok(NerveStatus::Ok)
        })
    }
}

/// Sends a filled sample this publisher lent. On success the sample is used up (its handle is
/// freed); on failure it stays the caller's, unsent. Subscribers of this process get a copy
/// (the shared block belongs to the other processes' readers).
///
/// Fails with `NERVE_STATUS_INVALID_HANDLE` for a sample sent or freed already, and with
/// `NERVE_STATUS_INVALID_ARGUMENT` for a sample a node or another publisher lent.
///
/// Thread-safety: any thread, one per sample.
///
/// # Safety
/// `publisher` and `sample` are live handles; no other thread uses `sample`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_publisher_send_sample(
    publisher: *const NervePublisher,
    sample: *mut NerveSample,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe { with_publisher("nerve_publisher_send_sample", publisher, |p| sample::send(sample, p)) }
}

/// The number of subscribers this publisher reaches now, in `*count`.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `publisher` is a live handle; `count` is valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_publisher_subscriber_count(
    publisher: *const NervePublisher,
    count: *mut usize,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_publisher("nerve_publisher_subscriber_count", publisher, |p| {
            out(count, "count")?.write(p.subscriber_count());
            Ok(NerveStatus::Ok)
        })
    }
}

/// Waits at most `timeout_ms` milliseconds (0 or more) until the publisher reaches `count`
/// subscribers: `NERVE_STATUS_OK` once it does, `NERVE_STATUS_TIMEOUT` if it does not in time.
/// A subscriber reached gets every message sent from then on. Woken by each subscriber that
/// joins, it never polls.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `publisher` is a live handle no other thread frees meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_publisher_wait_for_subscribers(
    publisher: *const NervePublisher,
    count: usize,
    timeout_ms: i64,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_publisher("nerve_publisher_wait_for_subscribers", publisher, |p| {
            let timeout = bounded_timeout(timeout_ms, "timeout_ms")?;
            Ok(if p.wait_for_subscribers(count, timeout) { NerveStatus::Ok } else { NerveStatus::Timeout })
        })
    }
}

/// How a C callback is handed each message of a subscriber.
///
/// `event` is a borrowed INPUT event whose input id is the topic: valid during the call only,
/// not to be freed (nerve frees it when the callback returns). To keep the value, export it with
/// `nerve_event_arrow`: the array outlives the event, without a copy. `user_data` is what was
/// given with the callback. The callback runs on a thread of nerve's and must not throw or
/// `longjmp` out.
pub type NerveMessageCallback = Option<unsafe extern "C" fn(event: *const NerveEvent, user_data: *mut c_void)>;

/// The caller's `user_data`, handed back to its callback on nerve's threads.
#[derive(Clone, Copy)]
pub(crate) struct UserData(pub(crate) *mut c_void);

// SAFETY: nerve only hands the pointer back to the caller's callback; the caller promises (each
// function taking one says so) that its callback may use it from nerve's threads.
unsafe impl Send for UserData {}
// SAFETY: as above.
unsafe impl Sync for UserData {}

/// A topic subscriber (opaque): read with `nerve_subscriber_recv`, or handing its messages to a
/// callback.
///
/// Thread-safety: every function taking a `nerve_subscriber` may be called from any thread at
/// once, except `nerve_subscriber_free`.
pub struct NerveSubscriber {
    topic: Arc<CStr>,
    receiving: Receiving,
}

enum Receiving {
    Recv(Subscriber),
    /// Stopped (and its threads joined) when the handle is freed.
    Callbacks(Callbacks),
}

impl NerveSubscriber {
    fn with<T>(&self, f: impl FnOnce(&Subscriber) -> T) -> T {
        match &self.receiving {
            Receiving::Recv(sub) => f(sub),
            Receiving::Callbacks(c) => f(c.subscriber()),
        }
    }
}

/// Subscribes to `topic` with `options` (NULL for the defaults); messages are read with
/// `nerve_subscriber_recv`.
///
/// On success `*subscriber` is a new handle owned by the caller, to be freed with
/// `nerve_subscriber_free`. Fails with `NERVE_STATUS_INVALID_ARGUMENT` for a topic name or
/// options nerve does not accept (a `queue_size` of 0), `NERVE_STATUS_RUNTIME` when the topic
/// cannot be set up.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `topic` is a NUL-terminated string; `options` is NULL or readable; `subscriber` is valid for
/// writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_subscriber_new(
    topic: *const c_char,
    options: *const NerveSubscriberOptions,
    subscriber: *mut *mut NerveSubscriber,
) -> c_int {
    guard("nerve_subscriber_new", || {
        // SAFETY: as the caller promises.
        let (sub, subscriber) = unsafe { (subscribe(topic, options)?, out(subscriber, "subscriber")?) };
        let topic = c_name(sub.topic());
        subscriber.write(handles::give(NerveSubscriber { topic, receiving: Receiving::Recv(sub) }, Kind::Subscriber));
        Ok(NerveStatus::Ok)
    })
}

/// Subscribes to `topic` with `options` (NULL for the defaults), handing every message to
/// `callback` with `user_data`, on threads of nerve's woken by the messages themselves (nothing
/// polls). With `workers` 0 the callback runs on one thread (`nerve-dispatch:<topic>`), one
/// message at a time, in order; with `workers` N, on a pool of N threads
/// (`nerve-callback-<i>:<topic>`), up to N messages at once. While every thread is busy,
/// messages wait in the subscriber's queue, whose oldest are dropped past `queue_size`.
///
/// On success `*subscriber` is a new handle owned by the caller; `nerve_subscriber_free` stops
/// the callbacks, waiting for calls under way to return (unless it is called from the callback
/// itself). `nerve_subscriber_recv` is refused on it. Fails as `nerve_subscriber_new`, and with
/// `NERVE_STATUS_NULL_ARGUMENT` for a NULL callback.
///
/// Thread-safety: any thread; the callback runs on nerve's threads, so `user_data` must be
/// usable from them, and valid until the subscriber is freed.
///
/// # Safety
/// As `nerve_subscriber_new`; `callback` is NULL or a function of that signature.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_subscriber_new_callback(
    topic: *const c_char,
    options: *const NerveSubscriberOptions,
    workers: usize,
    callback: NerveMessageCallback,
    user_data: *mut c_void,
    subscriber: *mut *mut NerveSubscriber,
) -> c_int {
    guard("nerve_subscriber_new_callback", || {
        let callback = callback.ok_or(ApiError::Null("callback"))?;
        // SAFETY: as the caller promises.
        let (sub, subscriber) = unsafe { (subscribe(topic, options)?, out(subscriber, "subscriber")?) };
        let topic = c_name(sub.topic());
        let mode = if workers == 0 { CallbackMode::Serial } else { CallbackMode::Concurrent { workers } };
        let (id, user) = (topic.clone(), UserData(user_data));
        let callbacks = sub.on_message(mode, move |message| {
            let user = user;
            // SAFETY: a live event for the length of the call; the caller vouches for the
            // callback and its user data on this thread.
            handles::lend(event_of(&id, message), Kind::Event, |event| unsafe { callback(event, user.0) });
        })?;
        let receiving = Receiving::Callbacks(callbacks);
        subscriber.write(handles::give(NerveSubscriber { topic, receiving }, Kind::Subscriber));
        Ok(NerveStatus::Ok)
    })
}

/// # Safety
/// As `nerve_subscriber_new`'s `topic` and `options`.
unsafe fn subscribe(topic: *const c_char, options: *const NerveSubscriberOptions) -> Result<Subscriber, ApiError> {
    // SAFETY: as the caller promises.
    let (topic, o) = unsafe { (text(topic, "topic")?, or_default(options, nerve_subscriber_options_default())) };
    let o = SubscriberOptions {
        domain: o.domain,
        scope: scope(o.scope)?,
        queue_size: o.queue_size,
        keep_latest: o.keep_latest,
        // SAFETY: as the caller promises of `options`.
        run: unsafe { run_scope(o.run, o.shared) }?,
    };
    Ok(Subscriber::new(topic, o)?)
}

/// Stops subscribing and frees the handle; NULL is allowed and does nothing. A callback
/// subscriber's calls under way finish first. Events received stay valid until freed.
///
/// Thread-safety: no other thread may use the handle during or after the call (its own
/// callback may free it).
///
/// # Safety
/// `subscriber` is NULL or a live handle no other thread uses.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_subscriber_free(subscriber: *mut NerveSubscriber) -> c_int {
    // SAFETY: as the caller promises.
    unsafe { handles::free("nerve_subscriber_free", subscriber, Kind::Subscriber, "subscriber") }
}

/// Runs `body` with live subscriber `subscriber`.
///
/// # Safety
/// `subscriber` is NULL or a pointer no other thread frees meanwhile.
unsafe fn with_subscriber(
    function: &str,
    subscriber: *const NerveSubscriber,
    body: impl FnOnce(&NerveSubscriber) -> Result<NerveStatus, ApiError>,
) -> c_int {
    guard(function, || {
        // SAFETY: as the caller promises.
        body(unsafe { handles::get(subscriber, Kind::Subscriber, "subscriber") }?)
    })
}

/// Waits for the subscriber's next message: at most `timeout_ms` milliseconds, or for as long
/// as it takes when `timeout_ms` is negative (0: only a message already there). Waiting sleeps.
///
/// Returns `NERVE_STATUS_OK` with `*event` a new INPUT event owned by the caller (free it with
/// `nerve_event_free`), whose input id is the topic and whose value views the sender's shared
/// memory (or, from a publisher of this process, its very buffers); `NERVE_STATUS_TIMEOUT` with
/// `*event` NULL. Fails with `NERVE_STATUS_INVALID_ARGUMENT` on a callback subscriber, and with
/// `NERVE_STATUS_RUNTIME` for a message that cannot be decoded (it is skipped: the next call
/// goes on).
///
/// Thread-safety: any thread; concurrent calls each get different messages.
///
/// # Safety
/// `subscriber` is a live handle no other thread frees meanwhile; `event` is valid for writing
/// a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_subscriber_recv(
    subscriber: *const NerveSubscriber,
    timeout_ms: i64,
    event: *mut *mut NerveEvent,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_subscriber("nerve_subscriber_recv", subscriber, |s| {
            let event = out(event, "event")?;
            event.write(std::ptr::null_mut());
            let Receiving::Recv(sub) = &s.receiving else {
                return Err(ApiError::Unsupported("this subscriber hands its messages to its callback"));
            };
            Ok(match sub.recv(timeout(timeout_ms))? {
                Some(message) => {
                    event.write(handles::give(event_of(&s.topic, message), Kind::Event));
                    NerveStatus::Ok
                }
                None => NerveStatus::Timeout,
            })
        })
    }
}

/// The number of publishers the subscriber is linked to now, in `*count`.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `subscriber` is a live handle no other thread frees meanwhile; `count` is valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_subscriber_publisher_count(
    subscriber: *const NerveSubscriber,
    count: *mut usize,
) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_subscriber("nerve_subscriber_publisher_count", subscriber, |s| {
            out(count, "count")?.write(s.with(Subscriber::publisher_count));
            Ok(NerveStatus::Ok)
        })
    }
}

/// The number of messages the subscriber dropped so far (its queue was full), in `*count`.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `subscriber` is a live handle no other thread frees meanwhile; `count` is valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_subscriber_dropped(subscriber: *const NerveSubscriber, count: *mut u64) -> c_int {
    // SAFETY: as the caller promises.
    unsafe {
        with_subscriber("nerve_subscriber_dropped", subscriber, |s| {
            out(count, "count")?.write(s.with(Subscriber::dropped));
            Ok(NerveStatus::Ok)
        })
    }
}

//! Status codes, the thread's last error message, and the guard every entry point runs in.

use std::cell::RefCell;
use std::ffi::{CString, c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};

use nerve_node::{NodeError, ParamError};
use nerve_tf::TfError;
use nerve_topic::TopicError;
use nerve_topic::service::ServiceError;

/// What a call of the C API returns: `NERVE_STATUS_OK` (0), a positive code for an outcome
/// that is no failure (`NERVE_STATUS_TIMEOUT`, `NERVE_STATUS_END`), or a negative code for a
/// failure, whose message `nerve_last_error()` gives.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NerveStatus {
    /// Done.
    Ok = 0,
    /// The timeout passed before an event, a message, a subscriber, a server or a reply came.
    Timeout = 1,
    /// The node's event stream has ended: a STOP was delivered, or every input closed.
    End = 2,
    /// A pointer argument that must not be NULL was NULL.
    NullArgument = -1,
    /// A handle that is not live: freed, used up (a sample already sent), or of another kind.
    InvalidHandle = -2,
    /// An argument with a wrong value: text that is not UTF-8, parameters that are not a JSON
    /// object, an Arrow array that does not match its schema, a topic name nerve does not
    /// accept.
    InvalidArgument = -3,
    /// The event has no such field (the input id of a STOP event).
    WrongEvent = -4,
    /// The node has no output of that id.
    UnknownOutput = -5,
    /// A value of another type than the one asked for or declared.
    WrongType = -6,
    /// A message larger than the run (`nerve run --max-message`) or the publisher allows.
    TooLarge = -7,
    /// Nothing of that name: no metadata parameter of that key, no server of that service, no
    /// node parameter of that key, no transform between two frames.
    NotFound = -8,
    /// The caller's buffer is too small; the length needed was written.
    BufferTooSmall = -9,
    /// The process was not started by `nerve run`, and no node id was given.
    NotStartedByNerve = -10,
    /// The runtime could not be reached, refused the node, or the link to it failed; or the
    /// transport of topics (its registry, shared memory or network session) failed.
    Runtime = -11,
    /// A bug in nerve (a Rust panic), caught before it could cross into C.
    Internal = -12,
    /// Refused by what decides: a service's handler failed the request or a parameter's
    /// on-change callback the change (the message holds its reason), or the run keeps real time
    /// and takes no simulated time.
    Refused = -13,
}

/// A failed call: its status and why.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ApiError {
    /// A pointer argument was NULL.
    #[error("`{0}` is NULL")]
    Null(&'static str),
    /// A handle that is not live.
    #[error("`{arg}` is not a live {kind}: it was freed or used up already, or never was one")]
    InvalidHandle {
        /// The argument.
        arg: &'static str,
        /// The handle type: `nerve_node`, `nerve_event`, `nerve_publisher`, ...
        kind: &'static str,
    },
    /// An argument of a wrong value.
    #[error("`{arg}` {problem}")]
    InvalidArgument {
        /// The argument.
        arg: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// A field the event does not have.
    #[error("a {event} event has no {field}")]
    WrongEvent {
        /// The event's type.
        event: &'static str,
        /// The field asked for.
        field: &'static str,
    },
    /// A value of another type than asked for.
    #[error("{0}")]
    WrongType(String),
    /// A metadata parameter that the message does not carry.
    #[error("the message has no metadata parameter `{0}`")]
    NotFound(String),
    /// A caller's buffer that is too small.
    #[error("a buffer of {capacity} bytes cannot hold the {needed} bytes")]
    BufferTooSmall {
        /// Its size.
        capacity: usize,
        /// What it must hold.
        needed: usize,
    },
    /// A failure of the node API.
    #[error(transparent)]
    Node(#[from] NodeError),
    /// A sample sent with a node that did not lend it.
    #[error("{0}")]
    Send(String),
    /// An Arrow array or schema that cannot be imported or exported.
    #[error("Arrow C data interface: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// A failure of the topic API.
    #[error(transparent)]
    Topic(#[from] TopicError),
    /// A failed service call.
    #[error(transparent)]
    Service(#[from] ServiceError),
    /// A call made on a handle that cannot do it (`recv` on a subscriber with a callback).
    #[error("{0}")]
    Unsupported(&'static str),
    /// A failure of a node's parameters.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// A failure of the transform tree's topics or of a transform sent.
    #[error(transparent)]
    Tf(#[from] TfError),
    /// A transform lookup that failed, naming both frames.
    #[error("no transform from `{source_frame}` to `{target_frame}`{}: {error}", waited(*.waited_ms))]
    Lookup {
        /// The frame looked up.
        source_frame: String,
        /// The frame it is wanted in.
        target_frame: String,
        /// How long the lookup waited for the transforms to come; `None` when it did not.
        waited_ms: Option<u64>,
        /// Why, as the tree says (boxed: it would double the size of every result).
        error: Box<TfError>,
    },
}

fn waited(ms: Option<u64>) -> String {
    ms.map_or_else(String::new, |ms| format!(" within {ms} ms"))
}

impl ApiError {
    fn status(&self) -> NerveStatus {
        match self {
            Self::Null(_) => NerveStatus::NullArgument,
            Self::InvalidHandle { .. } => NerveStatus::InvalidHandle,
            Self::InvalidArgument { .. } | Self::Send(_) | Self::Arrow(_) | Self::Unsupported(_) => {
                NerveStatus::InvalidArgument
            }
            Self::WrongEvent { .. } => NerveStatus::WrongEvent,
            Self::WrongType(_) => NerveStatus::WrongType,
            Self::NotFound(_) => NerveStatus::NotFound,
            Self::BufferTooSmall { .. } => NerveStatus::BufferTooSmall,
            Self::Node(e) => match e {
                NodeError::UnknownOutput { .. } => NerveStatus::UnknownOutput,
                NodeError::WrongType { .. } => NerveStatus::WrongType,
                NodeError::TooLarge { .. } => NerveStatus::TooLarge,
                NodeError::NotStartedByNerve { .. } => NerveStatus::NotStartedByNerve,
                NodeError::NotSimTime => NerveStatus::Refused,
                NodeError::TimerId { .. } => NerveStatus::InvalidArgument,
                _ => NerveStatus::Runtime,
            },
            Self::Topic(e) | Self::Service(ServiceError::Setup(e)) => topic_status(e),
            Self::Param(e) => match e {
                ParamError::UnknownKey { .. } => NerveStatus::NotFound,
                ParamError::TypeMismatch { .. } => NerveStatus::WrongType,
                ParamError::Rejected { .. } => NerveStatus::Refused,
                ParamError::BadKey { .. } => NerveStatus::InvalidArgument,
                _ => NerveStatus::Runtime,
            },
            // What waiting could have found and did not is a timeout, not a failure.
            Self::Lookup { waited_ms: Some(_), .. } => NerveStatus::Timeout,
            Self::Lookup { error, .. } => tf_status(error),
            Self::Tf(error) => tf_status(error),
            Self::Service(e) => match e {
                ServiceError::NoServer { .. } => NerveStatus::NotFound,
                ServiceError::Timeout { .. } => NerveStatus::Timeout,
                ServiceError::Failed { .. } => NerveStatus::Refused,
                ServiceError::Malformed { .. } => NerveStatus::InvalidArgument,
                ServiceError::Setup(_) | ServiceError::ServerGone { .. } => NerveStatus::Runtime,
            },
        }
    }
}

fn tf_status(e: &TfError) -> NerveStatus {
    match e {
        TfError::UnknownFrame { .. } | TfError::NotConnected { .. } | TfError::Extrapolation { .. } => {
            NerveStatus::NotFound
        }
        TfError::Invalid { .. } => NerveStatus::InvalidArgument,
        TfError::TwoParents { .. } | TfError::Loop { .. } | TfError::TooOld { .. } => NerveStatus::Refused,
        TfError::Topic(e) => topic_status(e),
        TfError::Malformed { .. } => NerveStatus::Runtime,
    }
}

fn topic_status(e: &TopicError) -> NerveStatus {
    match e {
        TopicError::TooLarge { .. } => NerveStatus::TooLarge,
        TopicError::BadName { .. }
        | TopicError::BadScope(_)
        | TopicError::BadQueueSize(_)
        | TopicError::BadWorkers(_)
        | TopicError::BadOption { .. }
        | TopicError::BadAddress { .. } => NerveStatus::InvalidArgument,
        _ => NerveStatus::Runtime,
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `message` as this thread's last error.
pub(crate) fn set_last_error(message: String) {
    // A message with a NUL inside (from a node's own text) is cut there rather than lost.
    let message = CString::new(message).unwrap_or_else(|e| {
        let end = e.nul_position();
        let mut bytes = e.into_vec();
        bytes.truncate(end);
        CString::new(bytes).unwrap_or_default()
    });
    LAST_ERROR.with(|last| *last.borrow_mut() = message);
}

/// The message of the last call that failed on the calling thread, naming the function and the
/// problem; an empty string when none has failed. A successful call leaves it as it is.
///
/// Ownership: the string belongs to nerve and stays valid until the next call that fails on
/// this thread. Thread-safety: each thread has its own.
#[unsafe(no_mangle)]
pub extern "C" fn nerve_last_error() -> *const c_char {
    LAST_ERROR.with(|last| last.borrow().as_ptr())
}

/// A short name of a status code (`"NERVE_STATUS_TOO_LARGE"`), or `"unknown status"`.
///
/// Ownership: a static string. Thread-safety: any thread.
#[unsafe(no_mangle)]
pub extern "C" fn nerve_status_name(status: c_int) -> *const c_char {
    let name: &'static [u8] = match status {
        0 => b"NERVE_STATUS_OK\0",
        1 => b"NERVE_STATUS_TIMEOUT\0",
        2 => b"NERVE_STATUS_END\0",
        -1 => b"NERVE_STATUS_NULL_ARGUMENT\0",
        -2 => b"NERVE_STATUS_INVALID_HANDLE\0",
        -3 => b"NERVE_STATUS_INVALID_ARGUMENT\0",
        -4 => b"NERVE_STATUS_WRONG_EVENT\0",
        -5 => b"NERVE_STATUS_UNKNOWN_OUTPUT\0",
        -6 => b"NERVE_STATUS_WRONG_TYPE\0",
        -7 => b"NERVE_STATUS_TOO_LARGE\0",
        -8 => b"NERVE_STATUS_NOT_FOUND\0",
        -9 => b"NERVE_STATUS_BUFFER_TOO_SMALL\0",
        -10 => b"NERVE_STATUS_NOT_STARTED_BY_NERVE\0",
        -11 => b"NERVE_STATUS_RUNTIME\0",
        -12 => b"NERVE_STATUS_INTERNAL\0",
        -13 => b"NERVE_STATUS_REFUSED\0",
        _ => b"unknown status\0",
    };
    name.as_ptr().cast()
}

/// Runs the body of entry point `function`: its error becomes the status it returns and the
/// thread's last error, and a panic is caught there, as unwinding into C would abort.
pub(crate) fn guard(function: &str, body: impl FnOnce() -> Result<NerveStatus, ApiError>) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(status)) => status as c_int,
        Ok(Err(e)) => {
            set_last_error(format!("{function}: {e}"));
            e.status() as c_int
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            set_last_error(format!("{function}: internal error in nerve (please report it): {what}"));
            NerveStatus::Internal as c_int
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_has_its_name() {
        for (status, name) in [
            (NerveStatus::Ok, "NERVE_STATUS_OK"),
            (NerveStatus::TooLarge, "NERVE_STATUS_TOO_LARGE"),
            (NerveStatus::Internal, "NERVE_STATUS_INTERNAL"),
        ] {
            // SAFETY: a static NUL-terminated string.
            let shown = unsafe { std::ffi::CStr::from_ptr(nerve_status_name(status as c_int)) };
            assert_eq!(shown.to_str(), Ok(name));
        }
    }

    #[test]
    fn a_lookup_names_both_frames_and_times_out_only_after_waiting() {
        let lookup = |waited_ms| ApiError::Lookup {
            source_frame: "laser".into(),
            target_frame: "map".into(),
            waited_ms,
            error: Box::new(TfError::UnknownFrame { frame: "laser".into(), known: vec![] }),
        };
        assert_eq!(lookup(None).status(), NerveStatus::NotFound);
        assert_eq!(lookup(Some(50)).status(), NerveStatus::Timeout);
        let shown = lookup(Some(50)).to_string();
        assert!(
            shown.starts_with(
                "no transform from `laser` to `map` within 50 ms: unknown frame `laser` (known frames: none yet)"
            ),
            "{shown}"
        );
    }

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let status = guard("nerve_test", || panic!("boom"));
        assert_eq!(status, NerveStatus::Internal as c_int);
        // SAFETY: the thread's message, just set.
        let message = unsafe { std::ffi::CStr::from_ptr(nerve_last_error()) };
        assert!(message.to_string_lossy().starts_with("nerve_test: internal error in nerve"), "{message:?}");
    }
}

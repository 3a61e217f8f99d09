//! The handles given to C, and the registry that tells a live one from a freed one.
//!
//! A C caller may pass a handle it already freed, one of another kind, or garbage. Reading
//! through such a pointer to find out would itself be undefined behaviour, so every handle is
//! looked up in a registry of the live ones before it is touched: a stale handle gets
//! `NERVE_STATUS_INVALID_HANDLE` instead of a crash. (A freed handle whose address nerve has since
//! given to a new handle of the same kind cannot be told apart; no pointer-based API can.)

use std::sync::{LazyLock, Mutex, PoisonError};

use rustc_hash::FxHashMap;

use crate::error::{ApiError, NerveStatus, guard};

/// What a live handle is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Node,
    Event,
    Sample,
    Publisher,
    Subscriber,
    Client,
    Server,
    Reply,
    ParamChange,
    TfBuffer,
    TfBroadcaster,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Self::Node => "nerve_node",
            Self::Event => "nerve_event",
            Self::Sample => "nerve_sample",
            Self::Publisher => "nerve_publisher",
            Self::Subscriber => "nerve_subscriber",
            Self::Client => "nerve_client",
            Self::Server => "nerve_server",
            Self::Reply => "nerve_reply",
            Self::ParamChange => "nerve_param_change",
            Self::TfBuffer => "nerve_tf_buffer",
            Self::TfBroadcaster => "nerve_tf_broadcaster",
        }
    }
}

// Looked up several times for every event a C node reads: a pointer needs no SipHash (no one
// chooses the keys to collide), and Fx hashing one word is a multiply.
static LIVE: LazyLock<Mutex<FxHashMap<usize, Kind>>> = LazyLock::new(Mutex::default);

fn live() -> std::sync::MutexGuard<'static, FxHashMap<usize, Kind>> {
    // The map stays consistent under a panic (each change is one insert or remove).
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Hands `value` to C as a live handle of `kind`.
pub(crate) fn give<T>(value: T, kind: Kind) -> *mut T {
    let ptr = Box::into_raw(Box::new(value));
    live().insert(ptr as usize, kind);
    ptr
}

fn check(ptr: usize, kind: Kind, arg: &'static str) -> Result<(), ApiError> {
    if ptr == 0 {
        return Err(ApiError::Null(arg));
    }
    match live().get(&ptr) {
        Some(k) if *k == kind => Ok(()),
        _ => Err(ApiError::InvalidHandle { arg, kind: kind.name() }),
    }
}

/// The value behind live handle `ptr` of `kind`.
///
/// # Safety
/// If `ptr` is live, no other thread may free it while the reference is used (the C API's
/// contract: a handle is freed by one thread, once nothing else uses it).
pub(crate) unsafe fn get<'a, T>(ptr: *const T, kind: Kind, arg: &'static str) -> Result<&'a T, ApiError> {
    check(ptr as usize, kind, arg)?;
    // SAFETY: `give` made `ptr` from a Box of a `T` (the kind says which type) and it is not
    // freed yet; the caller keeps it alive meanwhile.
    Ok(unsafe { &*ptr })
}

/// [`get`], mutably.
///
/// # Safety
/// As [`get`], and no other reference to the value may be in use (the C API's contract for the
/// functions that take a handle to change it).
pub(crate) unsafe fn get_mut<'a, T>(ptr: *mut T, kind: Kind, arg: &'static str) -> Result<&'a mut T, ApiError> {
    check(ptr as usize, kind, arg)?;
    // SAFETY: as in `get`; the caller holds the only reference.
    Ok(unsafe { &mut *ptr })
}

/// Lends `value` to C as a live handle of `kind` for the length of `call` (a callback's
/// argument), then takes it back; `None` when the callback freed it meanwhile, against its
/// contract.
pub(crate) fn lend<T, R>(value: T, kind: Kind, call: impl FnOnce(*mut T) -> R) -> (R, Option<T>) {
    let ptr = give(value, kind);
    let result = call(ptr);
    // SAFETY: given above; the callback that used it has returned.
    let back = unsafe { take(ptr, kind, "lent handle") }.ok().map(|b| *b);
    (result, back)
}

/// Takes back live handle `ptr` of `kind`: it is no longer live.
///
/// # Safety
/// As [`get`]: no other thread may use the handle any more.
pub(crate) unsafe fn take<T>(ptr: *mut T, kind: Kind, arg: &'static str) -> Result<Box<T>, ApiError> {
    if ptr.is_null() {
        return Err(ApiError::Null(arg));
    }
    let mut live = live();
    match live.get(&(ptr as usize)) {
        Some(k) if *k == kind => {
            live.remove(&(ptr as usize));
            // SAFETY: made by `give` from a Box of a `T`, and now out of the registry, so this
            // is the only owner.
            Ok(unsafe { Box::from_raw(ptr) })
        }
        _ => Err(ApiError::InvalidHandle { arg, kind: kind.name() }),
    }
}

/// The body of every `nerve_*_free`: frees live handle `ptr` of `kind`; NULL does nothing.
///
/// # Safety
/// `ptr` is NULL or a handle no other thread uses any more.
pub(crate) unsafe fn free<T>(function: &str, ptr: *mut T, kind: Kind, arg: &'static str) -> std::ffi::c_int {
    guard(function, || {
        if !ptr.is_null() {
            // SAFETY: live (checked), and no one else uses it, by the caller's contract.
            drop(unsafe { take(ptr, kind, arg) }?);
        }
        Ok(NerveStatus::Ok)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_freed_or_foreign_handle_is_refused() {
        let event = give(7_u32, Kind::Event);
        // SAFETY: live, used by this thread alone.
        assert_eq!(unsafe { get(event, Kind::Event, "event") }.ok(), Some(&7));
        // SAFETY: as above.
        assert!(matches!(unsafe { get(event, Kind::Node, "node") }, Err(ApiError::InvalidHandle { .. })));
        // SAFETY: as above.
        drop(unsafe { take(event, Kind::Event, "event") });
        // SAFETY: the registry refuses it before it is read.
        assert!(matches!(unsafe { get(event, Kind::Event, "event") }, Err(ApiError::InvalidHandle { .. })));
        // SAFETY: as above.
        assert!(matches!(unsafe { take(event, Kind::Event, "event") }, Err(ApiError::InvalidHandle { .. })));
        // SAFETY: NULL is refused first.
        assert!(matches!(unsafe { get(std::ptr::null::<u32>(), Kind::Event, "event") }, Err(ApiError::Null(_))));
    }
}

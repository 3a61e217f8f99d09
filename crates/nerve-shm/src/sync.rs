//! Locks that carry on past a panic of another holder: the one place nerve decides what a
//! poisoned lock means.
//!
//! A `std::sync::Mutex` is *poisoned* when a thread panics while holding it, and from then on
//! every `lock()` returns an error. Poisoning guards no memory safety — the data behind the lock
//! is valid whatever the panicking thread did — only invariants that a panic could leave half
//! updated. nerve's shared state has none of those: every change made under one of its locks is
//! a single step (insert, remove, replace, take, push) that leaves the data consistent between
//! statements, and callbacks written by users (the usual source of a panic) run without any of
//! nerve's locks held, or are caught. Going on with the data as it stands is therefore sound,
//! while refusing would turn one panic into a panic of every thread that touches the lock: a
//! node's control thread, a runtime's event loop, a subscriber's reader.
//!
//! A new lock whose critical section updates several things that must agree should not use
//! these helpers, or should restore its invariant before it can panic.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use nerve_shm::sync::lock;
//!
//! let shared = Arc::new(Mutex::new(vec![1]));
//! let other = shared.clone();
//! // A thread panics while it holds the lock: the mutex is poisoned now.
//! let _ = std::thread::spawn(move || {
//!     let _held = other.lock();
//!     panic!("boom");
//! })
//! .join();
//! assert!(shared.is_poisoned());
//! lock(&shared).push(2);
//! assert_eq!(*lock(&shared), [1, 2]);
//! ```

use std::sync::{Condvar, LockResult, Mutex, MutexGuard, PoisonError, WaitTimeoutResult};
use std::time::Duration;

/// What a lock operation hands over, poisoned or not (see the [module](self) for why that is
/// sound): for the forms [`lock`] and [`wait_timeout`] do not cover, such as
/// `Mutex::into_inner`.
pub fn recover<G>(result: LockResult<G>) -> G {
    result.unwrap_or_else(PoisonError::into_inner)
}

/// Locks `m`, carrying on past a panic of another holder (see the [module](self)).
pub fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    recover(m.lock())
}

/// Waits on `changed` for at most `timeout`, as `Condvar::wait_timeout`, carrying on past a
/// panic of another holder of the lock (see the [module](self)).
pub fn wait_timeout<'a, T>(
    changed: &Condvar,
    guard: MutexGuard<'a, T>,
    timeout: Duration,
) -> (MutexGuard<'a, T>, WaitTimeoutResult) {
    recover(changed.wait_timeout(guard, timeout))
}

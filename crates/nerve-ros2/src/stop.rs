//! Threads that run until what started them is dropped.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Asks the thread it was made for to end, when dropped.
pub(crate) struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// What the thread looks at between its steps.
#[derive(Clone)]
pub(crate) struct Stop(Arc<AtomicBool>);

impl Stop {
    /// Whether the [`StopOnDrop`] was dropped.
    pub(crate) fn requested(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// A request to stop, made when the first value is dropped, and what the thread looks at.
pub(crate) fn stop_on_drop() -> (StopOnDrop, Stop) {
    let flag = Arc::new(AtomicBool::new(false));
    (StopOnDrop(Arc::clone(&flag)), Stop(flag))
}

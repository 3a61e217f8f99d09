//! Servers and callback subscribers, closed as the program exits, before the interpreter shuts
//! down. Their threads are nerve's, and they call into Python; one that asks for the
//! interpreter once it is shutting down is ended mid-call by it, which aborts the process.

use std::sync::{Arc, Mutex, MutexGuard, Weak};

use nerve_shm::sync::lock;
use pyo3::prelude::*;

/// What is closed by taking it out of its slot and dropping it.
trait Close: Send + Sync {
    fn close(&self);
}

impl<T: Send> Close for Mutex<Option<T>> {
    fn close(&self) {
        drop(lock(self).take());
    }
}

/// The slots to close at exit; those already dropped are skipped.
static OPEN: Mutex<Vec<Weak<dyn Close>>> = Mutex::new(Vec::new());

/// Holds a server or a subscriber's callbacks until closed: by `close`, when collected, or at
/// exit, whichever comes first.
pub(crate) struct Slot<T: Send + 'static>(Arc<Mutex<Option<T>>>);

impl<T: Send + 'static> Slot<T> {
    /// `value`, closed at exit if it is still open then.
    pub(crate) fn new(value: T) -> Self {
        let slot = Arc::new(Mutex::new(Some(value)));
        let mut open = lock(&OPEN);
        open.retain(|s| s.strong_count() > 0);
        open.push(Arc::downgrade(&slot) as Weak<dyn Close>);
        Self(slot)
    }

    /// What the slot holds, `None` once closed.
    pub(crate) fn get(&self) -> MutexGuard<'_, Option<T>> {
        lock(&self.0)
    }

    /// Drops what the slot holds without the GIL: its threads may be waiting for it to finish
    /// a call.
    pub(crate) fn close(&self, py: Python<'_>) {
        let held = self.get().take();
        py.detach(|| drop(held));
    }
}

impl<T: Send + 'static> Drop for Slot<T> {
    fn drop(&mut self) {
        // Collected by Python, so this thread holds the GIL already.
        Python::attach(|py| self.close(py));
    }
}

/// Closes every slot still open (registered with `atexit`).
#[pyfunction]
fn close_all(py: Python<'_>) {
    let open = std::mem::take(&mut *lock(&OPEN));
    py.detach(|| open.iter().filter_map(Weak::upgrade).for_each(|slot| slot.close()));
}

/// Has [`close_all`] run at exit.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let close_all = wrap_pyfunction!(close_all, m)?;
    m.py().import("atexit")?.call_method1("register", (close_all,))?;
    Ok(())
}

//! Waits that Python can interrupt: a long wait is cut into short ones with the GIL released,
//! and Ctrl-C is looked for between them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// How long a wait may go without checking for Ctrl-C in the Python process.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// What one short wait gave.
pub(crate) enum Waited<T> {
    /// Something arrived.
    Got(T),
    /// Nothing ever will (the stream ended).
    Ended,
    /// Nothing yet.
    Nothing,
}

/// The end of a wait of `timeout` seconds from now (none for `None`: forever).
///
/// # Errors
/// A negative or non-finite timeout.
pub(crate) fn deadline(timeout: Option<f64>) -> PyResult<Option<Instant>> {
    match timeout {
        None => Ok(None),
        Some(t) if t.is_finite() && t >= 0.0 => Ok(Some(Instant::now() + Duration::from_secs_f64(t))),
        Some(t) => Err(PyValueError::new_err(format!("timeout must be a non-negative number, got {t}"))),
    }
}

/// Calls `wait` with short timeouts until it gives something, the stream ends, or `timeout`
/// seconds pass (forever with `None`); `None` on timeout or end.
///
/// # Errors
/// A negative or non-finite timeout; what `wait` raises; `KeyboardInterrupt` on Ctrl-C.
pub(crate) fn interruptible<T>(
    py: Python<'_>,
    timeout: Option<f64>,
    mut wait: impl FnMut(Duration) -> PyResult<Waited<T>>,
) -> PyResult<Option<T>> {
    let deadline = deadline(timeout)?;
    loop {
        let chunk = match deadline {
            None => SIGNAL_CHECK,
            Some(d) => d.saturating_duration_since(Instant::now()).min(SIGNAL_CHECK),
        };
        match wait(chunk)? {
            Waited::Got(v) => return Ok(Some(v)),
            Waited::Ended => return Ok(None),
            Waited::Nothing => {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    return Ok(None);
                }
                py.check_signals()?;
            }
        }
    }
}

/// Waits up to `timeout` seconds (forever with `None`) until `reached` — itself a wait of at
/// most the time it is given, without the GIL — says yes; `false` when the time ran out.
///
/// # Errors
/// A negative or non-finite timeout; `KeyboardInterrupt` on Ctrl-C.
pub(crate) fn wait_until(
    py: Python<'_>,
    timeout: Option<f64>,
    reached: impl Fn(Duration) -> bool + Sync,
) -> PyResult<bool> {
    let got = interruptible(py, timeout, |chunk| {
        Ok(if py.detach(|| reached(chunk)) { Waited::Got(()) } else { Waited::Nothing })
    })?;
    Ok(got.is_some())
}

/// Whether a reader's last wait slept until its message came, so that it can let the readers
/// woken with it go first ([`WokenTogether::yield_first`]).
#[derive(Debug, Default)]
pub(crate) struct WokenTogether(AtomicBool);

impl WokenTogether {
    /// Records whether the wait that just ended slept (`EventStream::take_slept`).
    pub(crate) fn set(&self, slept: bool) {
        self.0.store(slept, Ordering::Relaxed);
    }

    /// After a wait that slept, yields the CPU once (`sched_yield`: it returns at once when
    /// nothing else waits for this core). Called when the reader is done with the message that
    /// woke it and is about to do work on nobody's latency path (the imports ahead). One message
    /// often wakes several readers; with fewer cores than readers, those not running yet wait
    /// for a core, and without the yield they waited for that work too (fan-out 1→4 at 4 MiB:
    /// about half the spread between readers).
    pub(crate) fn yield_first(&self, py: Python<'_>) {
        if self.0.swap(false, Ordering::Relaxed) {
            py.detach(std::thread::yield_now);
        }
    }
}

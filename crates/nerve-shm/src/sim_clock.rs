//! A run's simulated clock: one time word in shared memory that every node of the run reads.
//!
//! `nerve run --sim-time` creates it at zero; a node driving the simulation (a simulator, or
//! `nerve replay`'s replayers) sets it, and every other node's time and timers follow. Each
//! change rings the clock's doorbell, so a node waiting for its next timer tick sleeps until
//! the time actually moves rather than polling.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::clock::wall_ns;

use crate::doorbell::Doorbell;
use crate::error::ShmError;
use crate::segment::{Access, Segment};

const MAGIC: u64 = 0x4e45_5256_434c_4f4b; // "NERVCLOK"
/// Layout version of the clock segment; bumped on any change to its layout.
const CLOCK_VERSION: u32 = 1;

#[repr(C, align(64))]
struct ClockWords {
    magic: AtomicU64,
    version: AtomicU32,
    now_ns: AtomicU64,
    doorbell: Doorbell,
}

/// A mapped simulated clock.
#[derive(Debug)]
pub struct SimClock {
    segment: Segment,
}

impl SimClock {
    /// Creates the clock named `name`, reading zero.
    ///
    /// # Errors
    /// When the segment cannot be created.
    pub fn create(name: &str) -> Result<Self, ShmError> {
        let clock = Self { segment: Segment::create(name, std::mem::size_of::<ClockWords>(), true)? };
        let w = clock.words();
        w.now_ns.store(0, Ordering::Relaxed);
        w.version.store(CLOCK_VERSION, Ordering::Relaxed);
        w.magic.store(MAGIC, Ordering::Release);
        Ok(clock)
    }

    /// Maps the existing clock named `name`.
    ///
    /// # Errors
    /// When it is missing or is not a clock of this version.
    pub fn open(name: &str) -> Result<Self, ShmError> {
        let segment = Segment::open(name, Access::ReadWrite)?;
        let bad = || ShmError::BadHeader { name: name.to_owned(), what: "simulated clock" };
        if segment.len() < std::mem::size_of::<ClockWords>() {
            return Err(bad());
        }
        let clock = Self { segment };
        let w = clock.words();
        if w.magic.load(Ordering::Acquire) != MAGIC || w.version.load(Ordering::Relaxed) != CLOCK_VERSION {
            return Err(bad());
        }
        Ok(clock)
    }

    fn words(&self) -> &ClockWords {
        // SAFETY: the segment is at least `ClockWords` long (checked or created so), page
        // aligned, and holds only atomics.
        unsafe { &*self.segment.as_ptr().cast::<ClockWords>() }
    }

    /// The simulated time, in nanoseconds.
    #[must_use]
    pub fn now_ns(&self) -> u64 {
        self.words().now_ns.load(Ordering::Acquire)
    }

    /// Sets the simulated time and wakes every process waiting for it to move.
    ///
    /// Time may go back (a replay that loops); readers' timers restart from the new time.
    pub fn set_ns(&self, ns: u64) {
        let w = self.words();
        w.now_ns.store(ns, Ordering::Release);
        w.doorbell.ring();
    }

    /// Waits until `ready` holds, checking it again each time the clock is set, or until
    /// `deadline` (wall time) passes.
    pub fn wait_until<T>(&self, deadline: Option<Instant>, ready: impl FnMut() -> Option<T>) -> Option<T> {
        self.words().doorbell.wait_until(deadline, Duration::ZERO, ready)
    }
}

/// The simulated clock of the run this process is a node of, once its node joined.
static PROCESS_CLOCK: OnceLock<Arc<SimClock>> = OnceLock::new();

/// Makes `clock` this process's time: a node of a `--sim-time` run calls it as it joins, so
/// code that stamps without a node at hand (transforms, for one) follows the run's time too.
/// A process is a node of one run at most; a second call changes nothing.
pub fn set_process_clock(clock: Arc<SimClock>) {
    let _ = PROCESS_CLOCK.set(clock);
}

/// nerve's time in this process, in nanoseconds: the run's simulated time in a node of a
/// `--sim-time` run, else the wall clock (since the Unix epoch).
#[must_use]
pub fn process_now_ns() -> u64 {
    PROCESS_CLOCK.get().map_or_else(wall_ns, |c| c.now_ns())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_setter_wakes_a_waiter_in_another_mapping() {
        let name = format!("nerve.simclock-test{}", std::process::id());
        let clock = SimClock::create(&name).expect("create");
        let other = Arc::new(SimClock::open(&name).expect("open"));
        assert_eq!(other.now_ns(), 0);
        let (seen_tx, seen) = std::sync::mpsc::channel();
        let (tx, rx) = std::sync::mpsc::channel();
        {
            let other = other.clone();
            // No deadline: only a set ends this wait. Not joined: a waiter left asleep fails
            // the test below instead of hanging it.
            std::thread::spawn(move || {
                let got = other.wait_until(None, || {
                    let now = other.now_ns();
                    let _ = seen_tx.send(now);
                    (now >= 5_000).then_some(now)
                });
                tx.send(got).expect("the test waits");
            });
        }
        let asleep = || {
            while clock.words().doorbell.sleepers() == 0 {
                std::thread::yield_now();
            }
        };
        asleep();
        clock.set_ns(1_000);
        // Woken for a time it does not wait for yet, the waiter sleeps again.
        let woken = || seen.recv_timeout(Duration::from_secs(20)).expect("the waiter was woken");
        while woken() != 1_000 {}
        asleep();
        clock.set_ns(7_000);
        assert_eq!(rx.recv_timeout(Duration::from_secs(20)).expect("the waiter was woken"), Some(7_000));
        clock.segment.unlink();
    }

    #[test]
    fn refuses_a_segment_that_is_not_a_clock() {
        let name = format!("nerve.simclock-bad{}", std::process::id());
        let seg = Segment::create(&name, 4096, false).expect("create");
        assert!(matches!(SimClock::open(&name), Err(ShmError::BadHeader { .. })));
        seg.unlink();
    }
}

//! A node's time: the wall clock by default, the run's simulated time under `--sim-time`.
//!
//! Timers follow the same clock. In real time they tick on `CLOCK_MONOTONIC`, so an NTP step
//! of the wall clock neither bursts nor stalls them; in simulated time they tick when the
//! shared time passes their deadline, however fast or slow it moves.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nerve_shm::clock::{monotonic_ns, wall_ns};
use nerve_shm::inbox::Inbox;
use nerve_shm::names::RunNames;
use nerve_shm::sim_clock::{SimClock, set_process_clock};

use crate::error::NodeError;

/// The time a node reads: cheap to clone, shared by a node and its event stream.
#[derive(Debug, Clone)]
pub struct Clock {
    sim: Option<Arc<SimClock>>,
}

impl Clock {
    /// The wall clock.
    #[must_use]
    pub fn real() -> Self {
        Self { sim: None }
    }

    /// The clock of a run: its shared simulated clock when `sim_time` is set.
    pub(crate) fn of_run(names: &RunNames, sim_time: bool) -> Result<Self, NodeError> {
        if !sim_time {
            return Ok(Self::real());
        }
        let sim = Arc::new(SimClock::open(&names.clock())?);
        set_process_clock(sim.clone());
        Ok(Self { sim: Some(sim) })
    }

    /// Now, in nanoseconds: since the Unix epoch on the wall clock, or the run's simulated time.
    #[must_use]
    pub fn now_ns(&self) -> u64 {
        self.sim.as_ref().map_or_else(wall_ns, |c| c.now_ns())
    }

    /// Whether this clock is the run's simulated time.
    #[must_use]
    pub fn is_simulated(&self) -> bool {
        self.sim.is_some()
    }

    /// Sets the run's simulated time; every node's clock and timers follow.
    ///
    /// # Errors
    /// [`NodeError::NotSimTime`] when the run keeps real time.
    pub fn set_sim_time(&self, ns: u64) -> Result<(), NodeError> {
        let clock = self.sim.as_ref().ok_or(NodeError::NotSimTime)?;
        clock.set_ns(ns);
        Ok(())
    }

    /// The time timers tick on: monotonic in real time, else the simulated time.
    pub(crate) fn timer_ns(&self) -> u64 {
        self.sim.as_ref().map_or_else(monotonic_ns, |c| c.now_ns())
    }

    /// The wall instant by which a timer due at `due_ns` (on [`Clock::timer_ns`]) must wake the
    /// node; `None` in simulated time, where a [`TimerWatch`] rings the node instead.
    pub(crate) fn wake_at(&self, due_ns: u64) -> Option<Instant> {
        if self.sim.is_some() {
            return None;
        }
        Some(Instant::now() + Duration::from_nanos(due_ns.saturating_sub(monotonic_ns())))
    }
}

/// In simulated time, rings a node's doorbell when the shared time reaches its next timer tick,
/// so the node sleeps on one doorbell for data and timers alike.
pub(crate) struct TimerWatch {
    /// The node's earliest timer deadline (`u64::MAX`: none).
    next: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
}

impl TimerWatch {
    /// Starts watching `clock` for the deadlines published through [`TimerWatch::set_next`];
    /// `None` in real time.
    pub(crate) fn start(clock: &Clock, inbox: Arc<Inbox>) -> Result<Option<Self>, NodeError> {
        let Some(sim) = clock.sim.clone() else { return Ok(None) };
        let next = Arc::new(AtomicU64::new(u64::MAX));
        let done = Arc::new(AtomicBool::new(false));
        let (watch_next, watch_done) = (next.clone(), done.clone());
        std::thread::Builder::new()
            .name("nerve-sim-timers".into())
            .spawn(move || {
                let mut rung = u64::MAX;
                while !watch_done.load(Ordering::Acquire) {
                    // Wakes on every change of the time; the timeout only notices the stream's end.
                    let due = sim.wait_until(Some(Instant::now() + Duration::from_millis(200)), || {
                        let due = watch_next.load(Ordering::Acquire);
                        (due != rung && sim.now_ns() >= due).then_some(due)
                    });
                    if let Some(due) = due {
                        rung = due;
                        inbox.doorbell().ring();
                    }
                }
            })
            .map_err(|e| NodeError::Control(e.into()))?;
        Ok(Some(Self { next, done }))
    }

    /// Publishes the node's earliest timer deadline.
    pub(crate) fn set_next(&self, due_ns: u64) {
        self.next.store(due_ns, Ordering::Release);
    }
}

impl Drop for TimerWatch {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Release);
    }
}

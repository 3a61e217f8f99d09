//! One wake-up word per node: an event count over a futex in shared memory.
//!
//! Every producer that queues a message for a node, and the node's own control thread, rings
//! the node's doorbell; the node sleeps on it for all its inputs at once. A ring costs one
//! atomic add, plus a `futex_wake` system call only while someone is asleep.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use rustix::thread::futex;

/// How long a waiter polls before it sleeps, by default: long enough to drain a busy stream
/// without a system call per message, far too short to matter for CPU use at robot rates.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(20);

/// Environment variable that sets the poll before sleeping, in microseconds (per node in a
/// dataflow's `env:`, or for a whole program): longer for hard real-time readers, up to busy
/// polling.
pub const SPIN_ENV: &str = "NERVE_SPIN_US";

/// The poll before sleeping: [`SPIN_ENV`] if set to a number, else [`DEFAULT_SPIN`].
#[must_use]
pub fn spin_from_env() -> Duration {
    std::env::var(SPIN_ENV).ok().and_then(|v| v.parse::<u64>().ok()).map_or(DEFAULT_SPIN, Duration::from_micros)
}

/// The two words of a doorbell, as laid out in shared memory.
#[derive(Debug)]
#[repr(C)]
pub struct Doorbell {
    count: AtomicU32,
    sleepers: AtomicU32,
}

impl Doorbell {
    /// Signals that something changed; wakes every sleeper. Returns whether a sleeper was
    /// woken.
    pub fn ring(&self) -> bool {
        self.count.fetch_add(1, Ordering::SeqCst);
        // Waking may only fail on a bad address, which a live mapping cannot have.
        self.sleepers.load(Ordering::SeqCst) != 0
            && futex::wake(&self.count, futex::Flags::empty(), u32::MAX).is_ok_and(|woken| woken > 0)
    }

    /// Waits until `ready` returns `Some`, the doorbell rings and `ready` then holds, or the
    /// deadline passes (`None`).
    ///
    /// `spin` polls `ready` that long before sleeping: it trades a core for lower latency.
    pub fn wait_until<T>(
        &self,
        deadline: Option<Instant>,
        spin: Duration,
        mut ready: impl FnMut() -> Option<T>,
    ) -> Option<T> {
        if let Some(v) = ready() {
            return Some(v);
        }
        if !spin.is_zero() {
            let spin_end = Instant::now() + spin;
            while Instant::now() < spin_end {
                if let Some(v) = ready() {
                    return Some(v);
                }
                std::hint::spin_loop();
            }
        }
        loop {
            self.sleepers.fetch_add(1, Ordering::SeqCst);
            let seen = self.count.load(Ordering::SeqCst);
            // Re-checked after announcing ourselves: a ring after this point either changes
            // `count` (the futex returns at once) or sees us in `sleepers` and wakes us.
            if let Some(v) = ready() {
                self.sleepers.fetch_sub(1, Ordering::SeqCst);
                return Some(v);
            }
            let timeout = match deadline {
                None => None,
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        self.sleepers.fetch_sub(1, Ordering::SeqCst);
                        return None;
                    }
                    Some(d - now)
                }
            };
            let ts = timeout.map(|t| rustix::fs::Timespec {
                tv_sec: i64::try_from(t.as_secs()).unwrap_or(i64::MAX),
                tv_nsec: i64::from(t.subsec_nanos()),
            });
            // EAGAIN (count moved), EINTR and ETIMEDOUT all lead back to the checks above.
            let _ = futex::wait(&self.count, futex::Flags::empty(), seen, ts.as_ref());
            self.sleepers.fetch_sub(1, Ordering::SeqCst);
            if let Some(v) = ready() {
                return Some(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn wakes_a_sleeper_from_another_thread() {
        let bell = Arc::new(Doorbell { count: AtomicU32::new(0), sleepers: AtomicU32::new(0) });
        let flag = Arc::new(AtomicBool::new(false));
        let (b, f) = (bell.clone(), flag.clone());
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            f.store(true, Ordering::SeqCst);
            b.ring();
        });
        let got = bell.wait_until(None, Duration::ZERO, || flag.load(Ordering::SeqCst).then_some(()));
        assert_eq!(got, Some(()));
        t.join().expect("ringer thread");
    }

    #[test]
    fn times_out_when_nothing_rings() {
        let bell = Doorbell { count: AtomicU32::new(0), sleepers: AtomicU32::new(0) };
        let start = Instant::now();
        let got: Option<()> = bell.wait_until(Some(start + Duration::from_millis(30)), Duration::ZERO, || None);
        assert!(got.is_none());
        assert!(start.elapsed() >= Duration::from_millis(30));
    }
}

//! One wake-up word per node: an event count over a futex in shared memory.
//!
//! Every producer that queues a message for a node, and the node's own control thread, rings
//! the node's doorbell; the node sleeps on it for all its inputs at once. A ring costs one
//! atomic add, plus a `futex_wake` system call only while someone is asleep.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use rustix::thread::futex;

/// How long a waiter polls before it sleeps, by default, while its recent waits were short (see
/// [`Spin`]): long enough to drain a busy stream without a system call per message.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(20);

/// Environment variable that sets the poll before sleeping, in microseconds (per node in a
/// dataflow's `env:`, or for a whole program): longer for hard real-time readers, up to busy
/// polling. Set, it applies before every sleep.
pub const SPIN_ENV: &str = "NERVE_SPIN_US";

/// How long one waiter polls before it sleeps.
///
/// Polling pays only when what is waited for comes within the poll, as in a busy stream. A
/// reader of a 50 Hz stream would burn the whole poll before every sleep for nothing: 20 µs of
/// CPU per message, taken (on a machine with few cores) from the other readers of the same
/// message. So by default the poll is used only while the previous wait ended within it; a
/// poll the user asks for ([`SPIN_ENV`], [`Spin::fixed`]) always applies.
///
/// It also remembers whether a wait slept until what it waited for arrived
/// ([`Spin::take_slept`]): such a reader may be one of several woken by the same message.
#[derive(Debug)]
pub struct Spin {
    limit: Duration,
    always: bool,
    last_was_short: AtomicBool,
    slept: AtomicBool,
}

impl Spin {
    /// [`SPIN_ENV`] if set to a number (always applied), else [`DEFAULT_SPIN`] (while useful).
    #[must_use]
    pub fn from_env() -> Self {
        match std::env::var(SPIN_ENV).ok().and_then(|v| v.parse::<u64>().ok()) {
            Some(us) => Self::fixed(Duration::from_micros(us)),
            None => Self::adaptive(),
        }
    }

    /// [`DEFAULT_SPIN`], while the previous wait ended within it.
    fn adaptive() -> Self {
        Self {
            limit: DEFAULT_SPIN,
            always: false,
            last_was_short: AtomicBool::new(true),
            slept: AtomicBool::new(false),
        }
    }

    /// A poll of `limit` before every sleep.
    #[must_use]
    pub fn fixed(limit: Duration) -> Self {
        Self { limit, always: true, last_was_short: AtomicBool::new(true), slept: AtomicBool::new(false) }
    }

    /// The poll the next wait gets.
    #[must_use]
    pub fn next(&self) -> Duration {
        if self.always || self.last_was_short.load(Ordering::Relaxed) { self.limit } else { Duration::ZERO }
    }

    /// [`Doorbell::wait_until`] with the poll this waiter's last wait calls for.
    pub fn wait<T>(
        &self,
        doorbell: &Doorbell,
        deadline: Option<Instant>,
        ready: impl FnMut() -> Option<T>,
    ) -> Option<T> {
        let started = Instant::now();
        let got = doorbell.wait_until(deadline, self.next(), ready);
        // Past the poll, the waiter was asleep on the doorbell when what it waited for came.
        let short = started.elapsed() <= self.limit;
        self.slept.store(got.is_some() && !short, Ordering::Relaxed);
        if !self.always {
            self.last_was_short.store(got.is_some() && short, Ordering::Relaxed);
        }
        got
    }

    /// Whether the last wait slept until what it waited for arrived, if not asked since: a
    /// caller that found its work without waiting gets `false`, not an older wait's answer.
    #[must_use]
    pub fn take_slept(&self) -> bool {
        self.slept.swap(false, Ordering::Relaxed)
    }
}

/// Waiters one `futex_wake` wakes: all. The kernel reads the number as a signed int, so
/// `u32::MAX` would be -1, which wakes one: a doorbell with two sleepers (a node's event wait and
/// its wait for room in a reader's queue, or several nodes on the simulated clock) woke one of
/// them per ring.
const WAKE_ALL: u32 = i32::MAX.unsigned_abs();

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
            && futex::wake(&self.count, futex::Flags::empty(), WAKE_ALL).is_ok_and(|woken| woken > 0)
    }

    /// Waiters asleep on the doorbell right now.
    #[must_use]
    pub fn sleepers(&self) -> u32 {
        self.sleepers.load(Ordering::SeqCst)
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

    /// Spins until `n` threads sleep on `bell`.
    fn until_asleep(bell: &Doorbell, n: u32) {
        while bell.sleepers() < n {
            std::thread::yield_now();
        }
    }

    #[test]
    fn wakes_a_sleeper_from_another_thread() {
        let bell = Arc::new(Doorbell { count: AtomicU32::new(0), sleepers: AtomicU32::new(0) });
        let flag = Arc::new(AtomicBool::new(false));
        let (b, f) = (bell.clone(), flag.clone());
        let t = std::thread::spawn(move || {
            until_asleep(&b, 1);
            f.store(true, Ordering::SeqCst);
            b.ring();
        });
        let got = bell.wait_until(None, Duration::ZERO, || flag.load(Ordering::SeqCst).then_some(()));
        assert_eq!(got, Some(()));
        t.join().expect("ringer thread");
    }

    #[test]
    fn one_ring_wakes_every_sleeper() {
        let bell = Arc::new(Doorbell { count: AtomicU32::new(0), sleepers: AtomicU32::new(0) });
        let flag = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..3 {
            let (b, f, tx) = (bell.clone(), flag.clone(), tx.clone());
            // No deadline: only a ring ends these waits. Not joined: a sleeper left asleep
            // fails the test below instead of hanging it.
            std::thread::spawn(move || {
                let got = b.wait_until(None, Duration::ZERO, || f.load(Ordering::SeqCst).then_some(()));
                tx.send(got).expect("the test waits");
            });
        }
        until_asleep(&bell, 3);
        flag.store(true, Ordering::SeqCst);
        assert!(bell.ring());
        for _ in 0..3 {
            let got = rx.recv_timeout(Duration::from_secs(20)).expect("every sleeper woken by the one ring");
            assert_eq!(got, Some(()));
        }
    }

    #[test]
    fn times_out_when_nothing_rings() {
        let bell = Doorbell { count: AtomicU32::new(0), sleepers: AtomicU32::new(0) };
        let start = Instant::now();
        let got: Option<()> = bell.wait_until(Some(start + Duration::from_millis(30)), Duration::ZERO, || None);
        assert!(got.is_none());
        assert!(start.elapsed() >= Duration::from_millis(30));
    }

    #[test]
    fn the_default_poll_stops_after_a_long_wait_and_resumes_after_a_short_one() {
        let bell = Doorbell { count: AtomicU32::new(0), sleepers: AtomicU32::new(0) };
        let spin = Spin::adaptive();
        assert_eq!(spin.next(), DEFAULT_SPIN);
        let got: Option<()> = spin.wait(&bell, Some(Instant::now() + Duration::from_millis(5)), || None);
        assert!(got.is_none());
        assert_eq!(spin.next(), Duration::ZERO, "a wait of 5 ms made polling pointless");
        assert_eq!(spin.wait(&bell, None, || Some(())), Some(()));
        assert_eq!(spin.next(), DEFAULT_SPIN, "something ready at once: a busy stream polls again");
        let fixed = Spin::fixed(Duration::from_micros(50));
        let _: Option<()> = fixed.wait(&bell, Some(Instant::now() + Duration::from_millis(1)), || None);
        assert_eq!(fixed.next(), Duration::from_micros(50), "a poll the user asked for always applies");
    }

    #[test]
    fn a_wait_that_slept_until_a_ring_is_told_apart_from_one_that_found_work() {
        let bell = Arc::new(Doorbell { count: AtomicU32::new(0), sleepers: AtomicU32::new(0) });
        let flag = Arc::new(AtomicBool::new(false));
        let spin = Spin::adaptive();
        assert_eq!(spin.wait(&bell, None, || Some(())), Some(()));
        assert!(!spin.take_slept(), "work was there: no sleep");
        let (b, f) = (bell.clone(), flag.clone());
        let ringer = std::thread::spawn(move || {
            until_asleep(&b, 1);
            f.store(true, Ordering::SeqCst);
            b.ring();
        });
        assert_eq!(spin.wait(&bell, None, || flag.load(Ordering::SeqCst).then_some(())), Some(()));
        ringer.join().expect("ringer thread");
        assert!(spin.take_slept(), "woken by the ring, after it slept");
        assert!(!spin.take_slept(), "told once: the next message may come without a wait");
        let _: Option<()> = spin.wait(&bell, Some(Instant::now() + Duration::from_millis(5)), || None);
        assert!(!spin.take_slept(), "a wait that timed out was not woken by anything");
    }
}

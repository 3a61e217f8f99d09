//! Telling a publisher that a subscriber joined, so it can send what late joiners must not miss.
//!
//! A topic keeps no history: a subscriber that starts after a message was sent never sees it.
//! Data that stays true until replaced (a map, a calibration, static transforms) must reach
//! late subscribers anyway: a latched publisher ([`crate::PublisherOptions::latched`]) hands its
//! last message to each. [`Arrivals`] counts the subscribers that joined a publisher — in
//! this process, linked from another process of the host, or announced by another host — and
//! wakes whoever waits for the next one ([`crate::Publisher::wait_for_subscribers`], or code
//! that sends more than the last message again).

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use nerve_shm::sync::{lock, wait_timeout};

/// Subscribers that joined one publisher so far; see [`crate::Publisher::arrivals`].
#[derive(Debug, Default)]
pub struct Arrivals {
    count: Mutex<u64>,
    joined: Condvar,
}

impl Arrivals {
    /// One more subscriber can receive what the publisher sends from now on.
    pub(crate) fn note(&self) {
        *lock(&self.count) += 1;
        self.joined.notify_all();
    }

    /// Subscribers that joined since the publisher started (none ever leave this count).
    #[must_use]
    pub fn count(&self) -> u64 {
        *lock(&self.count)
    }

    /// Waits up to `timeout` until more than `seen` subscribers have joined; returns the count
    /// then (still `seen` when the time ran out).
    #[must_use]
    pub fn wait_past(&self, seen: u64, timeout: Duration) -> u64 {
        let deadline = Instant::now() + timeout;
        let mut count = lock(&self.count);
        while *count <= seen {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            count = wait_timeout(&self.joined, count, left).0;
        }
        *count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_waiter_wakes_on_the_next_arrival_and_not_before() {
        let arrivals = Arc::new(Arrivals::default());
        assert_eq!(arrivals.wait_past(0, Duration::from_millis(20)), 0);
        let noting = arrivals.clone();
        let joiner = std::thread::spawn(move || noting.note());
        assert_eq!(arrivals.wait_past(0, Duration::from_secs(30)), 1);
        assert!(joiner.join().is_ok());
        assert_eq!(arrivals.count(), 1);
    }
}

//! Sending recorded messages again, paced as they were recorded.

use std::time::{Duration, Instant};

use crate::reader::Recorded;

/// Longest sleep between two looks at the stop flag while waiting for a message's time.
const STOP_CHECK: Duration = Duration::from_millis(20);

/// How to replay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pace {
    /// Recorded time divided by this; 0 sends as fast as the receivers take them.
    pub speed: f64,
    /// Start again from the first message after the last (until stopped).
    pub looped: bool,
}

impl Default for Pace {
    fn default() -> Self {
        Self { speed: 1.0, looped: false }
    }
}

/// Sends `messages` (in log-time order) with `send`, each when as much time has passed since
/// the first as passed in the recording, divided by the speed. This is the one place where a
/// replayed message's recorded log time and its send meet, so a simulated clock can be driven
/// from here.
///
/// Returns the messages sent, once all were (each pass, with `looped`) or `stopped()` says so.
///
/// # Errors
/// The first error of `send`; nothing more is sent after it.
pub fn replay<E>(
    messages: &[Recorded<'_>],
    pace: Pace,
    stopped: &dyn Fn() -> bool,
    mut send: impl FnMut(&Recorded<'_>) -> Result<(), E>,
) -> Result<u64, E> {
    let Some(first) = messages.first().map(|m| m.log_time) else {
        return Ok(0);
    };
    let mut sent = 0;
    loop {
        let start = Instant::now();
        for m in messages {
            if pace.speed > 0.0 {
                // Float nanoseconds lose nothing that matters below a day of recording.
                let offset = Duration::from_nanos((m.log_time.saturating_sub(first) as f64 / pace.speed) as u64);
                sleep_until(start + offset, stopped);
            }
            if stopped() {
                return Ok(sent);
            }
            send(m)?;
            sent += 1;
        }
        if !pace.looped || stopped() {
            return Ok(sent);
        }
    }
}

fn sleep_until(at: Instant, stopped: &dyn Fn() -> bool) {
    loop {
        let now = Instant::now();
        if now >= at || stopped() {
            return;
        }
        std::thread::sleep((at - now).min(STOP_CHECK));
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::cell::Cell;

    use super::*;

    fn at(ms: u64) -> Recorded<'static> {
        Recorded {
            channel: "a/b",
            log_time: 1_700_000_000_000_000_000 + ms * 1_000_000,
            publish_time: 0,
            data: Cow::Borrowed(&[]),
        }
    }

    #[test]
    fn sends_in_order_paced_and_scaled() {
        let messages = [at(0), at(40), at(80)];
        for speed in [1.0, 2.0] {
            let start = Instant::now();
            let mut offsets = Vec::new();
            let sent = replay(&messages, Pace { speed, looped: false }, &|| false, |m| {
                offsets.push((m.log_time, start.elapsed()));
                Ok::<(), ()>(())
            });
            assert_eq!(sent, Ok(3));
            assert_eq!(
                offsets.iter().map(|o| o.0).collect::<Vec<_>>(),
                messages.iter().map(|m| m.log_time).collect::<Vec<_>>()
            );
            // Never early: the last message waits for its recorded offset divided by the speed.
            let due = Duration::from_millis((80.0 / speed) as u64);
            assert!(offsets[2].1 >= due, "speed {speed}: sent at {:?}, due at {due:?}", offsets[2].1);
        }
    }

    #[test]
    fn loops_until_stopped_and_stops_send_errors() {
        let messages = [at(0), at(1)];
        let count = Cell::new(0);
        let sent = replay(&messages, Pace { speed: 0.0, looped: true }, &|| count.get() >= 7, |_| {
            count.set(count.get() + 1);
            Ok::<(), ()>(())
        });
        assert_eq!(sent, Ok(7));
        let failed = replay(&messages, Pace::default(), &|| false, |_| Err("disk on fire"));
        assert_eq!(failed, Err("disk on fire"));
    }
}

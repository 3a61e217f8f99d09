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

impl Pace {
    /// When a message recorded `since_first_ns` after the first one is due: that long after
    /// the pass began, divided by the speed; `None` when nothing is paced (speed 0).
    #[must_use]
    pub fn due(&self, since_first_ns: u64) -> Option<Duration> {
        // Float nanoseconds lose nothing that matters below a day of recording.
        (self.speed > 0.0).then(|| Duration::from_nanos((since_first_ns as f64 / self.speed) as u64))
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
    send: impl FnMut(&Recorded<'_>) -> Result<(), E>,
) -> Result<u64, E> {
    let mut start = Instant::now();
    let wait = |due: Option<Duration>| match due {
        None => start = Instant::now(),
        Some(due) => sleep_until(start + due, stopped),
    };
    replay_with(messages, pace, stopped, wait, send)
}

/// [`replay`], which hands its waits to `wait`: `None` as a pass begins, then the time each
/// paced message is due after that.
fn replay_with<E>(
    messages: &[Recorded<'_>],
    pace: Pace,
    stopped: &dyn Fn() -> bool,
    mut wait: impl FnMut(Option<Duration>),
    mut send: impl FnMut(&Recorded<'_>) -> Result<(), E>,
) -> Result<u64, E> {
    let Some(first) = messages.first().map(|m| m.log_time) else {
        return Ok(0);
    };
    let mut sent = 0;
    loop {
        wait(None);
        for m in messages {
            if let Some(due) = pace.due(m.log_time.saturating_sub(first)) {
                wait(Some(due));
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
            cdr: None,
        }
    }

    #[test]
    fn sends_in_order_each_when_due_at_its_speed() {
        let messages = [at(0), at(40), at(80)];
        let ms = |ms: u64| Some(Duration::from_millis(ms));
        for (speed, due) in
            [(1.0, [ms(0), ms(40), ms(80)]), (2.0, [ms(0), ms(20), ms(40)]), (4.0, [ms(0), ms(10), ms(20)])]
        {
            // What the replay does, in order: each wait, then each send.
            let steps = std::cell::RefCell::new(Vec::new());
            let sent = replay_with(
                &messages,
                Pace { speed, looped: false },
                &|| false,
                |due| steps.borrow_mut().push(Step::Wait(due)),
                |m| {
                    steps.borrow_mut().push(Step::Send(m.log_time));
                    Ok::<(), ()>(())
                },
            );
            assert_eq!(sent, Ok(3));
            let mut expected = vec![Step::Wait(None)];
            for (m, due) in messages.iter().zip(due) {
                expected.extend([Step::Wait(due), Step::Send(m.log_time)]);
            }
            assert_eq!(steps.into_inner(), expected, "speed {speed}");
        }
        assert_eq!(Pace { speed: 0.0, looped: false }.due(80_000_000), None, "speed 0: nothing paced");
    }

    #[derive(Debug, PartialEq)]
    enum Step {
        Wait(Option<Duration>),
        Send(u64),
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

//! The clock every message is stamped with.

/// `CLOCK_MONOTONIC` in nanoseconds: the same clock as Python's `time.monotonic_ns()`, shared by
/// every process of the host.
#[must_use]
pub fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(t.tv_nsec).unwrap_or(0)
}

//! The clock every message is stamped with, and the wall clock nodes read by default.

/// `CLOCK_MONOTONIC` in nanoseconds: the same clock as Python's `time.monotonic_ns()`, shared by
/// every process of the host.
#[must_use]
pub fn monotonic_ns() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}

/// `CLOCK_REALTIME` in nanoseconds since the Unix epoch: the same clock as Python's
/// `time.time_ns()`, comparable between hosts as far as they are synchronised (NTP, PTP).
#[must_use]
pub fn wall_ns() -> u64 {
    read(libc::CLOCK_REALTIME)
}

fn read(clock: libc::clockid_t) -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid out-pointer. libc's clock_gettime (not a raw vDSO parser) keeps
    // nodes runnable under valgrind and other tools that rewrite the auxiliary vector.
    unsafe { libc::clock_gettime(clock, &raw mut t) };
    u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(t.tv_nsec).unwrap_or(0)
}

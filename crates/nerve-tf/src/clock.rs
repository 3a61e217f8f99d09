//! The time stamped on a transform when the caller gives none.

/// nerve's time in nanoseconds: the wall clock since the Unix epoch, or the run's simulated
/// time in a node of a `nerve run --sim-time` run. The one place the tree reads a clock.
pub(crate) fn now_ns() -> i64 {
    i64::try_from(nerve_shm::sim_clock::process_now_ns()).unwrap_or(i64::MAX)
}

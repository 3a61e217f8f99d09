//! The time stamped on a transform when the caller gives none.

use std::time::{SystemTime, UNIX_EPOCH};

/// Nanoseconds since the Unix epoch on the wall clock. The one place the tree reads a clock,
/// so pointing it at nerve's clock (simulated or replayed time) is a change here only.
pub(crate) fn now_ns() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        // A clock set before 1970: stamps go negative rather than wrong by a sign.
        Err(e) => i64::try_from(e.duration().as_nanos()).map_or(i64::MIN, |ns| -ns),
    }
}

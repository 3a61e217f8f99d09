//! Stage stamps of the receive path, for `benches/profile/breakdown.yml` (cargo feature
//! `profile-stages`; never in a normal build).
//!
//! A received message's metadata gets `_wake`, when the reader's wait returned, and `_decoded`,
//! when the Rust decode ended, both on [`monotonic_ns`]: beside the sender's `timestamp` they
//! split a message's latency into send, wake-up and decode. The Python binding adds the stages
//! after these (`nerve-python`'s `profile.rs`).

use std::cell::Cell;

use nerve_shm::clock::monotonic_ns;

use crate::Metadata;

thread_local! {
    // Per thread, not per stream: the stamp is taken inside `EventStream::wait` and read by the
    // decode that follows on the same thread, and the feature is for profiling only.
    static WOKE: Cell<u64> = const { Cell::new(0) };
}

/// Notes that the reader's wait just returned.
pub(crate) fn woke() {
    WOKE.set(monotonic_ns());
}

/// `metadata` with the wait's return and the end of the decode (now) written into it.
pub(crate) fn decoded(mut metadata: Metadata) -> Metadata {
    metadata.parameters.insert("_wake".into(), WOKE.get().into());
    metadata.parameters.insert("_decoded".into(), monotonic_ns().into());
    metadata
}

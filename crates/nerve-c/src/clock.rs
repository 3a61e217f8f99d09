//! The clock: a node's time (the run's simulated time under `nerve run --sim-time`), its timers,
//! and the monotonic clock of message stamps.

use std::ffi::{c_char, c_int};
use std::time::Duration;

use crate::args::{out, text};
use crate::error::{NerveStatus, guard};
use crate::handles::{self, Kind};
use crate::node::NerveNode;

/// Now on the node's clock, in nanoseconds, in `*ns`: since the Unix epoch on the wall clock, or
/// the run's simulated time under `nerve run --sim-time` (and the recording's in a replay).
///
/// Thread-safety: any thread.
///
/// # Safety
/// `node` is a live handle no other thread frees meanwhile; `ns` is valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_now_ns(node: *const NerveNode, ns: *mut u64) -> c_int {
    guard("nerve_node_now_ns", || {
        // SAFETY: as the caller promises.
        let (node, ns) = unsafe { (handles::get(node, Kind::Node, "node")?, out(ns, "ns")?) };
        ns.write(node.node.clock().now_ns());
        Ok(NerveStatus::Ok)
    })
}

/// Whether the node's clock is the run's simulated time (`nerve run --sim-time`), in `*simulated`.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `node` is a live handle no other thread frees meanwhile; `simulated` is valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_sim_time(node: *const NerveNode, simulated: *mut bool) -> c_int {
    guard("nerve_node_sim_time", || {
        // SAFETY: as the caller promises.
        let (node, simulated) = unsafe { (handles::get(node, Kind::Node, "node")?, out(simulated, "simulated")?) };
        simulated.write(node.node.clock().is_simulated());
        Ok(NerveStatus::Ok)
    })
}

/// Sets the run's simulated time to `ns`: every node's clock and timers follow. Fails with
/// `NERVE_STATUS_REFUSED` in a run that keeps real time (start it with `nerve run --sim-time`).
///
/// Thread-safety: any thread.
///
/// # Safety
/// `node` is a live handle no other thread frees meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_set_sim_time(node: *const NerveNode, ns: u64) -> c_int {
    guard("nerve_node_set_sim_time", || {
        // SAFETY: as the caller promises.
        unsafe { handles::get(node, Kind::Node, "node") }?.node.clock().set_sim_time(ns)?;
        Ok(NerveStatus::Ok)
    })
}

/// Adds a timer to the node's events: every `period_ns` nanoseconds on the node's clock, an
/// INPUT event with input id `id` and no value, as a `timer/...` input of the dataflow gives. A
/// tick missed while the node was busy is skipped, not made up. The timer lasts as long as the
/// node.
///
/// Fails with `NERVE_STATUS_INVALID_ARGUMENT` when an input or timer of the node already has the
/// id.
///
/// Thread-safety: any thread; it waits for a `nerve_node_next_event` under way on another
/// thread to return.
///
/// # Safety
/// `node` is a live handle no other thread frees meanwhile; `id` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_add_timer(node: *const NerveNode, id: *const c_char, period_ns: u64) -> c_int {
    guard("nerve_node_add_timer", || {
        // SAFETY: as the caller promises.
        let (node, id) = unsafe { (handles::get(node, Kind::Node, "node")?, text(id, "id")?) };
        node.add_timer(id, Duration::from_nanos(period_ns))?;
        Ok(NerveStatus::Ok)
    })
}

/// `CLOCK_MONOTONIC` in nanoseconds: the clock of message stamps (`nerve_event_timestamp`),
/// comparable across the processes of a host, for measuring latency. Needs no node.
///
/// Thread-safety: any thread.
#[unsafe(no_mangle)]
pub extern "C" fn nerve_monotonic_ns() -> u64 {
    nerve_node::monotonic_ns()
}

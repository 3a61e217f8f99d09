//! The nerve runtime on one host.
//!
//! [`run`] takes a validated [`nerve_spec::Dataflow`], creates every node's shared-memory
//! inbox and block tables, spawns the nodes in process groups of their own, hands each its
//! channel table over a Unix socket, starts them all at once when every one is ready, relays
//! their output to the terminal and the run's log folder, and tears everything down at the
//! end: stop events, a grace period, kills, and removal of every shared-memory object.
//!
//! The runtime is never in a message's path: nodes exchange data directly through shared
//! memory, and the runtime only sees registrations and exits.
//!
//! ```no_run
//! let df = nerve_spec::load(std::path::Path::new("dataflow.yml"))?;
//! let report = nerve_runtime::run(&df, &nerve_runtime::RunOptions::default())?;
//! assert!(report.success());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod control;
mod cpu_latency;
mod drops;
mod error;
mod event;
mod fetch;
pub mod inspect;
mod log_feeds;
mod logs;
mod params;
mod plan;
mod realtime;
mod reaper;
mod run;
mod spawn;

pub use control::{Readiness, RunControl};
pub use error::RuntimeError;
pub use logs::{LogEntry, LogTap, Stream, unstamp};
/// Parameter requests and answers, as [`inspect::param`] takes and returns them.
pub use nerve_message::param;
pub use plan::Plan;
pub use realtime::raise_this_process;
pub use reaper::Reaper;
pub use run::{Outcome, RunOptions, RunReport, run};

/// Bytes an output's pool keeps by default before freeing blocks no reader holds.
pub const DEFAULT_POOL_CAPACITY: usize = nerve_shm::pool::DEFAULT_CAPACITY;

/// Runs the `build:` command of every node of `df`, in its folder.
///
/// # Errors
/// The first build that fails.
pub fn build(df: &nerve_spec::Dataflow) -> Result<(), RuntimeError> {
    spawn::build_all(&df.nodes, &df.base_dir)
}

//! What the runtime keeps of each node while the run lasts.

use std::collections::HashSet;
use std::os::unix::net::UnixStream;
use std::time::Instant;

use super::report::Outcome;
use crate::event::Generation;

pub(super) struct NodeRt {
    pub(super) id: String,
    pub(super) pid: Option<u32>,
    pub(super) generation: Generation,
    pub(super) writer: Option<UnixStream>,
    pub(super) ready: bool,
    pub(super) exited: Option<Outcome>,
    pub(super) closed_outputs: HashSet<usize>,
    /// Inputs closed for good from outside ([`RunControl::close_inputs`]).
    pub(super) closed_inputs: HashSet<String>,
    pub(super) pending_closed: Vec<String>,
    pub(super) killed: bool,
    /// When the current process was started.
    pub(super) spawned_at: Option<Instant>,
    /// A restart waiting for its back-off, and how the process it replaces ended.
    pub(super) restart: Option<(Instant, Outcome)>,
    /// Restarts in a row (the back-off and the limit count these).
    pub(super) restarts_in_a_row: u32,
    /// Restarts during the whole run.
    pub(super) restarts: u32,
    /// Served by the process that runs the dataflow ([`RunOptions::helpers`]).
    pub(super) helper: bool,
}

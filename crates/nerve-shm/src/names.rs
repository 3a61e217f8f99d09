//! How a run names its shared-memory objects.
//!
//! Every object of a run starts with the run's prefix, so two dataflows never see each other's
//! data and one directory scan finds everything a run left behind.

/// Directory where Linux exposes POSIX shared memory.
pub const SHM_DIR: &str = "/dev/shm";

/// Names of one run's shared-memory objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunNames {
    prefix: String,
}

impl RunNames {
    /// Names for the run `run_id` (letters, digits, `-` and `_` only).
    #[must_use]
    pub fn new(run_id: &str) -> Self {
        Self { prefix: format!("nerve.{run_id}.") }
    }

    /// The common prefix of every object of the run.
    #[must_use]
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The inbox (queues and doorbell) of node number `node`.
    #[must_use]
    pub fn inbox(&self, node: usize) -> String {
        format!("{}i{node}", self.prefix)
    }

    /// The block table of output `output` of node `node`.
    #[must_use]
    pub fn pool(&self, node: usize, output: usize) -> String {
        format!("{}p{node}.{output}", self.prefix)
    }

    /// Data block number `seq` of that output.
    #[must_use]
    pub fn block(&self, node: usize, output: usize, seq: u64) -> String {
        format!("{}b{node}.{output}.{seq}", self.prefix)
    }

    /// The run's simulated clock (only with `--sim-time`).
    #[must_use]
    pub fn clock(&self) -> String {
        format!("{}clock", self.prefix)
    }

    /// Removes every object of the run that is still named; returns how many were removed.
    ///
    /// Mappings held by live processes stay valid; only the names go.
    pub fn sweep(&self) -> usize {
        sweep_prefix(&self.prefix)
    }
}

/// Removes every shared-memory object whose name starts with `prefix`.
pub fn sweep_prefix(prefix: &str) -> usize {
    let Ok(dir) = std::fs::read_dir(SHM_DIR) else {
        return 0;
    };
    let mut removed = 0;
    for entry in dir.flatten() {
        let name = entry.file_name();
        if let Some(name) = name.to_str()
            && name.starts_with(prefix)
        {
            crate::segment::unlink(name);
            removed += 1;
        }
    }
    removed
}

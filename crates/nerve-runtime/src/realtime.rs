//! A node's `realtime:` settings: checked by the runtime before the node starts, then applied
//! in the node's process between fork and exec. And a daemon's own priority, for the threads
//! that carry real-time nodes' messages between machines.
//!
//! Scheduling policy, priority and CPU affinity survive `exec`, so they are set before the
//! node's program runs and every thread it creates inherits them. Memory locks do not survive
//! `exec`: the node locks its own memory when its channel table asks it to.

use std::io;

use rustix::thread::CpuSet;

use nerve_spec::{RealtimeSpec, SchedPolicy};

use crate::error::RuntimeError;

/// What to apply to one node's process; plain data, usable between fork and exec.
#[derive(Clone, Copy)]
pub(crate) struct Realtime {
    /// `SCHED_FIFO` or `SCHED_RR`, and the priority.
    sched: Option<(libc::c_int, libc::c_int)>,
    cpus: Option<CpuSet>,
}

impl Realtime {
    /// The settings of `node`, after checking that this machine has its CPUs and that nerve
    /// may use its priority (tried on a throwaway thread, so a refusal is reported before
    /// anything starts, with what to do about it).
    ///
    /// # Errors
    /// [`RuntimeError::Realtime`] naming the node and the setting refused.
    pub(crate) fn prepare(node: &str, spec: &RealtimeSpec) -> Result<Self, RuntimeError> {
        let refuse = |problem: String| RuntimeError::Realtime { node: node.to_owned(), problem };
        let cpus = if spec.cpus.is_empty() {
            None
        } else {
            let allowed = rustix::thread::sched_getaffinity(None)
                .map_err(|e| refuse(format!("cannot read the CPUs nerve may use: {e}")))?;
            let available: Vec<usize> = (0..CpuSet::MAX_CPU).filter(|&c| allowed.is_set(c)).collect();
            let mut set = CpuSet::new();
            for &cpu in &spec.cpus {
                if !allowed.is_set(cpu) {
                    return Err(refuse(format!("CPU {cpu} is not available here (available: {available:?})")));
                }
                set.set(cpu);
            }
            Some(set)
        };
        let sched = spec.priority.map(|priority| sched(spec.policy, priority));
        let rt = Self { sched, cpus };
        let tried = std::thread::scope(|s| s.spawn(|| (rt.set_sched(), rt.set_cpus())).join());
        let (sched_result, cpus_result) =
            tried.map_err(|_| refuse("the thread trying the settings panicked".to_owned()))?;
        if let (Err(e), Some(priority)) = (sched_result, spec.priority) {
            return Err(refuse(not_permitted(priority, spec.policy, &e)));
        }
        if let Err(e) = cpus_result {
            return Err(refuse(format!("cannot pin to CPUs {:?}: {e}", spec.cpus)));
        }
        Ok(rt)
    }

    /// Applies the settings to the calling thread; async-signal-safe (system calls only), so it
    /// may run between fork and exec.
    pub(crate) fn apply(&self) -> io::Result<()> {
        self.set_sched()?;
        self.set_cpus()
    }

    fn set_sched(&self) -> io::Result<()> {
        self.set_sched_of(0)
    }

    /// Sets the scheduling of thread `tid` (0: the calling thread); async-signal-safe.
    fn set_sched_of(&self, tid: libc::pid_t) -> io::Result<()> {
        let Some((policy, priority)) = self.sched else {
            return Ok(());
        };
        let param = libc::sched_param { sched_priority: priority };
        // SAFETY: `param` is a valid sched_param; `tid` names a thread or is 0 (the caller).
        if unsafe { libc::sched_setscheduler(tid, policy, &raw const param) } == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    fn set_cpus(&self) -> io::Result<()> {
        match &self.cpus {
            Some(set) => rustix::thread::sched_setaffinity(None, set).map_err(io::Error::from),
            None => Ok(()),
        }
    }
}

/// The `sched_setscheduler` policy and priority of `policy` at `priority`.
fn sched(policy: SchedPolicy, priority: u8) -> (libc::c_int, libc::c_int) {
    let policy = match policy {
        SchedPolicy::Fifo => libc::SCHED_FIFO,
        SchedPolicy::Rr => libc::SCHED_RR,
    };
    (policy, libc::c_int::from(priority))
}

/// Why a real-time priority was refused, and what to do about it.
fn not_permitted(priority: u8, policy: SchedPolicy, e: &io::Error) -> String {
    format!(
        "real-time priority {priority} ({}) is not permitted: {e}; run nerve as root, give it \
         CAP_SYS_NICE, or raise its real-time priority limit (`ulimit -r`)",
        policy.as_str()
    )
}

/// Gives every thread of this process the real-time `policy` at `priority`; the threads they
/// start later inherit it. For a daemon: real-time nodes' messages between machines go through
/// its bridge and its Zenoh session, which would otherwise wait behind the nodes themselves.
///
/// # Errors
/// [`RuntimeError::Priority`] when the priority is not permitted or a thread cannot be listed.
pub fn raise_this_process(priority: u8, policy: SchedPolicy) -> Result<(), RuntimeError> {
    let refuse = |problem: String| RuntimeError::Priority { problem };
    let rt = Realtime { sched: Some(sched(policy, priority)), cpus: None };
    let tasks = std::fs::read_dir("/proc/self/task")
        .map_err(|e| refuse(format!("cannot list this process's threads in /proc/self/task: {e}")))?;
    for task in tasks {
        let tid = task
            .ok()
            .and_then(|t| t.file_name().to_str().and_then(|name| name.parse::<libc::pid_t>().ok()))
            .ok_or_else(|| refuse("cannot read a thread id in /proc/self/task".to_owned()))?;
        rt.set_sched_of(tid).map_err(|e| refuse(not_permitted(priority, policy, &e)))?;
    }
    Ok(())
}

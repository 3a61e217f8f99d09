//! A watchdog process that outlives the runtime by a moment: if the process running dataflows
//! dies, even by SIGKILL, it kills every node's process group and removes each run's shared
//! memory and socket.
//!
//! Node processes also get a parent-death signal, but that does not reach a node's own children
//! (a shell script's programs, for instance); the reaper kills whole process groups.
//!
//! One reaper serves every run of its process: `nerve run` forks one for its run, and a host
//! daemon of a cluster forks one when it starts, before it has threads, for all the parts it
//! will run.

use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use nerve_shm::sync::lock;

use crate::error::RuntimeError;

/// The runtime's end of the pipe to the reaper.
#[derive(Debug)]
pub struct Reaper {
    pipe: Mutex<std::fs::File>,
    runs: AtomicU64,
}

impl Reaper {
    /// Forks the reaper.
    ///
    /// Call this before the process starts any thread: the child runs Rust code after `fork`,
    /// which is only sound while the parent is single-threaded.
    ///
    /// # Errors
    /// When the pipe or the fork fails.
    pub fn spawn() -> Result<Arc<Self>, RuntimeError> {
        let os = |what| move |e: rustix::io::Errno| RuntimeError::Os { what, source: e.into() };
        let (read, write) =
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(os("creating the reaper pipe"))?;
        // SAFETY: the caller guarantees no other thread runs; the child only performs system
        // calls and small allocations, then `_exit`s without returning into the caller.
        match unsafe { libc::fork() } {
            -1 => Err(RuntimeError::Os { what: "forking the reaper", source: std::io::Error::last_os_error() }),
            0 => {
                drop(write);
                reaper_main(read)
            }
            _ => Ok(Arc::new(Self { pipe: Mutex::new(std::fs::File::from(write)), runs: AtomicU64::new(0) })),
        }
    }

    fn say(&self, line: &str) {
        let mut pipe = lock(&self.pipe);
        if let Err(e) = writeln!(pipe, "{line}") {
            tracing::warn!(error = %e, "reaper is gone; nodes may outlive a crash of nerve");
        }
    }

    /// Watches a run whose shared-memory objects start with `shm_prefix` and whose control
    /// socket is `socket`.
    pub(crate) fn watch(self: &Arc<Self>, shm_prefix: &str, socket: &Path) -> RunReaper {
        let run = self.runs.fetch_add(1, Ordering::Relaxed);
        self.say(&format!("r {run} {shm_prefix}\t{}", socket.display()));
        RunReaper { reaper: self.clone(), run, disarmed: false }
    }
}

/// The reaper's watch over one run. Dropped without [`RunReaper::disarm`] (the run failed
/// half-way), it has the reaper clean the run up at once.
#[derive(Debug)]
pub(crate) struct RunReaper {
    reaper: Arc<Reaper>,
    run: u64,
    disarmed: bool,
}

impl RunReaper {
    /// Tells the reaper about a node's process group.
    pub(crate) fn track(&self, pgid: u32) {
        self.reaper.say(&format!("g {} {pgid}", self.run));
    }

    /// The run ended cleanly: the reaper forgets it without killing anything.
    pub(crate) fn disarm(mut self) {
        self.disarmed = true;
        self.reaper.say(&format!("d {}", self.run));
    }
}

impl Drop for RunReaper {
    fn drop(&mut self) {
        if !self.disarmed {
            self.reaper.say(&format!("k {}", self.run));
        }
    }
}

/// A run as the reaper knows it.
struct Watched {
    run: u64,
    prefix: String,
    socket: String,
    groups: Vec<i32>,
}

fn reaper_main(read: OwnedFd) -> ! {
    // Detach from the terminal's process group so Ctrl-C reaches only the runtime, which then
    // stops the nodes gracefully; the reaper acts only if that process disappears.
    let _ = rustix::process::setsid();
    // SAFETY: installing SIG_IGN for these signals has no preconditions.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    close_inherited(read.as_raw_fd());
    silence_stdio();
    let mut runs: Vec<Watched> = Vec::new();
    let mut pending = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        match rustix::io::read(&read, &mut buf) {
            Ok(0) => break,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => break,
        }
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let mut words = line.trim_end().splitn(3, ' ');
            let (Some(kind), Some(run)) = (words.next(), words.next().and_then(|r| r.parse::<u64>().ok())) else {
                continue;
            };
            let rest = words.next().unwrap_or_default();
            match kind {
                "r" => {
                    let (prefix, socket) = rest.split_once('\t').unwrap_or((rest, ""));
                    runs.push(Watched {
                        run,
                        prefix: prefix.to_owned(),
                        socket: socket.to_owned(),
                        groups: Vec::new(),
                    });
                }
                "g" => {
                    if let (Some(w), Ok(pgid)) = (runs.iter_mut().find(|w| w.run == run), rest.parse()) {
                        w.groups.push(pgid);
                    }
                }
                "d" => runs.retain(|w| w.run != run),
                "k" => {
                    if let Some(i) = runs.iter().position(|w| w.run == run) {
                        clean_up(runs.swap_remove(i));
                    }
                }
                _ => {}
            }
        }
    }
    runs.into_iter().for_each(clean_up);
    // SAFETY: `_exit` ends the child without running the parent's atexit handlers or
    // unwinding into code that belongs to the parent.
    unsafe { libc::_exit(0) }
}

/// Kills a run's process groups and removes its shared memory and socket.
fn clean_up(w: Watched) {
    for pgid in w.groups {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
    nerve_shm::names::sweep_prefix(&w.prefix);
    let _ = std::fs::remove_file(&w.socket);
}

/// Closes every descriptor the fork copied but the standard ones and `keep` (the pipe). The
/// reaper lives as long as its parent, and its copy of a descriptor would keep what it refers
/// to alive after the parent closed its own: a socket open, a `flock` held.
fn close_inherited(keep: libc::c_int) {
    let ranges = [(3, keep - 1), (keep + 1, libc::c_int::MAX)];
    for (first, last) in ranges.into_iter().filter(|(first, last)| first <= last) {
        // SAFETY: close_range only closes this process's descriptors in the range; nothing of
        // the reaper uses them. On a kernel without it (before 5.9) the copies stay open.
        unsafe {
            libc::syscall(libc::SYS_close_range, first, last, 0);
        }
    }
}

fn silence_stdio() {
    if let Ok(null) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null") {
        for fd in 0..3 {
            // SAFETY: dup2 onto the standard descriptors of this single-threaded child.
            unsafe {
                libc::dup2(null.as_raw_fd(), fd);
            }
        }
    }
}

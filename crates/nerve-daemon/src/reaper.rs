//! A watchdog process that outlives `nerve run` by a moment: if the runtime dies, even by
//! SIGKILL, it kills every node's process group and removes the run's shared memory.
//!
//! Node processes also get a parent-death signal, but that does not reach a node's own children
//! (a shell script's programs, for instance); the reaper kills whole process groups.

use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

use crate::error::DaemonError;

/// The runtime's end of the pipe to the reaper.
#[derive(Debug)]
pub struct Reaper {
    pipe: std::fs::File,
}

impl Reaper {
    /// Forks the reaper.
    ///
    /// Call this before the runtime starts any thread: the child runs Rust code after `fork`,
    /// which is only sound while the parent is single-threaded.
    ///
    /// # Errors
    /// When the pipe or the fork fails.
    pub fn spawn(shm_prefix: &str, socket: &Path) -> Result<Self, DaemonError> {
        let os = |what| move |e: rustix::io::Errno| DaemonError::Os { what, source: e.into() };
        let (read, write) =
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(os("creating the reaper pipe"))?;
        let prefix = shm_prefix.to_owned();
        let socket = socket.to_owned();
        // SAFETY: the caller guarantees no other thread runs; the child only performs system
        // calls and small allocations, then `_exit`s without returning into the caller.
        match unsafe { libc::fork() } {
            -1 => Err(DaemonError::Os { what: "forking the reaper", source: std::io::Error::last_os_error() }),
            0 => {
                drop(write);
                reaper_main(read, &prefix, &socket)
            }
            _ => Ok(Self { pipe: std::fs::File::from(write) }),
        }
    }

    /// Tells the reaper about a node's process group.
    pub fn track(&mut self, pgid: u32) {
        if let Err(e) = writeln!(self.pipe, "g {pgid}") {
            tracing::warn!(error = %e, "reaper is gone; nodes may outlive a crash of nerve");
        }
    }

    /// The run ended cleanly: the reaper leaves without killing anything.
    pub fn disarm(mut self) {
        let _ = writeln!(self.pipe, "d");
    }
}

fn reaper_main(read: OwnedFd, prefix: &str, socket: &Path) -> ! {
    // Detach from the terminal's process group so Ctrl-C reaches only `nerve run`, which then
    // stops the nodes gracefully; the reaper acts only if that process disappears.
    let _ = rustix::process::setsid();
    // SAFETY: installing SIG_IGN for these signals has no preconditions.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    silence_stdio();
    let mut groups: Vec<i32> = Vec::new();
    let mut disarmed = false;
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
            match line.as_slice() {
                [b'd', b'\n'] => disarmed = true,
                [b'g', b' ', rest @ ..] => {
                    if let Some(pgid) = std::str::from_utf8(rest).ok().and_then(|s| s.trim().parse().ok()) {
                        groups.push(pgid);
                    }
                }
                _ => {}
            }
        }
    }
    if !disarmed {
        for pgid in groups {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
        nerve_shm::names::sweep_prefix(prefix);
        let _ = std::fs::remove_file(socket);
    }
    // SAFETY: `_exit` ends the child without running the parent's atexit handlers or
    // unwinding into code that belongs to the parent.
    unsafe { libc::_exit(0) }
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

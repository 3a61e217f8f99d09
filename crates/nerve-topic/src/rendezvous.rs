//! Zenoh sessions of one host find each other through the registry, with no multicast.
//!
//! Multicast scouting is often off or filtered (containers, robot networks that forbid it, CI),
//! and a service or action between two processes of one host must work all the same. So each
//! peer session also listens on a Unix socket in the registry's host folder
//! (`<registry>/z/<pid>-<n>.sock`, `n` counting the process's sessions) and connects to the
//! sockets of every live process already there:
//! the sessions of a host form a full mesh whatever the network allows. A network namespace
//! has a folder of its own, as it has a registry of its own, so namespaces stay separate hosts.
//!
//! A lock on the folder is held from listing the sockets until the session listens on its own,
//! so of two sessions opening at once the second always sees the first.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use rustix::fs::{FlockOperation, Mode, OFlags};
use serde_json::Value;

use crate::error::TopicError;
use crate::registry;

/// Sessions this process opened so far.
static SESSIONS: AtomicU32 = AtomicU32::new(0);

/// This process's rendezvous socket; its file goes with the session.
pub(crate) struct Rendezvous {
    path: PathBuf,
    /// The folder's lock, until the session listens ([`Rendezvous::listening`]).
    lock: Option<OwnedFd>,
}

impl Rendezvous {
    /// Adds this host's rendezvous to a peer-mode `config`: listen on this process's socket,
    /// connect to the others'. A client or router session is left as it is (`None`).
    pub(crate) fn join(config: &mut zenoh::Config) -> Result<Option<Self>, TopicError> {
        let mode = config.get_json("mode").ok().and_then(|m| serde_json::from_str::<Value>(&m).ok());
        if !matches!(mode.as_ref().and_then(Value::as_str), None | Some("peer")) {
            return Ok(None);
        }
        let dir = registry::host_dir().join("z");
        registry::private_dir(&dir)?;
        let lock = lock(&dir)?;
        let pid = std::process::id();
        // A session closed earlier in this process may still hold its socket's lock (Zenoh
        // releases it only when the process exits), so each session has a name of its own.
        let path = dir.join(format!("{pid}-{}.sock", SESSIONS.fetch_add(1, Ordering::Relaxed)));
        let peers = live_sockets(&dir, pid);
        add_endpoints(config, "listen/endpoints", &[endpoint(&path)])?;
        add_endpoints(config, "connect/endpoints", &peers.iter().map(|p| endpoint(p)).collect::<Vec<_>>())?;
        Ok(Some(Self { path, lock: Some(lock) }))
    }

    /// The session is open and listens on its socket: others may now list it.
    pub(crate) fn listening(&mut self) {
        self.lock = None;
    }
}

fn lock(dir: &Path) -> Result<OwnedFd, TopicError> {
    let path = dir.join("lock");
    let err = |e: rustix::io::Errno| TopicError::Registry { path: path.clone(), source: e.into() };
    let fd = rustix::fs::open(&path, OFlags::CREATE | OFlags::RDWR | OFlags::CLOEXEC, Mode::from_raw_mode(0o600))
        .map_err(err)?;
    rustix::fs::flock(&fd, FlockOperation::LockExclusive).map_err(err)?;
    Ok(fd)
}

impl Drop for Rendezvous {
    fn drop(&mut self) {
        remove(&self.path);
    }
}

fn endpoint(path: &Path) -> String {
    format!("unixsock-stream/{}", path.display())
}

/// Removes a socket and the lock file Zenoh keeps beside it.
fn remove(path: &Path) {
    let mut lock = path.as_os_str().to_owned();
    lock.push(".lock");
    remove_file(path);
    remove_file(Path::new(&lock));
}

fn remove_file(file: &Path) {
    if let Err(e) = std::fs::remove_file(file)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::debug!(path = %file.display(), error = %e, "cannot remove a rendezvous file");
    }
}

/// The sockets of the other live processes in `dir`; the files of dead ones are removed (Zenoh
/// leaves a `<socket>.lock` behind even when its process exits cleanly).
fn live_sockets(dir: &Path, own: u32) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut live = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
        let is_socket = name.ends_with(".sock");
        if !is_socket && !name.ends_with(".sock.lock") {
            continue;
        }
        // <pid>-<n>.sock[.lock]
        let Some(pid) = name.split(['-', '.']).next().and_then(|p| p.parse::<u32>().ok()) else { continue };
        let alive = Path::new(&format!("/proc/{pid}")).exists();
        if pid == own || !alive {
            // Dead, or an earlier process that had this pid: this process's own sessions remove
            // their socket as they close, and no session of it is open now.
            remove_file(&path);
        } else if is_socket {
            live.push(path);
        }
    }
    live
}

/// Appends `added` to the endpoint list at `key`, which is a list or, per mode, an object of
/// lists (Zenoh's default listen endpoints are the latter): the peer list grows.
fn add_endpoints(config: &mut zenoh::Config, key: &str, added: &[String]) -> Result<(), TopicError> {
    if added.is_empty() {
        return Ok(());
    }
    let bad = |e: String| TopicError::Network(format!("cannot add the host's rendezvous to Zenoh's `{key}`: {e}"));
    let current = config.get_json(key).map_err(|e| bad(e.to_string()))?;
    let mut value: Value = serde_json::from_str(&current).map_err(|e| bad(e.to_string()))?;
    let list = match &mut value {
        Value::Object(per_mode) => per_mode.entry("peer").or_insert_with(|| Value::Array(Vec::new())),
        other => other,
    };
    if list.is_null() {
        *list = Value::Array(Vec::new());
    }
    let Value::Array(items) = list else { return Err(bad(format!("unexpected value {current}"))) };
    items.extend(added.iter().cloned().map(Value::String));
    config.insert_json5(key, &value.to_string()).map_err(|e| bad(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_peers_are_kept_and_the_files_of_dead_processes_go() {
        let dir = std::env::temp_dir().join(format!("nerve-rendezvous-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        // pid 1 is always alive; no process has pid u32::MAX - 1 (above the kernel's pid_max).
        let dead = u32::MAX - 1;
        let own = std::process::id();
        let names = ["1-0.sock", "1-0.sock.lock", &format!("{dead}-0.sock"), &format!("{dead}-0.sock.lock")];
        let own_stale = format!("{own}-7.sock");
        for name in names.iter().copied().chain([own_stale.as_str(), "notes.txt"]) {
            std::fs::write(dir.join(name), b"").expect("file");
        }
        assert_eq!(live_sockets(&dir, own), vec![dir.join("1-0.sock")]);
        let mut left: Vec<String> =
            std::fs::read_dir(&dir).expect("read").flatten().map(|e| e.file_name().to_string_lossy().into()).collect();
        left.sort();
        assert_eq!(left, ["1-0.sock", "1-0.sock.lock", "notes.txt"]);
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    #[test]
    fn the_peer_lists_grow_and_the_defaults_stay() {
        let mut config = zenoh::Config::default();
        add_endpoints(&mut config, "listen/endpoints", &["unixsock-stream/a.sock".into()]).expect("listen");
        add_endpoints(&mut config, "connect/endpoints", &["unixsock-stream/b.sock".into()]).expect("connect");
        let listen: Value = serde_json::from_str(&config.get_json("listen/endpoints").expect("get")).expect("json");
        assert_eq!(listen["peer"], serde_json::json!(["tcp/[::]:0", "unixsock-stream/a.sock"]), "{listen}");
        let connect: Value = serde_json::from_str(&config.get_json("connect/endpoints").expect("get")).expect("json");
        assert_eq!(connect, serde_json::json!(["unixsock-stream/b.sock"]));
    }
}

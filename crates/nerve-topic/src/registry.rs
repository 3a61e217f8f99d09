//! The per-user, per-host registry of topic endpoints: a directory tree that every process of
//! the user on this host can list and watch, so publishers and subscribers find each other
//! with no broker.
//!
//! ```text
//! <runtime dir>/topics/net<inode>/
//!     s/<pid>.sock                      one listening socket per process
//!     d<domain>/<topic>/<pid>.<id>.pub  one file per endpoint (JSON `Entry`)
//! ```
//!
//! A network namespace counts as a host of its own (`net<inode>`): processes in two
//! namespaces reach each other through the network, as two machines would.
//!
//! A topic's directory goes with its last endpoint (or, after a crash, with the next listing
//! that finds none alive): run names make new topics all the time, and `nerve view`,
//! `nerve foxglove` and `nerve topic list` list the registry every second.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::TopicError;
use crate::name;

/// How far a topic's messages travel (RIMAOS2C's scopes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Only endpoints of the same process.
    Process,
    /// Endpoints of processes on this host.
    Host,
    /// Endpoints anywhere the network reaches.
    Network,
}

impl std::str::FromStr for Scope {
    type Err = TopicError;

    fn from_str(s: &str) -> Result<Self, TopicError> {
        match s {
            "process" => Ok(Self::Process),
            "host" => Ok(Self::Host),
            "network" => Ok(Self::Network),
            other => Err(TopicError::BadScope(other.to_owned())),
        }
    }
}

/// Which end of a topic an entry describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A publisher.
    Pub,
    /// A subscriber.
    Sub,
}

impl Kind {
    fn suffix(self) -> &'static str {
        match self {
            Self::Pub => "pub",
            Self::Sub => "sub",
        }
    }
}

/// One endpoint, as its registry file describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Publisher or subscriber.
    pub kind: Kind,
    /// Owning process.
    pub pid: u32,
    /// Endpoint number within the process.
    pub id: u64,
    /// How far it reaches.
    pub scope: Scope,
    /// The owning process's socket.
    pub socket: PathBuf,
    /// For a publisher that brings another middleware's topic into nerve, where its messages
    /// come from and their type (`ROS 2 std_msgs/msg/String`), as `nerve topic list` shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

/// Root of this host's registry for the current user.
#[must_use]
pub fn host_dir() -> PathBuf {
    let netns = std::fs::metadata("/proc/self/ns/net").map(|m| m.ino()).unwrap_or(0);
    nerve_message::runtime_dir().join("topics").join(format!("net{netns}"))
}

/// Directory of `domain`.
#[must_use]
pub fn domain_dir(domain: u32) -> PathBuf {
    host_dir().join(format!("d{domain}"))
}

/// Directory of one topic (canonical name) in `domain`.
#[must_use]
pub fn topic_dir(domain: u32, topic: &str) -> PathBuf {
    domain_dir(domain).join(name::file_name(topic))
}

/// Path of this process's listening socket.
#[must_use]
pub fn socket_path(pid: u32) -> PathBuf {
    host_dir().join("s").join(format!("{pid}.sock"))
}

/// Creates `dir` and its parents, private to the user (mode 0700).
///
/// # Errors
/// When it cannot be created.
pub fn private_dir(dir: &Path) -> Result<(), TopicError> {
    nerve_message::private_dir(dir).map_err(|source| TopicError::Registry { path: dir.to_owned(), source })
}

/// An endpoint's registry file; removed when dropped.
#[derive(Debug)]
pub struct Registration {
    path: PathBuf,
}

impl Registration {
    /// Writes `entry` for `topic` in `domain`, atomically (readers never see half a file).
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn new(domain: u32, topic: &str, entry: &Entry) -> Result<Self, TopicError> {
        let dir = topic_dir(domain, topic);
        private_dir(&dir)?;
        let file = format!("{}.{}.{}", entry.pid, entry.id, entry.kind.suffix());
        let path = dir.join(&file);
        let tmp = dir.join(format!(".{file}.tmp"));
        let err = |source| TopicError::Registry { path: path.clone(), source };
        let json = serde_json::to_vec(entry).map_err(|e| err(std::io::Error::other(e)))?;
        // The directory is empty until the file is in, so the last endpoint of another process
        // leaving may remove it in between: then it is made again.
        let mut attempts = 0;
        while let Err(e) = std::fs::write(&tmp, &json) {
            attempts += 1;
            if e.kind() != std::io::ErrorKind::NotFound || attempts > MAKE_DIR_ATTEMPTS {
                return Err(err(e));
            }
            private_dir(&dir)?;
        }
        std::fs::rename(&tmp, &path).map_err(err)?;
        Ok(Self { path })
    }
}

/// Times a registration makes its topic's directory again when another process removed it.
const MAKE_DIR_ATTEMPTS: usize = 16;

/// Removes topic directory `dir` if it is empty; an endpoint in it keeps it.
fn remove_if_empty(dir: &Path) {
    if let Err(e) = std::fs::remove_dir(dir)
        && !matches!(e.kind(), std::io::ErrorKind::DirectoryNotEmpty | std::io::ErrorKind::NotFound)
    {
        tracing::debug!(path = %dir.display(), error = %e, "cannot remove a topic directory");
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.path)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(path = %self.path.display(), error = %e, "cannot remove topic registration");
        }
        if let Some(dir) = self.path.parent() {
            remove_if_empty(dir);
        }
    }
}

/// Reads one registry file; `None` for temporary, foreign or unreadable files.
#[must_use]
pub fn read_entry(path: &Path) -> Option<Entry> {
    let file = path.file_name()?.to_str()?;
    if file.starts_with('.') {
        return None;
    }
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Every live endpoint of `topic` in `domain`; files left by dead processes are removed.
#[must_use]
pub fn endpoints(domain: u32, topic: &str) -> Vec<Entry> {
    let Ok(dir) = std::fs::read_dir(topic_dir(domain, topic)) else {
        return Vec::new();
    };
    dir.flatten().filter_map(|e| live_entry(&e.path())).collect()
}

/// Every topic of `domain` that has at least one live endpoint, with its endpoints.
#[must_use]
pub fn topics(domain: u32) -> Vec<(String, Vec<Entry>)> {
    let Ok(dir) = std::fs::read_dir(domain_dir(domain)) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Vec<Entry>)> = dir
        .flatten()
        .filter_map(|d| {
            let topic = name::from_file_name(d.file_name().to_str()?);
            let found = endpoints(domain, &topic);
            if found.is_empty() {
                // Left by endpoints that crashed (whose files `endpoints` just removed).
                remove_if_empty(&d.path());
                return None;
            }
            Some((topic, found))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The entry at `path`, or `None` (and the file removed) when its process is gone.
#[must_use]
pub fn live_entry(path: &Path) -> Option<Entry> {
    let entry = read_entry(path)?;
    if process_alive(entry.pid) {
        Some(entry)
    } else {
        let _ = std::fs::remove_file(path);
        None
    }
}

/// Whether process `pid` exists (a zombie counts as gone).
#[must_use]
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses and may hold spaces.
        Ok(stat) => stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()) != Some("Z"),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(kind: Kind, pid: u32, id: u64) -> Entry {
        Entry { kind, pid, id, scope: Scope::Host, socket: PathBuf::from("unused.sock"), origin: None }
    }

    /// A domain no other test uses, so the topics listed are this test's own.
    fn domain(n: u32) -> u32 {
        4_000_000 + (std::process::id() % 100_000) * 10 + n
    }

    #[test]
    fn a_topic_s_directory_goes_with_its_last_endpoint() -> Result<(), TopicError> {
        let (domain, me) = (domain(1), std::process::id());
        let publisher = Registration::new(domain, "robot/pose", &entry(Kind::Pub, me, 1))?;
        let subscriber = Registration::new(domain, "robot/pose", &entry(Kind::Sub, me, 2))?;
        drop(publisher);
        assert!(topic_dir(domain, "robot/pose").is_dir(), "removed while a subscriber is in it");
        assert_eq!(topics(domain).len(), 1);
        drop(subscriber);
        assert!(!topic_dir(domain, "robot/pose").exists());
        // A topic registered again gets its directory back.
        let again = Registration::new(domain, "robot/pose", &entry(Kind::Pub, me, 3))?;
        assert_eq!(endpoints(domain, "robot/pose"), [entry(Kind::Pub, me, 3)]);
        drop(again);
        let _ = std::fs::remove_dir(domain_dir(domain));
        Ok(())
    }

    #[test]
    fn a_listing_removes_what_crashed_endpoints_left() -> Result<(), Box<dyn std::error::Error>> {
        let domain = domain(2);
        let mut child = std::process::Command::new("true").spawn()?;
        child.wait()?;
        // Written as a process that died without dropping its registration leaves it.
        let dead = Registration::new(domain, "camera/image", &entry(Kind::Pub, child.id(), 1))?;
        std::mem::forget(dead);
        assert!(topic_dir(domain, "camera/image").is_dir());
        assert!(topics(domain).is_empty());
        assert!(!topic_dir(domain, "camera/image").exists());
        let _ = std::fs::remove_dir(domain_dir(domain));
        Ok(())
    }
}

//! The topic machinery of one process: its listening socket, the thread that accepts and
//! serves links to other processes, the in-process bus, and discovery through the registry.
//!
//! A link is always opened by the subscriber: it finds a publisher's registry file (listing
//! the topic's directory when it starts, then through inotify), connects to the publisher
//! process's socket and hands over its inbox. The publisher answers with its block table and
//! blocks, and from then on queues every message into the subscriber's inbox directly.

use std::collections::HashMap;
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use nerve_message::publisher_to_subscriber::PublisherMessage;
use nerve_message::subscriber_to_publisher::SubscriberMessage;
use nerve_shm::inbox::{Inbox, QueueShape};
use nerve_shm::pool::HandedBlocks;
use nerve_shm::segment::{Access, Segment};
use nerve_shm::sync::lock;
use rustix::event::epoll;
use rustix::fs::inotify;
use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};

use crate::error::TopicError;
use crate::feeds::SubShared;
use crate::registry::{self, Kind, Scope};
use crate::wire::{self, Received};

const LISTENER: u64 = 0;
const INOTIFY: u64 = 1;
const FIRST_LINK: u64 = 16;
/// How long a blocked send to a peer may take before the peer is dropped as stuck.
const SEND_TIMEOUT: Duration = Duration::from_secs(2);
/// Largest queue a peer may ask for.
const MAX_QUEUE: usize = 1 << 20;

/// A publisher of this process, as the topic thread sees it: subscriber processes link to it
/// and leave. (Implemented by the publisher's shared state; this module names no publisher
/// type, so that publishers can use the runtime without a cycle.)
pub(crate) trait Feeder: Send + Sync {
    /// Links a subscriber process that handed over its queue (queue 0 of `queue`, see
    /// [`Inbox::one_queue`]); returns its reader bit. Everything the subscriber needs to read
    /// (the table, every block) is sent before the first message can reach its queue.
    fn attach(&self, sock: Arc<OwnedFd>, queue: Arc<Inbox>) -> Result<usize, String>;

    /// Unlinks reader `edge` (its process left or dropped every message it held).
    fn detach(&self, edge: usize);
}

/// A message from the other end of a link, by that end's role.
#[derive(Debug)]
enum Heard {
    FromSubscriber(SubscriberMessage),
    FromPublisher(PublisherMessage),
}

/// One open connection, by its role in this process.
enum Link {
    /// Accepted, waiting for the subscriber's `Hello`.
    Accepted(OwnedFd),
    /// Feeding a remote subscriber from a local publisher, as reader bit `edge`.
    Reader { publisher: Weak<dyn Feeder>, edge: usize, sock: Weak<OwnedFd> },
    /// Fed by a remote publisher into queue `ring` of a local subscriber.
    Feed { subscriber: Weak<SubShared>, ring: usize, handed: Arc<HandedBlocks>, sock: Weak<OwnedFd> },
}

#[derive(Default)]
struct State {
    publishers: HashMap<u64, Weak<dyn Feeder>>,
    subscribers: HashMap<u64, Weak<SubShared>>,
    links: HashMap<u64, Link>,
    next_token: u64,
}

/// Local endpoints of one topic, for in-process delivery.
#[derive(Default)]
pub(crate) struct LocalTopic {
    pub subscribers: Vec<Weak<SubShared>>,
    /// Publishers of this process, told when a subscriber joins here.
    pub publishers: Vec<Weak<crate::publisher::PubShared>>,
    /// Live subscribers of this process, readable by publishers without the lock.
    pub subscriber_count: Arc<std::sync::atomic::AtomicUsize>,
}

/// The process's topic machinery (one per process; see [`runtime`]).
pub(crate) struct Runtime {
    pid: u32,
    socket: PathBuf,
    listener: OwnedFd,
    epoll: OwnedFd,
    inotify: OwnedFd,
    state: Mutex<State>,
    local: Mutex<HashMap<(u32, String), LocalTopic>>,
    next_id: AtomicU64,
}

static RUNTIME: Mutex<Option<Arc<Runtime>>> = Mutex::new(None);

/// This process's runtime, started on first use (and again in a forked child).
pub(crate) fn runtime() -> Result<Arc<Runtime>, TopicError> {
    let mut current = lock(&RUNTIME);
    let pid = std::process::id();
    if let Some(rt) = current.as_ref()
        && rt.pid == pid
    {
        return Ok(rt.clone());
    }
    let rt = Runtime::start(pid)?;
    *current = Some(rt.clone());
    Ok(rt)
}

fn io_err(path: &std::path::Path) -> impl Fn(std::io::Error) -> TopicError + '_ {
    move |source| TopicError::Registry { path: path.to_owned(), source }
}

impl Runtime {
    fn start(pid: u32) -> Result<Arc<Self>, TopicError> {
        let socket = registry::socket_path(pid);
        let dir = socket.parent().map(PathBuf::from).unwrap_or_default();
        registry::private_dir(&dir)?;
        sweep_dead_sockets(&dir);
        let err = io_err(&socket);
        // A file of this name belongs to a dead process that had our pid.
        let _ = std::fs::remove_file(&socket);
        let listener = rustix::net::socket_with(
            AddressFamily::UNIX,
            SocketType::SEQPACKET,
            SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
            None,
        )
        .map_err(|e| err(e.into()))?;
        let addr = SocketAddrUnix::new(&socket).map_err(|e| err(e.into()))?;
        rustix::net::bind(&listener, &addr).map_err(|e| err(e.into()))?;
        rustix::net::listen(&listener, 128).map_err(|e| err(e.into()))?;
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC).map_err(|e| err(e.into()))?;
        let inotify =
            inotify::init(inotify::CreateFlags::CLOEXEC | inotify::CreateFlags::NONBLOCK).map_err(|e| err(e.into()))?;
        epoll::add(&epoll, &listener, epoll::EventData::new_u64(LISTENER), epoll::EventFlags::IN)
            .map_err(|e| err(e.into()))?;
        epoll::add(&epoll, &inotify, epoll::EventData::new_u64(INOTIFY), epoll::EventFlags::IN)
            .map_err(|e| err(e.into()))?;
        let rt = Arc::new(Self {
            pid,
            socket: socket.clone(),
            listener,
            epoll,
            inotify,
            state: Mutex::new(State { next_token: FIRST_LINK, ..State::default() }),
            local: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
        });
        let serving = rt.clone();
        std::thread::Builder::new().name("nerve-topics".into()).spawn(move || serving.serve()).map_err(&err)?;
        Ok(rt)
    }

    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    pub(crate) fn socket(&self) -> &std::path::Path {
        &self.socket
    }

    pub(crate) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn local(&self) -> MutexGuard<'_, HashMap<(u32, String), LocalTopic>> {
        lock(&self.local)
    }

    pub(crate) fn add_publisher(&self, id: u64, p: Weak<dyn Feeder>) {
        lock(&self.state).publishers.insert(id, p);
    }

    pub(crate) fn remove_publisher(&self, id: u64) {
        let mut st = lock(&self.state);
        st.publishers.remove(&id);
        prune(&mut st);
    }

    /// Registers a subscriber that reaches other processes, and links it to every publisher
    /// already there; new ones are found through inotify.
    pub(crate) fn add_subscriber(&self, sub: &Arc<SubShared>) -> Result<(), TopicError> {
        let dir = registry::topic_dir(sub.domain, &sub.key);
        registry::private_dir(&dir)?;
        // Watch first, then list: a publisher appearing in between is seen by one or both.
        inotify::add_watch(&self.inotify, &dir, inotify::WatchFlags::CREATE | inotify::WatchFlags::MOVED_TO)
            .map_err(|e| io_err(&dir)(e.into()))?;
        let mut st = lock(&self.state);
        st.subscribers.insert(sub.id, Arc::downgrade(sub));
        self.discover(&mut st, sub);
        Ok(())
    }

    pub(crate) fn remove_subscriber(&self, id: u64) {
        let mut st = lock(&self.state);
        st.subscribers.remove(&id);
        prune(&mut st);
    }

    /// Opens a link to every publisher of `sub`'s topic it is not linked to yet.
    fn discover(&self, st: &mut State, sub: &Arc<SubShared>) {
        for entry in registry::endpoints(sub.domain, &sub.key) {
            if entry.kind != Kind::Pub || entry.pid == self.pid || entry.scope < Scope::Host {
                continue;
            }
            let Some(ring) = sub.reserve_feed((entry.pid, entry.id)) else {
                continue;
            };
            match self.dial(st, sub, &entry, ring) {
                Ok(()) => tracing::debug!(topic = %sub.key, publisher = entry.pid, "linking"),
                Err(e) => {
                    sub.release_feed(ring);
                    tracing::debug!(topic = %sub.key, publisher = entry.pid, error = %e, "cannot link");
                }
            }
        }
    }

    fn dial(&self, st: &mut State, sub: &Arc<SubShared>, entry: &registry::Entry, ring: usize) -> std::io::Result<()> {
        let sock = rustix::net::socket_with(AddressFamily::UNIX, SocketType::SEQPACKET, SocketFlags::CLOEXEC, None)?;
        rustix::net::sockopt::set_socket_timeout(&sock, rustix::net::sockopt::Timeout::Send, Some(SEND_TIMEOUT))?;
        rustix::net::connect(&sock, &SocketAddrUnix::new(&entry.socket)?)?;
        let shape = sub.shape;
        let queue = sub.first + ring;
        let hello = SubscriberMessage::Hello {
            version: nerve_message::NERVE_VERSION.to_owned(),
            publisher: entry.id,
            ring: queue,
            offset: sub.inbox.queue_offset(queue),
            capacity: shape.capacity,
            policy: shape.policy,
        };
        let inbox = sub.inbox.segment().fd().ok_or_else(|| std::io::Error::other("the inbox cannot be shared"))?;
        wire::send(sock.as_fd(), &hello, Some(inbox))?;
        let sock = Arc::new(sock);
        let handed = Arc::new(HandedBlocks::default());
        let token = self.watch(st, &sock)?;
        sub.dialed(ring, sock.clone(), handed.clone());
        st.links
            .insert(token, Link::Feed { subscriber: Arc::downgrade(sub), ring, handed, sock: Arc::downgrade(&sock) });
        Ok(())
    }

    fn watch(&self, st: &mut State, sock: &OwnedFd) -> std::io::Result<u64> {
        let token = st.next_token;
        st.next_token += 1;
        epoll::add(
            &self.epoll,
            sock,
            epoll::EventData::new_u64(token),
            epoll::EventFlags::IN | epoll::EventFlags::RDHUP,
        )?;
        Ok(token)
    }

    fn serve(&self) {
        let mut events = Vec::with_capacity(64);
        loop {
            events.clear();
            if let Err(e) = epoll::wait(&self.epoll, rustix::buffer::spare_capacity(&mut events), None) {
                if e != rustix::io::Errno::INTR {
                    tracing::error!(error = %e, "topic thread cannot wait for events; topics stop linking");
                    return;
                }
                continue;
            }
            for ev in &events {
                match ev.data.u64() {
                    LISTENER => self.accept_all(),
                    INOTIFY => self.rediscover(),
                    token => self.on_link(token),
                }
            }
        }
    }

    fn accept_all(&self) {
        loop {
            let sock = match rustix::net::accept_with(&self.listener, SocketFlags::CLOEXEC) {
                Ok(s) => s,
                Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => return,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot accept a topic link");
                    return;
                }
            };
            // Only the user's own processes may link (the socket's directory is private too).
            let same_user =
                rustix::net::sockopt::socket_peercred(&sock).is_ok_and(|c| c.uid == rustix::process::getuid());
            if !same_user {
                tracing::warn!("refused a topic link from another user");
                continue;
            }
            let timeout = rustix::net::sockopt::set_socket_timeout(
                &sock,
                rustix::net::sockopt::Timeout::Send,
                Some(SEND_TIMEOUT),
            );
            let mut st = lock(&self.state);
            match timeout.map_err(std::io::Error::from).and_then(|()| self.watch(&mut st, &sock)) {
                Ok(token) => {
                    st.links.insert(token, Link::Accepted(sock));
                }
                Err(e) => tracing::warn!(error = %e, "cannot serve a topic link"),
            }
        }
    }

    fn rediscover(&self) {
        let mut buf = [std::mem::MaybeUninit::uninit(); 4096];
        let mut reader = inotify::Reader::new(&self.inotify, &mut buf);
        while reader.next().is_ok() {}
        let mut st = lock(&self.state);
        let subs: Vec<Arc<SubShared>> = st.subscribers.values().filter_map(Weak::upgrade).collect();
        for sub in subs {
            self.discover(&mut st, &sub);
        }
    }

    fn on_link(&self, token: u64) {
        let mut st = lock(&self.state);
        loop {
            let Some(link) = st.links.get(&token) else {
                return;
            };
            // Each end of a link hears only what the other end's role sends.
            let received = match link {
                Link::Accepted(sock) => wire::recv(sock.as_fd()).map(|r| r.map(Heard::FromSubscriber)),
                Link::Reader { sock, .. } => match sock.upgrade() {
                    Some(sock) => wire::recv(sock.as_fd()).map(|r| r.map(Heard::FromSubscriber)),
                    None => Ok(Received::Closed),
                },
                Link::Feed { sock, .. } => match sock.upgrade() {
                    Some(sock) => wire::recv(sock.as_fd()).map(|r| r.map(Heard::FromPublisher)),
                    None => Ok(Received::Closed),
                },
            };
            match received {
                Ok(Received::Empty) => return,
                Ok(Received::Message(msg, fd)) => {
                    if let Err(reason) = self.on_message(&mut st, token, msg, fd) {
                        tracing::warn!(%reason, "topic link dropped");
                        self.close(&mut st, token);
                        return;
                    }
                }
                Ok(Received::Closed) => {
                    self.close(&mut st, token);
                    return;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "topic link dropped");
                    self.close(&mut st, token);
                    return;
                }
            }
        }
    }

    fn on_message(&self, st: &mut State, token: u64, msg: Heard, fd: Option<OwnedFd>) -> Result<(), String> {
        match (st.links.get(&token), msg) {
            (
                Some(Link::Accepted(_)),
                Heard::FromSubscriber(SubscriberMessage::Hello { version, publisher, ring, offset, capacity, policy }),
            ) => {
                let Some(Link::Accepted(sock)) = st.links.remove(&token) else {
                    return Err("link vanished".into());
                };
                let refuse = |sock: &OwnedFd, reason: String| {
                    let _ = wire::send(sock.as_fd(), &PublisherMessage::Refused { reason: reason.clone() }, None);
                    Err(reason)
                };
                if !nerve_message::versions_compatible(&version, nerve_message::NERVE_VERSION) {
                    return refuse(
                        &sock,
                        format!("subscriber uses nerve {version}, publisher nerve {}", nerve_message::NERVE_VERSION),
                    );
                }
                let Some(p) = st.publishers.get(&publisher).and_then(Weak::upgrade) else {
                    return refuse(&sock, format!("publisher {publisher} is closed"));
                };
                if capacity == 0 || capacity > MAX_QUEUE {
                    return refuse(&sock, format!("bad queue shape: queue {ring}, {capacity} entries"));
                }
                let Some(fd) = fd else {
                    return refuse(&sock, "no inbox attached".into());
                };
                let shape = QueueShape { capacity, policy };
                let inbox = match Segment::from_fd("nerve-inbox", &fd, Access::ReadWrite)
                    .and_then(|seg| Inbox::one_queue(seg, offset, shape))
                {
                    Ok(inbox) => Arc::new(inbox),
                    Err(e) => return refuse(&sock, format!("bad inbox queue {ring}: {e}")),
                };
                let sock = Arc::new(sock);
                let edge = p.attach(sock.clone(), inbox)?;
                st.links
                    .insert(token, Link::Reader { publisher: Arc::downgrade(&p), edge, sock: Arc::downgrade(&sock) });
                Ok(())
            }
            (
                Some(Link::Feed { subscriber, ring, handed, .. }),
                Heard::FromPublisher(PublisherMessage::Welcome { edge }),
            ) => {
                let (sub, ring, handed) = (subscriber.upgrade(), *ring, handed.clone());
                let (Some(sub), Some(fd)) = (sub, fd) else {
                    return Err("welcome without a block table, or for a closed subscriber".into());
                };
                if edge >= nerve_shm::pool::MAX_READERS {
                    return Err(format!("reader bit {edge} out of range"));
                }
                sub.welcomed(ring, edge, &fd, handed).map_err(|e| e.to_string())
            }
            (Some(Link::Feed { handed, .. }), Heard::FromPublisher(PublisherMessage::Block { slot, seq })) => {
                let fd = fd.ok_or("block announced without its memory")?;
                let seg = Segment::from_fd("nerve-block", &fd, Access::ReadOnly).map_err(|e| e.to_string())?;
                handed.add(slot, seq, seg);
                Ok(())
            }
            (Some(Link::Feed { .. }), Heard::FromPublisher(PublisherMessage::Refused { reason })) => {
                Err(format!("publisher refused the link: {reason}"))
            }
            (_, other) => Err(format!("unexpected {other:?}")),
        }
    }

    fn close(&self, st: &mut State, token: u64) {
        match st.links.remove(&token) {
            Some(Link::Reader { publisher, edge, .. }) => {
                if let Some(p) = publisher.upgrade() {
                    p.detach(edge);
                }
            }
            Some(Link::Feed { subscriber, ring, .. }) => {
                if let Some(s) = subscriber.upgrade() {
                    s.feed_ended(ring);
                }
            }
            Some(Link::Accepted(_)) | None => {}
        }
    }
}

/// Forgets links whose endpoint or socket is gone (their sockets left epoll when closed).
fn prune(st: &mut State) {
    st.links.retain(|_, link| match link {
        Link::Accepted(_) => true,
        Link::Reader { publisher, sock, .. } => publisher.strong_count() > 0 && sock.strong_count() > 0,
        Link::Feed { subscriber, sock, .. } => subscriber.strong_count() > 0 || sock.strong_count() > 0,
    });
}

/// Removes sockets left by processes that died.
fn sweep_dead_sockets(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let pid = name.to_str().and_then(|n| n.strip_suffix(".sock")).and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid
            && !registry::process_alive(pid)
        {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

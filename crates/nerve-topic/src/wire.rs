//! The transport of a publisher → subscriber link between two processes: a Unix
//! `SOCK_SEQPACKET` connection (message boundaries kept, end-of-stream when a peer dies)
//! carrying the messages of [`nerve_message::subscriber_to_publisher`] one way and
//! [`nerve_message::publisher_to_subscriber`] the other, as JSON, each with at most one file
//! descriptor attached.
//!
//! The messages live with nerve's other wire protocols; this transport stays here, beside the
//! only code that opens such links (both ends are nerve-topic), so the message crate needs no
//! socket code.

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd};

use rustix::io::IoSliceMut;
use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer, SendAncillaryMessage, SendFlags,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Largest message accepted; real ones are a few hundred bytes.
const MAX_MESSAGE: usize = 16 * 1024;

/// Sends `msg` with `fd` attached, blocking while the socket buffer is full.
///
/// # Errors
/// When the peer is gone or the send times out.
pub fn send(sock: BorrowedFd<'_>, msg: &impl Serialize, fd: Option<BorrowedFd<'_>>) -> io::Result<()> {
    let body = serde_json::to_vec(msg).map_err(io::Error::other)?;
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    let fds;
    if let Some(fd) = fd {
        fds = [fd];
        control.push(SendAncillaryMessage::ScmRights(&fds));
    }
    let sent = rustix::net::sendmsg(sock, &[io::IoSlice::new(&body)], &mut control, SendFlags::NOSIGNAL)?;
    if sent != body.len() {
        return Err(io::Error::other("short send on a message socket"));
    }
    Ok(())
}

/// What [`recv`] found.
#[derive(Debug)]
pub enum Received<M> {
    /// A message, with the descriptor attached to it, if any.
    Message(M, Option<OwnedFd>),
    /// Nothing waiting.
    Empty,
    /// The peer is gone.
    Closed,
}

impl<M> Received<M> {
    /// The same, with the message passed through `f`.
    pub fn map<N>(self, f: impl FnOnce(M) -> N) -> Received<N> {
        match self {
            Self::Message(m, fd) => Received::Message(f(m), fd),
            Self::Empty => Received::Empty,
            Self::Closed => Received::Closed,
        }
    }
}

/// Takes the next message, of the kind `M` the peer sends, without waiting.
///
/// # Errors
/// When the message is not an `M` (a peer speaking something else).
pub fn recv<M: DeserializeOwned>(sock: BorrowedFd<'_>) -> io::Result<Received<M>> {
    let mut body = vec![0u8; MAX_MESSAGE];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(4))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let got = match rustix::net::recvmsg(
        sock,
        &mut [IoSliceMut::new(&mut body)],
        &mut control,
        RecvFlags::DONTWAIT | RecvFlags::CMSG_CLOEXEC,
    ) {
        Ok(got) => got,
        Err(rustix::io::Errno::AGAIN) => return Ok(Received::Empty),
        Err(rustix::io::Errno::CONNRESET | rustix::io::Errno::PIPE) => return Ok(Received::Closed),
        Err(e) => return Err(e.into()),
    };
    let mut fds: Vec<OwnedFd> = Vec::new();
    for m in control.drain() {
        if let RecvAncillaryMessage::ScmRights(rights) = m {
            fds.extend(rights);
        }
    }
    if got.bytes == 0 {
        return Ok(Received::Closed);
    }
    if got.flags.contains(rustix::net::ReturnFlags::TRUNC) || fds.len() > 1 {
        return Err(io::Error::other("oversized message on a topic link"));
    }
    let msg = serde_json::from_slice(&body[..got.bytes])
        .map_err(|e| io::Error::other(format!("malformed message on a topic link: {e}")))?;
    Ok(Received::Message(msg, fds.pop()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nerve_message::publisher_to_subscriber::PublisherMessage;
    use rustix::net::{AddressFamily, SocketFlags, SocketType};
    use std::os::fd::AsFd;

    #[test]
    fn a_message_carries_its_descriptor_and_eof_is_seen() -> io::Result<()> {
        let (a, b) = rustix::net::socketpair(AddressFamily::UNIX, SocketType::SEQPACKET, SocketFlags::CLOEXEC, None)?;
        let seg = nerve_shm::segment::Segment::anonymous("wire-test", 4096, false).map_err(io::Error::other)?;
        // SAFETY: the segment is 4096 bytes long and nobody else touches it.
        unsafe { seg.as_ptr().write(42) };
        send(a.as_fd(), &PublisherMessage::Block { slot: 3, seq: 9 }, seg.fd())?;
        send(a.as_fd(), &PublisherMessage::Welcome { edge: 1 }, None)?;
        let Received::Message(PublisherMessage::Block { slot: 3, seq: 9 }, Some(fd)) = recv(b.as_fd())? else {
            return Err(io::Error::other("expected the block"));
        };
        let view = nerve_shm::segment::Segment::from_fd("wire-test", &fd, nerve_shm::segment::Access::ReadOnly)
            .map_err(io::Error::other)?;
        // SAFETY: mapped, at least one byte long.
        assert_eq!(unsafe { view.as_ptr().read() }, 42);
        assert!(matches!(recv(b.as_fd())?, Received::Message(PublisherMessage::Welcome { edge: 1 }, None)));
        assert!(matches!(recv::<PublisherMessage>(b.as_fd())?, Received::Empty));
        drop(a);
        assert!(matches!(recv::<PublisherMessage>(b.as_fd())?, Received::Closed));
        Ok(())
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() -> io::Result<()> {
        let (a, b) = rustix::net::socketpair(AddressFamily::UNIX, SocketType::SEQPACKET, SocketFlags::CLOEXEC, None)?;
        rustix::net::send(&a, b"\xff\x00not json", SendFlags::empty())?;
        assert!(recv::<PublisherMessage>(b.as_fd()).is_err());
        Ok(())
    }
}

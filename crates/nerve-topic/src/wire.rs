//! Messages between the two processes of one publisher → subscriber link, over a Unix
//! `SOCK_SEQPACKET` connection (message boundaries kept, end-of-stream when a peer dies).
//!
//! Shared memory travels as file descriptors attached to the messages: the subscriber's inbox
//! with its `Hello`, the publisher's block table with `Welcome`, each block with `Block`
//! (always before the first message that uses it). Data never travels here.

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd};

use nerve_shm::ring::Policy;
use rustix::io::IoSliceMut;
use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer, SendAncillaryMessage, SendFlags,
};
use serde::{Deserialize, Serialize};

/// Largest message accepted; real ones are a few hundred bytes.
const MAX_MESSAGE: usize = 16 * 1024;

/// One message of the link protocol.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "msg", rename_all = "snake_case")]
pub enum Wire {
    /// Subscriber → publisher: "queue messages of your endpoint `publisher` into the queue of
    /// `capacity` entries at byte `offset` of the inbox attached" (the subscriber's own inbox,
    /// or the inbox of the node it serves, whose other queues are not the publisher's business).
    Hello {
        /// nerve version of the subscriber.
        version: String,
        /// Publisher endpoint id, from its registry entry.
        publisher: u64,
        /// Index of the queue in the inbox (for logs).
        ring: usize,
        /// Where the queue starts in the inbox, in bytes.
        offset: usize,
        /// Entries of the queue.
        capacity: usize,
        /// Policy of the queue.
        policy: Policy,
    },
    /// Publisher → subscriber: accepted as reader bit `edge`; the block table is attached.
    Welcome {
        /// The reader's holder bit.
        edge: usize,
    },
    /// Publisher → subscriber: not accepted, and why.
    Refused {
        /// Reason, for the subscriber's log.
        reason: String,
    },
    /// Publisher → subscriber: block `seq` now lives in table slot `slot`; attached.
    Block {
        /// Table slot.
        slot: u32,
        /// Block generation.
        seq: u64,
    },
}

/// Sends `msg` with `fd` attached, blocking while the socket buffer is full.
///
/// # Errors
/// When the peer is gone or the send times out.
pub fn send(sock: BorrowedFd<'_>, msg: &Wire, fd: Option<BorrowedFd<'_>>) -> io::Result<()> {
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
pub enum Received {
    /// A message, with the descriptor attached to it, if any.
    Message(Wire, Option<OwnedFd>),
    /// Nothing waiting.
    Empty,
    /// The peer is gone.
    Closed,
}

/// Takes the next message without waiting.
///
/// # Errors
/// When the message is not one of the protocol's (a peer speaking something else).
pub fn recv(sock: BorrowedFd<'_>) -> io::Result<Received> {
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
    use rustix::net::{AddressFamily, SocketFlags, SocketType};
    use std::os::fd::AsFd;

    #[test]
    fn a_message_carries_its_descriptor_and_eof_is_seen() -> io::Result<()> {
        let (a, b) = rustix::net::socketpair(AddressFamily::UNIX, SocketType::SEQPACKET, SocketFlags::CLOEXEC, None)?;
        let seg = nerve_shm::segment::Segment::anonymous("wire-test", 4096, false).map_err(io::Error::other)?;
        // SAFETY: the segment is 4096 bytes long and nobody else touches it.
        unsafe { seg.as_ptr().write(42) };
        send(a.as_fd(), &Wire::Block { slot: 3, seq: 9 }, seg.fd())?;
        send(a.as_fd(), &Wire::Welcome { edge: 1 }, None)?;
        let Received::Message(Wire::Block { slot: 3, seq: 9 }, Some(fd)) = recv(b.as_fd())? else {
            return Err(io::Error::other("expected the block"));
        };
        let view = nerve_shm::segment::Segment::from_fd("wire-test", &fd, nerve_shm::segment::Access::ReadOnly)
            .map_err(io::Error::other)?;
        // SAFETY: mapped, at least one byte long.
        assert_eq!(unsafe { view.as_ptr().read() }, 42);
        assert!(matches!(recv(b.as_fd())?, Received::Message(Wire::Welcome { edge: 1 }, None)));
        assert!(matches!(recv(b.as_fd())?, Received::Empty));
        drop(a);
        assert!(matches!(recv(b.as_fd())?, Received::Closed));
        Ok(())
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() -> io::Result<()> {
        let (a, b) = rustix::net::socketpair(AddressFamily::UNIX, SocketType::SEQPACKET, SocketFlags::CLOEXEC, None)?;
        rustix::net::send(&a, b"\xff\x00not json", SendFlags::empty())?;
        assert!(recv(b.as_fd()).is_err());
        Ok(())
    }
}

//! POSIX shared-memory segments: created private to the user, mapped once, never shrunk.

use std::ffi::CString;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::ptr::NonNull;

use rustix::fs::Mode;
use rustix::mm::{MapFlags, ProtFlags};
use rustix::shm::OFlags;

use crate::error::ShmError;

/// Page size used to round block sizes; Linux x86-64 and aarch64 defaults.
pub const PAGE_SIZE: usize = 4096;

/// Rounds `len` up to a whole number of pages (at least one page).
#[must_use]
pub fn page_round(len: usize) -> usize {
    len.max(1).div_ceil(PAGE_SIZE) * PAGE_SIZE
}

/// Whether a mapping may be written through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Readers of data blocks: a stray write faults instead of corrupting a message.
    ReadOnly,
    /// Owners of a segment, and everyone for control segments (atomics are written).
    ReadWrite,
}

/// One mapped shared-memory object.
///
/// The mapping lives until the value is dropped; unlinking the name does not affect it, and the
/// object is never truncated after creation, so a reader can never fault on a shrunk block.
///
/// A segment is either named (POSIX `shm_open`, found by name; dataflows use these so the
/// runtime can sweep a run's objects) or anonymous (`memfd_create`, handed to other processes
/// as a file descriptor; the kernel frees it when the last process lets go, so a crash can
/// leave nothing behind).
#[derive(Debug)]
pub struct Segment {
    name: String,
    ptr: NonNull<u8>,
    len: usize,
    /// Whether `name` is a POSIX shared-memory name (rather than a label).
    named: bool,
    /// Kept for anonymous segments this process created, and named ones opened to be shared,
    /// so it can hand them out.
    fd: Option<OwnedFd>,
}

// SAFETY: the mapping is plain shared memory; all concurrent access to it goes through atomics
// or through byte ranges whose ownership is handed over by the queue protocol.
unsafe impl Send for Segment {}
// SAFETY: see `Send`.
unsafe impl Sync for Segment {}

impl Segment {
    /// Creates a new object of `len` bytes (mode 0600, fails if the name exists) and maps it.
    ///
    /// With `populate`, every page is faulted in now, off the hot path: writing into freshly
    /// mapped memory is several times slower than into warm pages.
    ///
    /// # Errors
    /// [`ShmError::Create`] when the object cannot be created, sized or mapped.
    pub fn create(name: &str, len: usize, populate: bool) -> Result<Self, ShmError> {
        let cname = shm_name(name)?;
        let err = |source| ShmError::Create { name: name.to_owned(), len, source };
        let fd =
            rustix::shm::open(cname.as_c_str(), OFlags::CREATE | OFlags::EXCL | OFlags::RDWR, Mode::RUSR | Mode::WUSR)
                .map_err(|e| err(e.into()))?;
        let sized =
            rustix::fs::fchmod(&fd, Mode::RUSR | Mode::WUSR).and_then(|()| rustix::fs::ftruncate(&fd, len as u64));
        if let Err(e) = sized {
            let _ = rustix::shm::unlink(cname.as_c_str());
            return Err(err(e.into()));
        }
        match map(&fd, len, Access::ReadWrite, populate) {
            Ok(ptr) => Ok(Self { name: name.to_owned(), ptr, len, named: true, fd: None }),
            Err(e) => {
                let _ = rustix::shm::unlink(cname.as_c_str());
                Err(err(e))
            }
        }
    }

    /// Maps an existing object; its length is taken from the object itself.
    ///
    /// # Errors
    /// [`ShmError::Open`] when the object does not exist or cannot be mapped.
    pub fn open(name: &str, access: Access) -> Result<Self, ShmError> {
        Self::open_named(name, access, false)
    }

    /// Like [`Segment::open`], keeping the descriptor so that [`Segment::fd`] can hand the
    /// object to another process (a node's inbox, which topic publishers of other processes
    /// queue into).
    ///
    /// # Errors
    /// As [`Segment::open`].
    pub fn open_shareable(name: &str, access: Access) -> Result<Self, ShmError> {
        Self::open_named(name, access, true)
    }

    fn open_named(name: &str, access: Access, keep_fd: bool) -> Result<Self, ShmError> {
        let cname = shm_name(name)?;
        let err = |source| ShmError::Open { name: name.to_owned(), source };
        let flags = match access {
            Access::ReadOnly => OFlags::RDONLY,
            Access::ReadWrite => OFlags::RDWR,
        };
        let fd = rustix::shm::open(cname.as_c_str(), flags, Mode::empty()).map_err(|e| err(e.into()))?;
        let stat = rustix::fs::fstat(&fd).map_err(|e| err(e.into()))?;
        let len = usize::try_from(stat.st_size).unwrap_or(0);
        if len == 0 {
            return Err(err(std::io::Error::other("shared-memory object is empty")));
        }
        let ptr = map(&fd, len, access, false).map_err(err)?;
        Ok(Self { name: name.to_owned(), ptr, len, named: true, fd: keep_fd.then_some(fd) })
    }

    /// Creates an anonymous object of `len` bytes (`label` only names it in `/proc` and in
    /// errors) and maps it read-write; [`Segment::fd`] hands it to other processes.
    ///
    /// # Errors
    /// [`ShmError::Create`] when the object cannot be created, sized or mapped.
    pub fn anonymous(label: &str, len: usize, populate: bool) -> Result<Self, ShmError> {
        let err = |source: std::io::Error| ShmError::Create { name: label.to_owned(), len, source };
        let cname = CString::new(label).map_err(|_| ShmError::BadName(label.to_owned()))?;
        let fd =
            rustix::fs::memfd_create(cname.as_c_str(), rustix::fs::MemfdFlags::CLOEXEC).map_err(|e| err(e.into()))?;
        rustix::fs::ftruncate(&fd, len as u64).map_err(|e| err(e.into()))?;
        let ptr = map(&fd, len, Access::ReadWrite, populate).map_err(err)?;
        Ok(Self { name: label.to_owned(), ptr, len, named: false, fd: Some(fd) })
    }

    /// Maps an object received as a file descriptor; its length is taken from the object.
    ///
    /// # Errors
    /// [`ShmError::Open`] when the descriptor is not a mappable, non-empty object.
    pub fn from_fd(label: &str, fd: &OwnedFd, access: Access) -> Result<Self, ShmError> {
        let err = |source| ShmError::Open { name: label.to_owned(), source };
        let stat = rustix::fs::fstat(fd).map_err(|e| err(e.into()))?;
        let len = usize::try_from(stat.st_size).unwrap_or(0);
        if len == 0 {
            return Err(err(std::io::Error::other("shared-memory object is empty")));
        }
        let ptr = map(fd, len, access, false).map_err(err)?;
        Ok(Self { name: label.to_owned(), ptr, len, named: false, fd: None })
    }

    /// The descriptor of an anonymous segment this process created, or of one opened with
    /// [`Segment::open_shareable`], to hand to another process.
    #[must_use]
    pub fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.fd.as_ref().map(AsFd::as_fd)
    }

    /// The object's name (without the leading `/`), or an anonymous segment's label.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Mapped length in bytes.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: segments are never empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Start of the mapping.
    #[must_use]
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Removes the name; existing mappings stay valid. Anonymous segments have no name.
    pub fn unlink(&self) {
        if self.named {
            unlink(&self.name);
        }
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` describe a mapping made by `map` and owned by this value.
        if let Err(e) = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), self.len) } {
            tracing::warn!(segment = %self.name, error = %e, "munmap failed");
        }
    }
}

/// Removes a shared-memory name, ignoring one that is already gone.
pub fn unlink(name: &str) {
    if let Ok(cname) = shm_name(name) {
        match rustix::shm::unlink(cname.as_c_str()) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => {}
            Err(e) => tracing::warn!(segment = %name, error = %e, "shm_unlink failed"),
        }
    }
}

fn shm_name(name: &str) -> Result<CString, ShmError> {
    if name.is_empty() || name.contains('/') || name.len() > 250 {
        return Err(ShmError::BadName(name.to_owned()));
    }
    CString::new(format!("/{name}")).map_err(|_| ShmError::BadName(name.to_owned()))
}

fn map(fd: &OwnedFd, len: usize, access: Access, populate: bool) -> Result<NonNull<u8>, std::io::Error> {
    let prot = match access {
        Access::ReadOnly => ProtFlags::READ,
        Access::ReadWrite => ProtFlags::READ | ProtFlags::WRITE,
    };
    let mut flags = MapFlags::SHARED;
    if populate {
        flags |= MapFlags::POPULATE;
    }
    // SAFETY: a fresh mapping at an address chosen by the kernel aliases no Rust object.
    let ptr = unsafe { rustix::mm::mmap(std::ptr::null_mut(), len, prot, flags, fd, 0) }?;
    NonNull::new(ptr.cast()).ok_or_else(|| std::io::Error::other("mmap returned null"))
}

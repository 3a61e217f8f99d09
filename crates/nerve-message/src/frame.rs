//! Length-prefixed JSON frames: a little-endian `u32` length, then that many bytes of JSON.

use std::io::{self, Read, Write};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Largest frame accepted; a larger length prefix is refused before anything is allocated.
pub const MAX_FRAME: usize = 16 << 20;

/// A frame that could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The peer closed the connection.
    #[error("connection closed")]
    Closed,
    /// An I/O error.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A length prefix beyond [`MAX_FRAME`].
    #[error("frame of {0} bytes exceeds the {MAX_FRAME}-byte limit")]
    TooLarge(usize),
    /// Bytes that are not the expected message.
    #[error("malformed control message: {0}")]
    Malformed(#[from] serde_json::Error),
}

/// Writes one message as a frame.
///
/// # Errors
/// On I/O failure or a message too large to frame.
pub fn write<T: Serialize>(w: &mut impl Write, msg: &T) -> Result<(), FrameError> {
    let body = serde_json::to_vec(msg)?;
    if body.len() > MAX_FRAME {
        return Err(FrameError::TooLarge(body.len()));
    }
    let len = u32::try_from(body.len()).map_err(|_| FrameError::TooLarge(body.len()))?;
    let mut buf = Vec::with_capacity(4 + body.len());
    buf.extend_from_slice(&len.to_le_bytes());
    buf.extend_from_slice(&body);
    w.write_all(&buf)?;
    w.flush()?;
    Ok(())
}

/// Reads one frame and decodes it.
///
/// # Errors
/// [`FrameError::Closed`] at a clean end of stream; otherwise on I/O failure or bad bytes.
pub fn read<T: DeserializeOwned>(r: &mut impl Read) -> Result<T, FrameError> {
    let mut len = [0u8; 4];
    if let Err(e) = r.read_exact(&mut len) {
        return Err(if e.kind() == io::ErrorKind::UnexpectedEof { FrameError::Closed } else { e.into() });
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(FrameError::TooLarge(len));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body)?;
    Ok(serde_json::from_slice(&body)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node_to_runtime::NodeRequest;

    #[test]
    fn refuses_huge_and_garbage_frames() {
        let huge = (MAX_FRAME as u32 + 1).to_le_bytes();
        assert!(matches!(read::<NodeRequest>(&mut huge.as_slice()), Err(FrameError::TooLarge(_))));
        let mut garbage = 3u32.to_le_bytes().to_vec();
        garbage.extend_from_slice(b"{x}");
        assert!(matches!(read::<NodeRequest>(&mut garbage.as_slice()), Err(FrameError::Malformed(_))));
        assert!(matches!(read::<NodeRequest>(&mut [].as_slice()), Err(FrameError::Closed)));
    }
}

//! Errors of the transform tree, each naming the frames concerned.

use std::fmt;

use nerve_topic::TopicError;

/// A time in nanoseconds, shown as seconds with every digit (`1712345678.250000000 s`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stamp(pub i64);

impl fmt::Display for Stamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let ns = self.0.unsigned_abs();
        write!(f, "{sign}{}.{:09} s", ns / 1_000_000_000, ns % 1_000_000_000)
    }
}

/// Which way a lookup left the range of an edge's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Before the oldest transform kept.
    Past,
    /// After the newest transform received.
    Future,
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Past => "past",
            Self::Future => "future",
        })
    }
}

/// What went wrong building the tree, looking a transform up, or talking to the topics.
#[derive(Debug, thiserror::Error)]
pub enum TfError {
    /// No transform names the frame.
    #[error(
        "unknown frame `{frame}` (known frames: {}); a frame is known once a transform naming it \
         reached this listener, and a static one reaches listeners that start later only while \
         its StaticTransformBroadcaster is alive",
        list(known)
    )]
    UnknownFrame {
        /// The frame asked for.
        frame: String,
        /// Every frame the tree has, sorted.
        known: Vec<String>,
    },
    /// The two frames are in different trees: no chain of transforms joins them.
    #[error(
        "frames `{target_frame}` and `{source_frame}` are not connected: `{target_frame}` is in the tree of \
         `{target_root}`, `{source_frame}` in the tree of `{source_root}`"
    )]
    NotConnected {
        /// The lookup's target frame.
        target_frame: String,
        /// The lookup's source frame.
        source_frame: String,
        /// The root of the target's tree.
        target_root: String,
        /// The root of the source's tree.
        source_root: String,
    },
    /// The time asked for is outside the transforms one edge of the chain holds.
    #[error(
        "lookup at {requested} would extrapolate into the {direction} on `{parent}` -> `{child}`: \
         transforms available from {oldest} to {latest}"
    )]
    Extrapolation {
        /// Before the oldest or after the newest transform.
        direction: Direction,
        /// The edge's parent frame.
        parent: String,
        /// The edge's child frame.
        child: String,
        /// The time asked for.
        requested: Stamp,
        /// The edge's oldest transform kept.
        oldest: Stamp,
        /// The edge's newest transform.
        latest: Stamp,
    },
    /// A transform gives a frame a second parent; each frame has one.
    #[error("frame `{child}` already has parent `{parent}`; a transform from `{new_parent}` is refused")]
    TwoParents {
        /// The frame.
        child: String,
        /// Its parent in the tree.
        parent: String,
        /// The parent the refused transform names.
        new_parent: String,
    },
    /// A transform would close a loop: `parent` is `child` or one of its descendants.
    #[error("transform `{parent}` -> `{child}` would make a loop: `{parent}` already descends from `{child}`")]
    Loop {
        /// The parent the refused transform names.
        parent: String,
        /// The child the refused transform names.
        child: String,
    },
    /// A time-stamped transform older than what the edge keeps.
    #[error("transform `{parent}` -> `{child}` at {stamp} is older than the history kept (from {oldest})")]
    TooOld {
        /// The edge's parent frame.
        parent: String,
        /// The edge's child frame.
        child: String,
        /// The refused transform's stamp.
        stamp: Stamp,
        /// The oldest transform the edge keeps.
        oldest: Stamp,
    },
    /// A transform with an empty frame name or values that are not a rigid transform.
    #[error("invalid transform `{parent}` -> `{child}`: {why}")]
    Invalid {
        /// Its parent frame.
        parent: String,
        /// Its child frame.
        child: String,
        /// What is wrong.
        why: String,
    },
    /// A message on a transform topic that is not in the transform schema.
    #[error("malformed message on topic `{topic}`: {why}")]
    Malformed {
        /// The topic.
        topic: String,
        /// What is wrong.
        why: String,
    },
    /// The topic layer failed.
    #[error(transparent)]
    Topic(#[from] TopicError),
}

/// Why a translation and a rotation are not a rigid transform (see
/// [`Transform::new`](crate::Transform::new)).
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum TransformError {
    /// A coordinate of the translation is NaN or infinite.
    #[error("translation {translation:?} is not finite")]
    Translation {
        /// The translation given.
        translation: [f64; 3],
    },
    /// The quaternion has a length of zero, or a value that is not finite.
    #[error("rotation {rotation:?} is not a usable quaternion (x, y, z, w)")]
    Rotation {
        /// The quaternion given, x, y, z, w.
        rotation: [f64; 4],
    },
}

fn list(frames: &[String]) -> String {
    if frames.is_empty() { "none yet".to_owned() } else { frames.join(", ") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_show_every_digit() {
        assert_eq!(Stamp(1_500_000_001).to_string(), "1.500000001 s");
        assert_eq!(Stamp(-250_000_000).to_string(), "-0.250000000 s");
    }
}

//! The frame graph: each frame has at most one parent, each edge a history of transforms, and
//! a lookup composes the edges between two frames through their common ancestor.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use crate::error::{Stamp, TfError};
use crate::history::{History, OutOfRange};
use crate::transform::{StampedTransform, Transform};

/// How much history a moving edge keeps unless told otherwise (tf2's default).
pub const DEFAULT_CACHE: Duration = Duration::from_secs(10);

/// One edge of the tree as `nerve tf tree` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeInfo {
    /// The parent frame.
    pub parent: String,
    /// The child frame.
    pub child: String,
    /// Sent on `tf_static`: valid at every time.
    pub is_static: bool,
    /// Stamp of the oldest transform kept (a static edge's stamp).
    pub oldest_ns: i64,
    /// Stamp of the newest transform (a static edge's stamp).
    pub latest_ns: i64,
    /// Transforms per second, from the stamps kept (`None` when static or only one).
    pub rate_hz: Option<f64>,
}

struct Edge {
    parent: String,
    history: History,
}

/// The frames and the transforms between them, with no I/O: fed by a
/// [`TransformBuffer`](crate::TransformBuffer) from the topics, or directly (recorded data,
/// tests).
///
/// ```
/// use nerve_tf::{FrameTree, StampedTransform, Transform};
///
/// let mut tree = FrameTree::new(nerve_tf::DEFAULT_CACHE);
/// let moved = |x| Transform::new([x, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]);
/// tree.insert(&StampedTransform::new("world", "base", 1_000, moved(1.0)?), false)?;
/// tree.insert(&StampedTransform::new("world", "base", 2_000, moved(3.0)?), false)?;
/// tree.insert(&StampedTransform::new("base", "camera", 0, moved(0.5)?), true)?;
/// let camera = tree.lookup("world", "camera", Some(1_500))?;
/// assert_eq!(camera.transform.translation, [2.5, 0.0, 0.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FrameTree {
    cache_ns: i64,
    /// By child frame.
    edges: HashMap<String, Edge>,
}

impl FrameTree {
    /// An empty tree whose moving edges keep `cache` of history.
    #[must_use]
    pub fn new(cache: Duration) -> Self {
        Self { cache_ns: i64::try_from(cache.as_nanos()).unwrap_or(i64::MAX), edges: HashMap::new() }
    }

    /// Adds a transform: static ones hold at every time, others join their edge's history.
    ///
    /// # Errors
    /// [`TfError::Invalid`] (empty frame name, values that are not a rigid transform),
    /// [`TfError::TwoParents`], [`TfError::Loop`], or [`TfError::TooOld`] for a transform older
    /// than the history kept.
    pub fn insert(&mut self, t: &StampedTransform, is_static: bool) -> Result<(), TfError> {
        let transform = t.checked()?.transform;
        if let Some(edge) = self.edges.get_mut(&t.child) {
            if edge.parent != t.parent {
                return Err(TfError::TwoParents {
                    child: t.child.clone(),
                    parent: edge.parent.clone(),
                    new_parent: t.parent.clone(),
                });
            }
            return edge.history.insert(is_static, t.stamp_ns, transform, self.cache_ns).map_err(|oldest| {
                TfError::TooOld { parent: t.parent.clone(), child: t.child.clone(), stamp: Stamp(t.stamp_ns), oldest }
            });
        }
        if self.ancestors(&t.parent).any(|f| f == t.child) {
            return Err(TfError::Loop { parent: t.parent.clone(), child: t.child.clone() });
        }
        let edge = Edge { parent: t.parent.clone(), history: History::new(is_static, t.stamp_ns, transform) };
        self.edges.insert(t.child.clone(), edge);
        Ok(())
    }

    /// The transform mapping coordinates in `source` to coordinates in `target` (the pose of
    /// `source` in `target`) at `time` in nanoseconds, composed through the frames' common
    /// ancestor; moving edges are interpolated between the transforms around `time`. With
    /// `time` `None`, the latest time every moving edge of the chain has reached (0 when all
    /// are static). The result's `parent` is `target`, its `child` `source`.
    ///
    /// # Errors
    /// [`TfError::UnknownFrame`], [`TfError::NotConnected`], or [`TfError::Extrapolation`]
    /// naming the edge and the range it holds.
    pub fn lookup(&self, target: &str, source: &str, time: Option<i64>) -> Result<StampedTransform, TfError> {
        for frame in [target, source] {
            if !self.has_frame(frame) {
                return Err(TfError::UnknownFrame { frame: frame.to_owned(), known: self.frames() });
            }
        }
        let up_source: Vec<&str> = self.ancestors(source).collect();
        let up_target: Vec<&str> = self.ancestors(target).collect();
        let Some(common) = up_source.iter().position(|f| up_target.contains(f)) else {
            let root = |chain: &[&str]| chain.last().map_or_else(String::new, |r| (*r).to_owned());
            return Err(TfError::NotConnected {
                target_frame: target.to_owned(),
                source_frame: source.to_owned(),
                target_root: root(&up_target),
                source_root: root(&up_source),
            });
        };
        let ancestor = up_source[common];
        let from_source = &up_source[..common];
        let from_target = &up_target[..up_target.iter().position(|f| *f == ancestor).unwrap_or(0)];
        let time = time.unwrap_or_else(|| self.latest_common(from_source.iter().chain(from_target)));
        let source_in_ancestor = self.climb(from_source, time)?;
        let target_in_ancestor = self.climb(from_target, time)?;
        Ok(StampedTransform::new(target, source, time, target_in_ancestor.inverse().compose(&source_in_ancestor)))
    }

    /// Whether any transform names `frame`.
    #[must_use]
    pub fn has_frame(&self, frame: &str) -> bool {
        self.edges.contains_key(frame) || self.edges.values().any(|e| e.parent == frame)
    }

    /// Every frame, sorted.
    #[must_use]
    pub fn frames(&self) -> Vec<String> {
        let all: BTreeSet<&String> = self.edges.iter().flat_map(|(child, e)| [child, &e.parent]).collect();
        all.into_iter().cloned().collect()
    }

    /// Every edge, sorted by parent then child.
    #[must_use]
    pub fn edges(&self) -> Vec<EdgeInfo> {
        let mut edges: Vec<EdgeInfo> = self
            .edges
            .iter()
            .map(|(child, e)| {
                let (oldest_ns, latest_ns) = e.history.range();
                EdgeInfo {
                    parent: e.parent.clone(),
                    child: child.clone(),
                    is_static: e.history.is_static(),
                    oldest_ns,
                    latest_ns,
                    rate_hz: e.history.rate_hz(),
                }
            })
            .collect();
        edges.sort_by(|a, b| (&a.parent, &a.child).cmp(&(&b.parent, &b.child)));
        edges
    }

    /// `frame`, its parent, its parent's parent… up to its root.
    fn ancestors<'a>(&'a self, frame: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        // `insert` refuses loops, so the walk ends; the bound keeps it finite regardless.
        std::iter::successors(Some(frame), |f| self.edges.get(*f).map(|e| e.parent.as_str())).take(self.edges.len() + 1)
    }

    /// The newest time every moving edge among `children`'s edges has reached.
    fn latest_common<'a>(&self, children: impl Iterator<Item = &'a &'a str>) -> i64 {
        children
            .filter_map(|c| self.edges.get(*c))
            .filter(|e| !e.history.is_static())
            .map(|e| e.history.range().1)
            .min()
            .unwrap_or(0)
    }

    /// The pose of `chain[0]` in the parent of its last frame, at `time`.
    fn climb(&self, chain: &[&str], time: i64) -> Result<Transform, TfError> {
        chain.iter().try_fold(Transform::IDENTITY, |acc, child| {
            let Some(edge) = self.edges.get(*child) else { return Ok(acc) };
            let step =
                edge.history.at(time).map_err(|OutOfRange { direction, oldest, latest }| TfError::Extrapolation {
                    direction,
                    parent: edge.parent.clone(),
                    child: (*child).to_owned(),
                    requested: Stamp(time),
                    oldest,
                    latest,
                })?;
            Ok(step.compose(&acc))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Direction;
    use crate::transform::tests::{close, yaw};

    fn tf(parent: &str, child: &str, stamp: i64, translation: [f64; 3], rotation: [f64; 4]) -> StampedTransform {
        StampedTransform::new(parent, child, stamp, Transform { translation, rotation })
    }

    /// world -> base moving along x and turning; base -> camera static; world -> map -> odom.
    fn robot() -> Result<FrameTree, TfError> {
        let mut tree = FrameTree::new(DEFAULT_CACHE);
        tree.insert(&tf("world", "base", 1_000, [0.0, 0.0, 0.0], yaw(0.0)), false)?;
        tree.insert(&tf("world", "base", 3_000, [2.0, 0.0, 0.0], yaw(std::f64::consts::FRAC_PI_2)), false)?;
        tree.insert(&tf("base", "camera", 0, [1.0, 0.0, 0.5], yaw(0.0)), true)?;
        tree.insert(&tf("world", "map", 0, [10.0, 0.0, 0.0], yaw(0.0)), true)?;
        tree.insert(&tf("map", "odom", 2_000, [0.0, 5.0, 0.0], yaw(0.0)), false)?;
        Ok(tree)
    }

    #[test]
    fn looks_up_across_three_frames_between_two_stamps() -> Result<(), TfError> {
        let tree = robot()?;
        // Halfway: base at x=1 turned by 45°, the camera 1 m ahead of it and 0.5 m up.
        let camera = tree.lookup("world", "camera", Some(2_000))?;
        let h = std::f64::consts::FRAC_1_SQRT_2;
        assert!(close(&camera.transform.translation, &[1.0 + h, h, 0.5]), "{camera:?}");
        assert!(close(&camera.transform.rotation, &yaw(std::f64::consts::FRAC_PI_4)));
        assert_eq!((camera.parent.as_str(), camera.child.as_str(), camera.stamp_ns), ("world", "camera", 2_000));
        // The other way round is the inverse.
        let back = tree.lookup("camera", "world", Some(2_000))?;
        assert!(close(&back.transform.compose(&camera.transform).translation, &[0.0; 3]));
        Ok(())
    }

    #[test]
    fn goes_through_the_common_ancestor_of_two_branches() -> Result<(), TfError> {
        let tree = robot()?;
        // odom is at (10, 5) in world; camera at (3, 0, 0.5) turned 90° when base is at x=2.
        let t = tree.lookup("odom", "camera", Some(2_000))?;
        let world_camera = tree.lookup("world", "camera", Some(2_000))?.transform;
        let expected: Vec<f64> = world_camera.translation.iter().zip([10.0, 5.0, 0.0]).map(|(a, b)| a - b).collect();
        assert!(close(&t.transform.translation, &expected), "{t:?}");
        Ok(())
    }

    #[test]
    fn latest_common_time_is_the_oldest_newest_stamp_of_the_chain() -> Result<(), TfError> {
        let tree = robot()?;
        // base ends at 3000, odom at 2000: the chain camera -> odom is known up to 2000.
        assert_eq!(tree.lookup("odom", "camera", None)?.stamp_ns, 2_000);
        assert_eq!(tree.lookup("world", "camera", None)?.stamp_ns, 3_000);
        assert_eq!(tree.lookup("world", "map", None)?.stamp_ns, 0);
        assert_eq!(tree.lookup("base", "base", None)?.transform, Transform::IDENTITY);
        Ok(())
    }

    #[test]
    fn extrapolation_names_the_edge_the_time_and_the_range() -> Result<(), TfError> {
        let tree = robot()?;
        match tree.lookup("world", "camera", Some(3_500)) {
            Err(TfError::Extrapolation { direction: Direction::Future, parent, child, requested, oldest, latest }) => {
                assert_eq!((parent.as_str(), child.as_str()), ("world", "base"));
                assert_eq!((requested, oldest, latest), (Stamp(3_500), Stamp(1_000), Stamp(3_000)));
            }
            other => panic!("expected extrapolation into the future, got {other:?}"),
        }
        let err = tree.lookup("world", "camera", Some(500)).expect_err("before the history");
        let text = err.to_string();
        assert!(text.contains("into the past") && text.contains("0.000000500 s"), "{text}");
        assert!(text.contains("from 0.000001000 s to 0.000003000 s"), "{text}");
        Ok(())
    }

    #[test]
    fn unknown_and_disconnected_frames_are_named() -> Result<(), TfError> {
        let mut tree = robot()?;
        let text = tree.lookup("world", "gripper", None).expect_err("unknown").to_string();
        assert!(text.contains("unknown frame `gripper`") && text.contains("base, camera, map, odom, world"), "{text}");
        tree.insert(&tf("moon", "lander", 0, [0.0; 3], yaw(0.0)), true)?;
        match tree.lookup("camera", "lander", None) {
            Err(TfError::NotConnected { target_root, source_root, .. }) => {
                assert_eq!((target_root.as_str(), source_root.as_str()), ("world", "moon"));
            }
            other => panic!("expected not connected, got {other:?}"),
        }
        Ok(())
    }

    #[test]
    fn refuses_second_parents_loops_and_bad_values() -> Result<(), TfError> {
        let mut tree = robot()?;
        let second = tree.insert(&tf("map", "base", 4_000, [0.0; 3], yaw(0.0)), false);
        assert!(matches!(second, Err(TfError::TwoParents { ref parent, .. }) if parent == "world"), "{second:?}");
        let looped = tree.insert(&tf("camera", "world", 4_000, [0.0; 3], yaw(0.0)), false);
        assert!(matches!(looped, Err(TfError::Loop { .. })), "{looped:?}");
        assert!(matches!(tree.insert(&tf("a", "a", 0, [0.0; 3], yaw(0.0)), true), Err(TfError::Loop { .. })));
        let bad = tree.insert(&tf("world", "x", 0, [0.0; 3], [0.0; 4]), true);
        assert!(matches!(bad, Err(TfError::Invalid { .. })), "{bad:?}");
        // Nothing refused made it into the tree.
        assert_eq!(tree.frames(), ["base", "camera", "map", "odom", "world"]);
        Ok(())
    }

    #[test]
    fn edges_report_kind_range_and_rate() -> Result<(), TfError> {
        let edges = robot()?.edges();
        let base = edges.iter().find(|e| e.child == "base").expect("base edge");
        assert!(!base.is_static && base.oldest_ns == 1_000 && base.latest_ns == 3_000);
        assert_eq!(base.rate_hz, Some(5e5));
        assert!(edges.iter().find(|e| e.child == "camera").is_some_and(|e| e.is_static && e.rate_hz.is_none()));
        Ok(())
    }
}

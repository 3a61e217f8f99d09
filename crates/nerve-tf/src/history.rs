//! The transforms one edge of the tree holds: a single timeless one for a static edge, a
//! time-ordered window of recent ones for a moving edge.

use std::collections::VecDeque;

use crate::error::{Direction, Stamp};
use crate::transform::Transform;

/// Why an edge has no transform at a time: the time is outside the range it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OutOfRange {
    pub direction: Direction,
    pub oldest: Stamp,
    pub latest: Stamp,
}

/// The history of one edge.
#[derive(Debug, Clone)]
pub(crate) enum History {
    /// Valid at every time; `stamp_ns` is when it was sent.
    Static { stamp_ns: i64, transform: Transform },
    /// Ordered by stamp, oldest first, never empty, spanning at most the cache duration.
    Moving(VecDeque<(i64, Transform)>),
}

impl History {
    pub(crate) fn new(is_static: bool, stamp_ns: i64, transform: Transform) -> Self {
        if is_static {
            Self::Static { stamp_ns, transform }
        } else {
            Self::Moving(VecDeque::from([(stamp_ns, transform)]))
        }
    }

    pub(crate) fn is_static(&self) -> bool {
        matches!(self, Self::Static { .. })
    }

    /// Adds a transform. A static one replaces the edge's transform; a moving one joins the
    /// window (replacing one of the same stamp), and whatever is older than `cache_ns` before
    /// the newest leaves it. An edge that changes kind starts over with this transform.
    ///
    /// # Errors
    /// The oldest stamp kept, when a moving transform is older than the window.
    pub(crate) fn insert(
        &mut self,
        is_static: bool,
        stamp_ns: i64,
        transform: Transform,
        cache_ns: i64,
    ) -> Result<(), Stamp> {
        let samples = match self {
            Self::Moving(samples) if !is_static => samples,
            _ => {
                *self = Self::new(is_static, stamp_ns, transform);
                return Ok(());
            }
        };
        let (Some(&(oldest, _)), Some(&(latest, _))) = (samples.front(), samples.back()) else {
            *self = Self::new(false, stamp_ns, transform);
            return Ok(());
        };
        if stamp_ns < latest.saturating_sub(cache_ns) {
            return Err(Stamp(oldest));
        }
        let at = samples.partition_point(|s| s.0 < stamp_ns);
        match samples.get_mut(at) {
            Some(same) if same.0 == stamp_ns => same.1 = transform,
            _ => samples.insert(at, (stamp_ns, transform)),
        }
        let horizon = samples.back().map_or(stamp_ns, |s| s.0).saturating_sub(cache_ns);
        while samples.front().is_some_and(|s| s.0 < horizon) {
            samples.pop_front();
        }
        Ok(())
    }

    /// The transform at `time`: interpolated between the two transforms around it.
    pub(crate) fn at(&self, time: i64) -> Result<Transform, OutOfRange> {
        let samples = match self {
            Self::Static { transform, .. } => return Ok(*transform),
            Self::Moving(samples) => samples,
        };
        let (oldest, latest) = self.range();
        let out = |direction| OutOfRange { direction, oldest: Stamp(oldest), latest: Stamp(latest) };
        if time < oldest {
            return Err(out(Direction::Past));
        }
        if time > latest {
            return Err(out(Direction::Future));
        }
        let at = samples.partition_point(|s| s.0 < time);
        match (at.checked_sub(1).and_then(|i| samples.get(i)), samples.get(at)) {
            (_, Some(&(stamp, t))) if stamp == time => Ok(t),
            (Some(&(t0, a)), Some(&(t1, b))) => Ok(a.interpolate(&b, (time - t0) as f64 / (t1 - t0) as f64)),
            // `oldest <= time <= latest` puts a sample at or on each side of `time`.
            _ => Err(out(Direction::Future)),
        }
    }

    /// Oldest and newest stamp held (a static edge's stamp twice).
    pub(crate) fn range(&self) -> (i64, i64) {
        match self {
            Self::Static { stamp_ns, .. } => (*stamp_ns, *stamp_ns),
            Self::Moving(samples) => (samples.front().map_or(0, |s| s.0), samples.back().map_or(0, |s| s.0)),
        }
    }

    /// Transforms per second over the window, from their stamps (`None` for a static edge or a
    /// single transform).
    pub(crate) fn rate_hz(&self) -> Option<f64> {
        let Self::Moving(samples) = self else { return None };
        let (oldest, latest) = self.range();
        (samples.len() > 1 && latest > oldest).then(|| (samples.len() - 1) as f64 * 1e9 / (latest - oldest) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::tests::close;

    fn at_x(x: f64) -> Transform {
        Transform { translation: [x, 0.0, 0.0], ..Transform::IDENTITY }
    }

    #[test]
    fn interpolates_between_the_samples_around_the_time() {
        let mut h = History::new(false, 100, at_x(0.0));
        // Out of order on purpose: the window stays sorted.
        assert_eq!(h.insert(false, 300, at_x(4.0), 1_000), Ok(()));
        assert_eq!(h.insert(false, 200, at_x(1.0), 1_000), Ok(()));
        let x = |t| h.at(t).map(|tf| tf.translation[0]);
        assert_eq!(x(200), Ok(1.0));
        assert!(close(&[x(150).unwrap_or(f64::NAN)], &[0.5]));
        assert!(close(&[x(275).unwrap_or(f64::NAN)], &[3.25]));
        assert_eq!(h.rate_hz(), Some(1e7));
    }

    #[test]
    fn refuses_to_extrapolate_and_says_the_range() {
        let mut h = History::new(false, 100, at_x(0.0));
        assert_eq!(h.insert(false, 200, at_x(1.0), 1_000), Ok(()));
        let range = |direction| Err(OutOfRange { direction, oldest: Stamp(100), latest: Stamp(200) });
        assert_eq!(h.at(99), range(Direction::Past));
        assert_eq!(h.at(201), range(Direction::Future));
    }

    #[test]
    fn keeps_only_the_cache_window() {
        let mut h = History::new(false, 0, at_x(0.0));
        for t in 1..=10 {
            assert_eq!(h.insert(false, t * 100, at_x(0.0), 250), Ok(()));
        }
        assert_eq!(h.range(), (800, 1000));
        assert_eq!(h.insert(false, 700, at_x(0.0), 250), Err(Stamp(800)));
    }

    #[test]
    fn a_static_edge_holds_at_every_time_and_a_kind_change_starts_over() {
        let mut h = History::new(true, 5, at_x(2.0));
        assert_eq!(h.at(i64::MIN).map(|t| t.translation[0]), Ok(2.0));
        assert_eq!(h.rate_hz(), None);
        assert_eq!(h.insert(false, 10, at_x(3.0), 100), Ok(()));
        assert!(!h.is_static());
        assert_eq!(h.range(), (10, 10));
    }
}

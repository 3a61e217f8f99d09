//! Rigid transforms: a translation and a unit quaternion, composed, inverted, applied to
//! points and interpolated in time.

use crate::error::{TfError, TransformError};

/// A rigid transform: rotate by `rotation`, then translate by `translation`.
///
/// The transform of a frame `child` relative to `parent` maps coordinates in `child` to
/// coordinates in `parent` (it is `child`'s pose in `parent`), as in tf2.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transform {
    /// Translation x, y, z (metres, by convention).
    pub translation: [f64; 3],
    /// Rotation as a unit quaternion x, y, z, w.
    pub rotation: [f64; 4],
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Transform {
    /// No rotation, no translation.
    pub const IDENTITY: Self = Self { translation: [0.0; 3], rotation: [0.0, 0.0, 0.0, 1.0] };

    /// A transform from a translation and a quaternion (x, y, z, w), normalized here.
    ///
    /// # Errors
    /// [`TransformError::Translation`] for a value that is not finite,
    /// [`TransformError::Rotation`] for a quaternion of length zero or not finite.
    pub fn new(translation: [f64; 3], rotation: [f64; 4]) -> Result<Self, TransformError> {
        if !translation.iter().all(|v| v.is_finite()) {
            return Err(TransformError::Translation { translation });
        }
        let norm = dot(rotation, rotation).sqrt();
        if !norm.is_finite() || norm < 1e-9 {
            return Err(TransformError::Rotation { rotation });
        }
        Ok(Self { translation, rotation: rotation.map(|v| v / norm) })
    }

    /// `self ∘ other`: applies `other` first, then `self`. With `self` the pose of `b` in `a`
    /// and `other` the pose of `c` in `b`, the result is the pose of `c` in `a`.
    #[must_use]
    pub fn compose(&self, other: &Self) -> Self {
        let moved = rotate(self.rotation, other.translation);
        Self {
            translation: [0, 1, 2].map(|i| self.translation[i] + moved[i]),
            rotation: multiply(self.rotation, other.rotation),
        }
    }

    /// The transform that undoes this one.
    #[must_use]
    pub fn inverse(&self) -> Self {
        let [x, y, z, w] = self.rotation;
        let conjugate = [-x, -y, -z, w];
        let back = rotate(conjugate, self.translation);
        Self { translation: back.map(|v| -v), rotation: conjugate }
    }

    /// Maps a point: rotated, then translated.
    #[must_use]
    pub fn apply(&self, point: [f64; 3]) -> [f64; 3] {
        let r = rotate(self.rotation, point);
        [0, 1, 2].map(|i| r[i] + self.translation[i])
    }

    /// Rotates a direction (no translation): for velocities, normals, axes.
    #[must_use]
    pub fn apply_vector(&self, vector: [f64; 3]) -> [f64; 3] {
        rotate(self.rotation, vector)
    }

    /// The transform a fraction `t` (0 at `self`, 1 at `other`) of the way to `other`:
    /// translation linearly, rotation by spherical linear interpolation on the shorter arc.
    #[must_use]
    pub fn interpolate(&self, other: &Self, t: f64) -> Self {
        let translation = [0, 1, 2].map(|i| self.translation[i] + (other.translation[i] - self.translation[i]) * t);
        Self { translation, rotation: slerp(self.rotation, other.rotation, t) }
    }

    /// The 4×4 homogeneous matrix, row-major.
    #[must_use]
    pub fn matrix(&self) -> [[f64; 4]; 4] {
        let [x, y, z, w] = self.rotation;
        let [tx, ty, tz] = self.translation;
        [
            [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w), tx],
            [2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w), ty],
            [2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y), tz],
            [0.0, 0.0, 0.0, 1.0],
        ]
    }
}

/// A transform between two named frames at a time: the pose of `child` in `parent`.
#[derive(Debug, Clone, PartialEq)]
pub struct StampedTransform {
    /// The frame the transform maps into (a lookup's target).
    pub parent: String,
    /// The frame the transform maps from (a lookup's source).
    pub child: String,
    /// Nanoseconds on nerve's clock; for a static transform, when it was sent.
    pub stamp_ns: i64,
    /// The transform itself.
    pub transform: Transform,
}

impl StampedTransform {
    /// The pose of `child` in `parent` at `stamp_ns`.
    #[must_use]
    pub fn new(parent: impl Into<String>, child: impl Into<String>, stamp_ns: i64, transform: Transform) -> Self {
        Self { parent: parent.into(), child: child.into(), stamp_ns, transform }
    }

    /// The pose of `child` in `parent` now (nerve's clock).
    #[must_use]
    pub fn now(parent: impl Into<String>, child: impl Into<String>, transform: Transform) -> Self {
        Self::new(parent, child, crate::clock::now_ns(), transform)
    }

    /// This transform with its quaternion normalized, if it is one the tree accepts.
    ///
    /// # Errors
    /// [`TfError::Invalid`] for an empty frame name or values that are not a rigid transform.
    pub fn checked(&self) -> Result<Self, TfError> {
        let invalid = |why: String| TfError::Invalid { parent: self.parent.clone(), child: self.child.clone(), why };
        if self.parent.is_empty() || self.child.is_empty() {
            return Err(invalid("a frame name is empty".to_owned()));
        }
        let transform =
            Transform::new(self.transform.translation, self.transform.rotation).map_err(|e| invalid(e.to_string()))?;
        Ok(Self { transform, ..self.clone() })
    }
}

fn dot(a: [f64; 4], b: [f64; 4]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
}

/// Hamilton product `a·b` of quaternions (x, y, z, w): rotation `b`, then `a`.
fn multiply(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

/// Rotates `v` by the unit quaternion `q` (v + 2w(u×v) + 2u×(u×v), u the vector part).
fn rotate(q: [f64; 4], v: [f64; 3]) -> [f64; 3] {
    let u = [q[0], q[1], q[2]];
    let uv = cross(u, v);
    let uuv = cross(u, uv);
    [0, 1, 2].map(|i| v[i] + 2.0 * (q[3] * uv[i] + uuv[i]))
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// Spherical linear interpolation of unit quaternions along the shorter arc.
fn slerp(a: [f64; 4], b: [f64; 4], t: f64) -> [f64; 4] {
    let mut cos = dot(a, b);
    // q and -q are the same rotation: take the one on a's side, the shorter way round.
    let b = if cos < 0.0 {
        cos = -cos;
        b.map(|v| -v)
    } else {
        b
    };
    let (wa, wb) = if cos > 1.0 - 1e-9 {
        // Nearly the same rotation: the arc is a line, and sin(θ) would divide by ~0.
        (1.0 - t, t)
    } else {
        let theta = cos.acos();
        let sin = theta.sin();
        (((1.0 - t) * theta).sin() / sin, (t * theta).sin() / sin)
    };
    let q = [0, 1, 2, 3].map(|i| wa * a[i] + wb * b[i]);
    let norm = dot(q, q).sqrt();
    q.map(|v| v / norm)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
    }

    /// Rotation of `angle` radians about z.
    pub(crate) fn yaw(angle: f64) -> [f64; 4] {
        [0.0, 0.0, (angle / 2.0).sin(), (angle / 2.0).cos()]
    }

    #[test]
    fn compose_applies_the_right_transform_first() -> Result<(), TransformError> {
        let a = Transform::new([1.0, 0.0, 0.0], yaw(std::f64::consts::FRAC_PI_2))?;
        let b = Transform::new([2.0, 0.0, 0.0], Transform::IDENTITY.rotation)?;
        // b moves (0,0,0) to (2,0,0); a turns it to (0,2,0) and shifts to (1,2,0).
        let ab = a.compose(&b);
        assert!(close(&ab.apply([0.0; 3]), &[1.0, 2.0, 0.0]), "{ab:?}");
        assert!(close(&ab.apply([0.0; 3]), &a.apply(b.apply([0.0; 3]))));
        let p = [0.3, -1.2, 4.0];
        assert!(close(&ab.apply(p), &a.apply(b.apply(p))));
        Ok(())
    }

    #[test]
    fn inverse_undoes_and_composes_to_identity() -> Result<(), TransformError> {
        let t = Transform::new([1.0, -2.0, 0.5], [0.1, 0.7, -0.3, 0.6])?;
        let p = [3.0, 1.0, -2.0];
        assert!(close(&t.inverse().apply(t.apply(p)), &p));
        let id = t.compose(&t.inverse());
        assert!(close(&id.translation, &[0.0; 3]) && close(&id.rotation, &[0.0, 0.0, 0.0, 1.0]), "{id:?}");
        Ok(())
    }

    #[test]
    fn matrix_agrees_with_apply() -> Result<(), TransformError> {
        let t = Transform::new([1.0, 2.0, 3.0], [0.2, -0.4, 0.1, 0.9])?;
        let m = t.matrix();
        let p = [0.5, -1.5, 2.0];
        let by_matrix = [0, 1, 2].map(|r| m[r][0] * p[0] + m[r][1] * p[1] + m[r][2] * p[2] + m[r][3]);
        assert!(close(&by_matrix, &t.apply(p)));
        assert!(close(&t.apply_vector(p), &[0, 1, 2].map(|r| m[r][0] * p[0] + m[r][1] * p[1] + m[r][2] * p[2])));
        Ok(())
    }

    #[test]
    fn slerp_turns_at_constant_speed_on_the_short_arc() -> Result<(), TransformError> {
        let a = Transform::new([0.0; 3], yaw(0.0))?;
        let b = Transform::new([2.0, 4.0, 0.0], yaw(1.0))?;
        let mid = a.interpolate(&b, 0.25);
        assert!(close(&mid.rotation, &yaw(0.25)), "{mid:?}");
        assert!(close(&mid.translation, &[0.5, 1.0, 0.0]));
        // The same rotation written with the opposite sign still interpolates the short way.
        let flipped = Transform { rotation: yaw(1.0).map(|v| -v), ..b };
        let mid = a.interpolate(&flipped, 0.5);
        assert!(close(&mid.rotation, &yaw(0.5)), "{mid:?}");
        // Equal rotations: no division by sin(0).
        assert!(close(&a.interpolate(&a, 0.3).rotation, &yaw(0.0)));
        Ok(())
    }

    #[test]
    fn refuses_what_is_not_a_transform() {
        assert!(Transform::new([f64::NAN, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]).is_err());
        let err = Transform::new([0.0; 3], [0.0; 4]).expect_err("zero quaternion").to_string();
        assert!(err.contains("quaternion"), "{err}");
        let t = Transform::new([0.0; 3], [0.0, 0.0, 0.0, 2.0]).expect("scaled quaternion");
        assert!(close(&t.rotation, &[0.0, 0.0, 0.0, 1.0]));
    }
}

//! Transforms (`nerve_tf_buffer`, `nerve_tf_broadcaster`): where frames are, sent and looked up
//! from any process, with no dataflow.
//!
//! A thin binding of `nerve_tf`: C broadcasters and buffers meet Rust and Python ones on the same
//! topics (`tf`, `tf_static`), and lookups go through the frames' common ancestor, interpolated,
//! exactly as theirs do.

use std::ffi::{c_char, c_int};
use std::time::Duration;

use nerve_tf::{
    BufferOptions, DEFAULT_CACHE, StampedTransform, StaticTransformBroadcaster, TfOptions, Transform,
    TransformBroadcaster, TransformBuffer,
};

use crate::args::{bounded_timeout, out, text};
use crate::error::{ApiError, NerveStatus, guard};
use crate::handles::{self, Kind};

/// `time_ns` of `nerve_tf_buffer_lookup` for the latest time every transform of the chain
/// between the two frames allows.
pub const NERVE_TF_LATEST: i64 = i64::MIN;

/// `stamp_ns` of a transform sent, for now on nerve's clock (the wall clock, or the run's
/// simulated time in a node of a `nerve run --sim-time` run).
pub const NERVE_TF_NOW: i64 = i64::MIN;

/// A translation, in the units of the frames (meters, by ROS's convention).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NerveVector3 {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// z.
    pub z: f64,
}

/// A rotation, as a unit quaternion.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NerveQuaternion {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// z.
    pub z: f64,
    /// w (1 for no rotation).
    pub w: f64,
}

/// The pose of a child frame in its parent at a time: it maps coordinates in the child to
/// coordinates in the parent (rotation first, then translation).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NerveTransform {
    /// Nanoseconds on nerve's clock; in a lookup, the time of the result (0 through static
    /// transforms only); in a send, `NERVE_TF_NOW` for now.
    pub stamp_ns: i64,
    /// Where the child's origin is in the parent.
    pub translation: NerveVector3,
    /// How the child's axes are turned in the parent.
    pub rotation: NerveQuaternion,
}

impl From<&StampedTransform> for NerveTransform {
    fn from(t: &StampedTransform) -> Self {
        let ([x, y, z], [qx, qy, qz, qw]) = (t.transform.translation, t.transform.rotation);
        Self {
            stamp_ns: t.stamp_ns,
            translation: NerveVector3 { x, y, z },
            rotation: NerveQuaternion { x: qx, y: qy, z: qz, w: qw },
        }
    }
}

/// Listens to every transform broadcaster of its domain and answers lookups between any two
/// frames (opaque).
///
/// Thread-safety: every function taking a `nerve_tf_buffer` may be called from any thread at
/// once, except `nerve_tf_buffer_free`.
pub struct NerveTfBuffer {
    buffer: TransformBuffer,
}

/// Starts listening to the transforms of domain `domain` (0 unless groups of endpoints are kept
/// apart), keeping each moving edge's last `cache_ms` milliseconds (0: 10 s); static transforms
/// sent before it started come too.
///
/// On success `*buffer` is a new handle owned by the caller, to be freed with
/// `nerve_tf_buffer_free`. Fails with `NERVE_STATUS_RUNTIME` when the topics cannot be set up.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `buffer` is valid for writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_tf_buffer_new(domain: u32, cache_ms: u64, buffer: *mut *mut NerveTfBuffer) -> c_int {
    guard("nerve_tf_buffer_new", || {
        // SAFETY: as the caller promises.
        let buffer = unsafe { out(buffer, "buffer") }?;
        let cache = if cache_ms == 0 { DEFAULT_CACHE } else { Duration::from_millis(cache_ms) };
        let b = TransformBuffer::new(BufferOptions { domain, cache })?;
        buffer.write(handles::give(NerveTfBuffer { buffer: b }, Kind::TfBuffer));
        Ok(NerveStatus::Ok)
    })
}

/// Stops listening and frees the handle; NULL is allowed and does nothing.
///
/// Thread-safety: no other thread may use the handle during or after the call.
///
/// # Safety
/// `buffer` is NULL or a live handle no other thread uses.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_tf_buffer_free(buffer: *mut NerveTfBuffer) -> c_int {
    // SAFETY: as the caller promises.
    unsafe { handles::free("nerve_tf_buffer_free", buffer, Kind::TfBuffer, "buffer") }
}

/// The pose of frame `source` in frame `target` at `time_ns` (nanoseconds on nerve's clock, or
/// `NERVE_TF_LATEST`), in `*transform`: it maps coordinates in `source` to coordinates in
/// `target`, through the frames' common ancestor, each moving edge interpolated at that time.
///
/// With `timeout_ms` 0 the buffer answers from what it holds; with more, it waits up to that
/// many milliseconds for the transforms to come (a buffer that just started, a time a little
/// ahead), woken by each message, never polling.
///
/// Fails with `NERVE_STATUS_NOT_FOUND` when, with `timeout_ms` 0, no transform joins the frames
/// at that time (a frame no transform names, frames of two trees, a time outside an edge's
/// history), and returns `NERVE_STATUS_TIMEOUT` when that is still so after `timeout_ms`; the
/// message names both frames and says which. `*transform` is written on success only.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `buffer` is a live handle no other thread frees meanwhile; `target` and `source` are
/// NUL-terminated strings; `transform` is valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_tf_buffer_lookup(
    buffer: *const NerveTfBuffer,
    target: *const c_char,
    source: *const c_char,
    time_ns: i64,
    timeout_ms: i64,
    transform: *mut NerveTransform,
) -> c_int {
    guard("nerve_tf_buffer_lookup", || {
        // SAFETY: as the caller promises.
        let (b, target, source, transform) = unsafe {
            (
                handles::get(buffer, Kind::TfBuffer, "buffer")?,
                text(target, "target")?,
                text(source, "source")?,
                out(transform, "transform")?,
            )
        };
        let timeout = bounded_timeout(timeout_ms, "timeout_ms")?;
        let time = (time_ns != NERVE_TF_LATEST).then_some(time_ns);
        let found = if timeout.is_zero() {
            b.buffer.lookup(target, source, time)
        } else {
            b.buffer.lookup_wait(target, source, time, timeout)
        };
        let found = found.map_err(|error| ApiError::Lookup {
            source_frame: source.to_owned(),
            target_frame: target.to_owned(),
            waited_ms: (!timeout.is_zero()).then_some(timeout_ms.unsigned_abs()),
            error: Box::new(error),
        })?;
        transform.write(NerveTransform::from(&found));
        Ok(NerveStatus::Ok)
    })
}

/// Publishes transforms (opaque): time-stamped ones on `tf`, or static ones on `tf_static`.
///
/// Thread-safety: every function taking a `nerve_tf_broadcaster` may be called from any thread
/// at once, except `nerve_tf_broadcaster_free`.
pub struct NerveTfBroadcaster {
    broadcasting: Broadcasting,
}

enum Broadcasting {
    /// Moving frames: each transform is kept in the buffers' history of its edge.
    Dynamic(TransformBroadcaster),
    /// Fixed frames: the last transform of each edge is sent again to every buffer that starts
    /// later.
    Static(StaticTransformBroadcaster),
}

/// A broadcaster of transforms in domain `domain` (0 unless groups of endpoints are kept
/// apart): of fixed frames (a camera bolted to the base) when `is_static`, whose last transform
/// of each edge every buffer gets, even one that starts later; else of moving frames (the base
/// in the world), kept in each buffer's history.
///
/// On success `*broadcaster` is a new handle owned by the caller, to be freed with
/// `nerve_tf_broadcaster_free`. Fails with `NERVE_STATUS_RUNTIME` when the topic cannot be set
/// up.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `broadcaster` is valid for writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_tf_broadcaster_new(
    domain: u32,
    is_static: bool,
    broadcaster: *mut *mut NerveTfBroadcaster,
) -> c_int {
    guard("nerve_tf_broadcaster_new", || {
        // SAFETY: as the caller promises.
        let broadcaster = unsafe { out(broadcaster, "broadcaster") }?;
        let options = TfOptions { domain };
        let broadcasting = if is_static {
            Broadcasting::Static(StaticTransformBroadcaster::new(options)?)
        } else {
            Broadcasting::Dynamic(TransformBroadcaster::new(options)?)
        };
        broadcaster.write(handles::give(NerveTfBroadcaster { broadcasting }, Kind::TfBroadcaster));
        Ok(NerveStatus::Ok)
    })
}

/// Stops broadcasting and frees the handle; NULL is allowed and does nothing.
///
/// Thread-safety: no other thread may use the handle during or after the call.
///
/// # Safety
/// `broadcaster` is NULL or a live handle no other thread uses.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_tf_broadcaster_free(broadcaster: *mut NerveTfBroadcaster) -> c_int {
    // SAFETY: as the caller promises.
    unsafe { handles::free("nerve_tf_broadcaster_free", broadcaster, Kind::TfBroadcaster, "broadcaster") }
}

/// Sends the pose of frame `child` in frame `parent`: `*transform`, stamped with its
/// `stamp_ns` (or now, for `NERVE_TF_NOW`).
///
/// Fails with `NERVE_STATUS_INVALID_ARGUMENT` for an empty frame name, a translation that is
/// not finite or a rotation that is no usable quaternion (it is normalized otherwise); nothing
/// is sent then. A transform the buffers' trees refuse (a second parent for `child`, a loop) is
/// sent all the same: each buffer logs the refusal, as for Rust and Python broadcasters.
///
/// Ownership: everything is copied. Thread-safety: any thread.
///
/// # Safety
/// `broadcaster` is a live handle no other thread frees meanwhile; `parent` and `child` are
/// NUL-terminated strings; `transform` is readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_tf_broadcaster_send(
    broadcaster: *const NerveTfBroadcaster,
    parent: *const c_char,
    child: *const c_char,
    transform: *const NerveTransform,
) -> c_int {
    guard("nerve_tf_broadcaster_send", || {
        // SAFETY: as the caller promises.
        let (b, parent, child, t) = unsafe {
            (
                handles::get(broadcaster, Kind::TfBroadcaster, "broadcaster")?,
                text(parent, "parent")?,
                text(child, "child")?,
                transform.as_ref().ok_or(ApiError::Null("transform"))?,
            )
        };
        let (v, q) = (t.translation, t.rotation);
        // Checked as it is sent, so the error names the edge.
        let pose = Transform { translation: [v.x, v.y, v.z], rotation: [q.x, q.y, q.z, q.w] };
        let stamped = if t.stamp_ns == NERVE_TF_NOW {
            StampedTransform::now(parent, child, pose)
        } else {
            StampedTransform::new(parent, child, t.stamp_ns, pose)
        };
        match &b.broadcasting {
            Broadcasting::Dynamic(d) => d.send(&[stamped])?,
            Broadcasting::Static(s) => s.send(&[stamped])?,
        }
        Ok(NerveStatus::Ok)
    })
}

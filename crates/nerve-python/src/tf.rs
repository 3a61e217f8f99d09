//! `nerve.TransformBroadcaster`, `nerve.StaticTransformBroadcaster`, `nerve.TransformBuffer`
//! and `nerve.StampedTransform`: the transform tree (crate `nerve-tf`) from Python.

use nerve_tf::{BufferOptions, TfError, TfOptions, Transform};
use pyo3::PyClassInitializer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::{NerveError, topic_error};
use crate::wait::{Waited, interruptible};

pyo3::create_exception!(
    nerve,
    TransformError,
    NerveError,
    "A transform lookup or send failed: unknown or unconnected frames, extrapolation, a refused transform."
);

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("TransformError", m.py().get_type::<TransformError>())?;
    m.add_class::<StampedTransform>()?;
    m.add_class::<Broadcaster>()?;
    m.add_class::<TransformBroadcaster>()?;
    m.add_class::<StaticTransformBroadcaster>()?;
    m.add_class::<TransformBuffer>()?;
    Ok(())
}

fn tf_error(e: &TfError) -> PyErr {
    match e {
        TfError::Topic(t) => topic_error(t),
        other => TransformError::new_err(other.to_string()),
    }
}

fn numpy<'py>(py: Python<'py>, values: impl IntoPyObject<'py>) -> PyResult<Bound<'py, PyAny>> {
    py.import("numpy")?.call_method1("array", (values, "float64"))
}

/// Builds a transform from Python values; `stamp` `None` is now.
fn stamped(
    parent: &str,
    child: &str,
    translation: &Bound<'_, PyAny>,
    rotation: &Bound<'_, PyAny>,
    stamp: Option<i64>,
) -> PyResult<nerve_tf::StampedTransform> {
    let translation: [f64; 3] = translation.extract().map_err(|_| {
        PyValueError::new_err(format!("translation of `{parent}` -> `{child}` must be 3 numbers (x, y, z)"))
    })?;
    let rotation: [f64; 4] = rotation.extract().map_err(|_| {
        PyValueError::new_err(format!("rotation of `{parent}` -> `{child}` must be 4 numbers (quaternion x, y, z, w)"))
    })?;
    let transform = Transform { translation, rotation };
    Ok(match stamp {
        Some(ns) => nerve_tf::StampedTransform::new(parent, child, ns, transform),
        None => nerve_tf::StampedTransform::now(parent, child, transform),
    })
}

/// ``send_many``'s items: ``(parent, child, translation, rotation)`` or the same with a stamp.
fn batch(items: &Bound<'_, PyAny>, stamp: Option<i64>) -> PyResult<Vec<nerve_tf::StampedTransform>> {
    let mut out = Vec::new();
    for item in items.try_iter()? {
        let item = item?;
        let fields: Vec<Bound<'_, PyAny>> = item.extract().map_err(|_| not_an_item(&item))?;
        let (parent, child): (String, String) = match fields.as_slice() {
            [p, c, _, _] | [p, c, _, _, _] => (p.extract()?, c.extract()?),
            _ => return Err(not_an_item(&item)),
        };
        let own_stamp = fields.get(4).map(|s| s.extract::<Option<i64>>()).transpose()?.flatten();
        out.push(stamped(&parent, &child, &fields[2], &fields[3], own_stamp.or(stamp))?);
    }
    Ok(out)
}

fn not_an_item(item: &Bound<'_, PyAny>) -> PyErr {
    PyValueError::new_err(format!(
        "each transform is (parent, child, translation, rotation) or (parent, child, translation, rotation, stamp), \
         got {item}"
    ))
}

/// The pose of frame ``child`` in frame ``parent`` at ``stamp`` (nanoseconds): maps
/// coordinates in ``child`` to coordinates in ``parent``. What ``TransformBuffer.lookup``
/// returns (``parent`` is the lookup's target, ``child`` its source).
#[pyclass(frozen, module = "nerve._nerve")]
pub(crate) struct StampedTransform {
    inner: nerve_tf::StampedTransform,
}

#[pymethods]
impl StampedTransform {
    #[new]
    #[pyo3(signature = (parent, child, translation, rotation, stamp=None))]
    fn new(
        parent: &str,
        child: &str,
        translation: &Bound<'_, PyAny>,
        rotation: &Bound<'_, PyAny>,
        stamp: Option<i64>,
    ) -> PyResult<Self> {
        let inner = stamped(parent, child, translation, rotation, stamp)?.checked().map_err(|e| tf_error(&e))?;
        Ok(Self { inner })
    }

    /// The frame the transform maps into.
    #[getter]
    fn parent(&self) -> &str {
        &self.inner.parent
    }

    /// The frame the transform maps from.
    #[getter]
    fn child(&self) -> &str {
        &self.inner.child
    }

    /// Nanoseconds on nerve's clock (0 for a lookup through static transforms only).
    #[getter]
    fn stamp(&self) -> i64 {
        self.inner.stamp_ns
    }

    /// Translation x, y, z as a numpy array.
    #[getter]
    fn translation<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        numpy(py, self.inner.transform.translation)
    }

    /// Rotation as a unit quaternion x, y, z, w (a numpy array).
    #[getter]
    fn rotation<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        numpy(py, self.inner.transform.rotation)
    }

    /// Maps a point ``[x, y, z]`` or a list of points (``N×3``) from ``child`` to ``parent``
    /// coordinates; returns a numpy array of the same shape.
    fn apply<'py>(&self, py: Python<'py>, points: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let t = &self.inner.transform;
        if let Ok(point) = points.extract::<[f64; 3]>() {
            return numpy(py, t.apply(point));
        }
        let many: Vec<[f64; 3]> =
            points.extract().map_err(|_| PyValueError::new_err("points must be [x, y, z] or a list of them (N×3)"))?;
        numpy(py, many.into_iter().map(|p| t.apply(p)).collect::<Vec<_>>())
    }

    /// The transform the other way: from ``parent`` to ``child`` coordinates.
    fn inverse(&self) -> Self {
        let t = &self.inner;
        Self { inner: nerve_tf::StampedTransform::new(&t.child, &t.parent, t.stamp_ns, t.transform.inverse()) }
    }

    /// The 4×4 homogeneous matrix (numpy).
    fn matrix<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        numpy(py, self.inner.transform.matrix())
    }

    fn __repr__(&self) -> String {
        let t = &self.inner;
        format!(
            "StampedTransform(parent={:?}, child={:?}, stamp={}, translation={:?}, rotation={:?})",
            t.parent, t.child, t.stamp_ns, t.transform.translation, t.transform.rotation
        )
    }
}

/// Either broadcaster, for the methods they share.
enum Sender {
    Moving(nerve_tf::TransformBroadcaster),
    Static(nerve_tf::StaticTransformBroadcaster),
}

/// Sends transforms; ``TransformBroadcaster`` and ``StaticTransformBroadcaster`` are its kinds.
#[pyclass(frozen, subclass, module = "nerve._nerve")]
pub(crate) struct Broadcaster {
    inner: Sender,
}

impl Broadcaster {
    fn deliver(&self, py: Python<'_>, transforms: &[nerve_tf::StampedTransform]) -> PyResult<()> {
        py.detach(|| match &self.inner {
            Sender::Moving(b) => b.send(transforms),
            Sender::Static(b) => b.send(transforms),
        })
        .map_err(|e| tf_error(&e))
    }
}

#[pymethods]
impl Broadcaster {
    /// Sends the pose of ``child`` in ``parent`` at ``stamp`` (nanoseconds; now when ``None``).
    #[pyo3(signature = (parent, child, translation, rotation, stamp=None))]
    fn send(
        &self,
        py: Python<'_>,
        parent: &str,
        child: &str,
        translation: &Bound<'_, PyAny>,
        rotation: &Bound<'_, PyAny>,
        stamp: Option<i64>,
    ) -> PyResult<()> {
        self.deliver(py, &[stamped(parent, child, translation, rotation, stamp)?])
    }

    /// Sends several transforms in one message: items ``(parent, child, translation,
    /// rotation)`` stamped ``stamp`` (now when ``None``), or with a fifth item, their own stamp.
    #[pyo3(signature = (transforms, stamp=None))]
    fn send_many(&self, py: Python<'_>, transforms: &Bound<'_, PyAny>, stamp: Option<i64>) -> PyResult<()> {
        self.deliver(py, &batch(transforms, stamp)?)
    }
}

/// Publishes time-stamped transforms on topic ``tf``.
#[pyclass(frozen, extends = Broadcaster, module = "nerve._nerve")]
pub(crate) struct TransformBroadcaster;

#[pymethods]
impl TransformBroadcaster {
    #[new]
    #[pyo3(signature = (*, domain=0))]
    fn new(py: Python<'_>, domain: u32) -> PyResult<PyClassInitializer<Self>> {
        let inner =
            py.detach(|| nerve_tf::TransformBroadcaster::new(TfOptions { domain })).map_err(|e| tf_error(&e))?;
        Ok(PyClassInitializer::from(Broadcaster { inner: Sender::Moving(inner) }).add_subclass(Self))
    }
}

/// Publishes static transforms on topic ``tf_static``: each send adds to the set this
/// broadcaster sends, and every listener gets the set, even one that starts later.
#[pyclass(frozen, extends = Broadcaster, module = "nerve._nerve")]
pub(crate) struct StaticTransformBroadcaster;

#[pymethods]
impl StaticTransformBroadcaster {
    #[new]
    #[pyo3(signature = (*, domain=0))]
    fn new(py: Python<'_>, domain: u32) -> PyResult<PyClassInitializer<Self>> {
        let inner =
            py.detach(|| nerve_tf::StaticTransformBroadcaster::new(TfOptions { domain })).map_err(|e| tf_error(&e))?;
        Ok(PyClassInitializer::from(Broadcaster { inner: Sender::Static(inner) }).add_subclass(Self))
    }
}

/// Listens to ``tf`` and ``tf_static`` and looks transforms up between any two frames.
#[pyclass(frozen, module = "nerve._nerve")]
pub(crate) struct TransformBuffer {
    inner: nerve_tf::TransformBuffer,
}

#[pymethods]
impl TransformBuffer {
    #[new]
    #[pyo3(signature = (cache_seconds=10.0, *, domain=0))]
    fn new(py: Python<'_>, cache_seconds: f64, domain: u32) -> PyResult<Self> {
        let cache = std::time::Duration::try_from_secs_f64(cache_seconds).map_err(|_| {
            PyValueError::new_err(format!("cache_seconds must be a non-negative number, got {cache_seconds}"))
        })?;
        let inner =
            py.detach(|| nerve_tf::TransformBuffer::new(BufferOptions { domain, cache })).map_err(|e| tf_error(&e))?;
        Ok(Self { inner })
    }

    /// The pose of ``source`` in ``target`` at ``time`` (nanoseconds; ``None``: the latest
    /// time every moving transform of the chain has reached). With ``timeout`` (seconds),
    /// waits that long for the transforms to arrive. Raises ``TransformError`` saying why not.
    #[pyo3(signature = (target, source, time=None, timeout=None))]
    fn lookup(
        &self,
        py: Python<'_>,
        target: &str,
        source: &str,
        time: Option<i64>,
        timeout: Option<f64>,
    ) -> PyResult<StampedTransform> {
        let Some(timeout) = timeout else {
            return self
                .inner
                .lookup(target, source, time)
                .map(|inner| StampedTransform { inner })
                .map_err(|e| tf_error(&e));
        };
        let mut last = None;
        let found = interruptible(py, Some(timeout), |chunk| {
            Ok(match py.detach(|| self.inner.lookup_wait(target, source, time, chunk)) {
                Ok(inner) => Waited::Got(StampedTransform { inner }),
                Err(e) => {
                    last = Some(e);
                    Waited::Nothing
                }
            })
        })?;
        match (found, last) {
            (Some(t), _) => Ok(t),
            (None, Some(e)) => Err(tf_error(&e)),
            (None, None) => self.lookup(py, target, source, time, None),
        }
    }

    /// Every frame heard of, sorted.
    fn frames(&self) -> Vec<String> {
        self.inner.frames()
    }
}

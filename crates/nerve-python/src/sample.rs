//! `nerve.Sample`: shared memory lent to Python to fill in place.

use std::any::Any;
use std::ffi::c_int;
use std::sync::{Arc, Mutex};

use pyo3::PyClass;
use pyo3::exceptions::{PyBufferError, PyRuntimeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::pyclass::boolean_struct::True;

use nerve_shm::sync::lock;

use crate::errors::SendError;

/// A block of shared memory to fill, then send.
///
/// Supports the buffer protocol (``memoryview(sample)``, ``numpy.frombuffer(sample, ...)``) and
/// the ``with`` statement: leaving the block without an exception sends it. Do not write to
/// views of a sample after it is sent: readers are reading that memory.
#[pyclass(frozen, module = "nerve._nerve")]
pub(crate) struct Sample {
    sample: Mutex<Option<(Target, nerve_topic::Sample)>>,
    // Views handed to Python may outlive the send; the memory stays mapped until they go.
    _mapping: Arc<dyn Any + Send + Sync>,
    ptr: usize,
    len: usize,
}

/// A class that lends samples: a dataflow node (the sample names its output) or a topic's
/// publisher. Implemented by those classes, so that this module needs neither of them.
pub(crate) trait Lender: PyClass<Frozen = True> + Sync {
    /// Sends `sample`, which this endpoint lent (called with the GIL released).
    // A failed send hands the sample back by value (see `nerve_topic::SendError`).
    #[allow(clippy::result_large_err)]
    fn send_sample(&self, sample: nerve_topic::Sample) -> Result<(), nerve_topic::SendError<nerve_topic::Sample>>;
}

/// How a sample is sent through the object that lent it: [`send_through`] for its class.
type SendThrough = fn(
    Python<'_>,
    &Bound<'_, PyAny>,
    nerve_topic::Sample,
) -> PyResult<Result<(), nerve_topic::SendError<nerve_topic::Sample>>>;

/// The endpoint that lent a sample, where it goes when sent.
pub(crate) struct Target {
    /// The Python object that lent the sample, kept alive with it.
    lender: Py<PyAny>,
    send: SendThrough,
}

impl Target {
    /// Sent through `lender`.
    pub(crate) fn of<T: Lender>(lender: &Bound<'_, T>) -> Self {
        Self { lender: lender.clone().into_any().unbind(), send: send_through::<T> }
    }
}

/// Sends `sample` through `lender`, a `T`, with the GIL released; a Python error only if
/// `lender` is not a `T`, which [`Target::of`] rules out.
// A failed send hands the sample back by value (see `nerve_topic::SendError`).
#[allow(clippy::result_large_err)]
fn send_through<T: Lender>(
    py: Python<'_>,
    lender: &Bound<'_, PyAny>,
    sample: nerve_topic::Sample,
) -> PyResult<Result<(), nerve_topic::SendError<nerve_topic::Sample>>> {
    let endpoint = lender.cast::<T>()?.get();
    Ok(py.detach(|| endpoint.send_sample(sample)))
}

impl Sample {
    pub(crate) fn new(target: Target, mut sample: nerve_topic::Sample) -> Self {
        let mapping = sample.keep_mapped();
        let data = sample.data_mut();
        let (ptr, len) = (data.as_mut_ptr() as usize, data.len());
        Self { sample: Mutex::new(Some((target, sample))), _mapping: mapping, ptr, len }
    }
}

#[pymethods]
impl Sample {
    /// Sends the sample; it cannot be sent twice. When it cannot be sent, ``SendError`` is
    /// raised and the sample stays as it was, to send again or discard.
    // A failed send hands the sample back by value (see `nerve_topic::SendError`).
    #[allow(clippy::result_large_err)]
    fn send(&self, py: Python<'_>) -> PyResult<()> {
        let sample = lock(&self.sample)
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this sample was already sent or discarded"))?;
        let (target, sample) = sample;
        let sent = (target.send)(py, target.lender.bind(py), sample)?;
        sent.map_err(|e| {
            let message = e.to_string();
            // Not sent: the sample stays with its Python object, filled as it was.
            *lock(&self.sample) = Some((target, e.into_inner()));
            SendError::new_err(message)
        })
    }

    /// Gives the memory back without sending.
    fn discard(&self) {
        lock(&self.sample).take();
    }

    /// A writable ``memoryview`` of the sample's shared memory (dora-rs's name for
    /// ``memoryview(sample)``).
    fn as_memoryview<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, pyo3::types::PyMemoryView>> {
        pyo3::types::PyMemoryView::from(slf.as_any())
    }

    fn __len__(&self) -> usize {
        self.len
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    #[pyo3(signature = (exc_type=None, _exc=None, _tb=None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let pending = lock(&self.sample).is_some();
        if exc_type.is_some_and(|t| !t.is_none()) {
            self.discard();
        } else if pending {
            self.send(py)?;
        }
        Ok(false)
    }

    unsafe fn __getbuffer__(slf: Bound<'_, Self>, view: *mut ffi::Py_buffer, flags: c_int) -> PyResult<()> {
        let this = slf.get();
        if lock(&this.sample).is_none() {
            return Err(PyBufferError::new_err("this sample was already sent"));
        }
        let len = isize::try_from(this.len).map_err(|_| PyBufferError::new_err("sample too large"))?;
        // SAFETY: `ptr` points to `len` writable bytes kept mapped by `_mapping` for as long as
        // this object (which the view references) lives.
        let rc =
            unsafe { ffi::PyBuffer_FillInfo(view, slf.as_ptr(), this.ptr as *mut std::ffi::c_void, len, 0, flags) };
        if rc == 0 { Ok(()) } else { Err(PyErr::fetch(slf.py())) }
    }
}

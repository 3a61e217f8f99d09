//! `nerve.Sample`: shared memory lent to Python to fill in place, and `nerve.SampleBuffer`, the
//! buffer its views are made from.
//!
//! The views are counted: a sample is not sent (nor given back) while a view of it is open, as
//! readers would read memory still being written. The block stays the sample's, and so is not
//! reused by another message, for as long as any view of it lives.

use std::any::Any;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::PyClass;
use pyo3::exceptions::{PyBufferError, PyRuntimeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::pyclass::boolean_struct::True;
use pyo3::sync::PyOnceLock;

use nerve_shm::sync::lock;

use crate::errors::SendError;

const GONE: &str = "this sample was already sent or discarded";

/// A block of shared memory to fill, then send.
///
/// Supports the buffer protocol (``memoryview(sample)``, ``numpy.frombuffer(sample, ...)``) and
/// the ``with`` statement: leaving the block without an exception sends it. Every view must be
/// released before the send (``del array``, ``view.release()``): a send refuses while one is open.
#[pyclass(frozen, module = "nerve._nerve")]
pub(crate) struct Sample {
    lent: Arc<Lent>,
    buffer: PyOnceLock<Py<SampleBuffer>>,
}

/// The memory of a [`Sample`] as a buffer (dora-rs's `SampleBuffer`): views of it are counted
/// like views of the sample, and no new one is made once the sample is sent or dropped.
#[pyclass(frozen, module = "nerve._nerve")]
pub(crate) struct SampleBuffer {
    lent: Arc<Lent>,
}

/// The lent block, shared by a sample and its buffer.
struct Lent {
    sample: Mutex<Option<(Target, nerve_topic::Sample)>>,
    /// Buffer-protocol views open now, of the sample or of its buffer.
    views: AtomicUsize,
    /// Whether new views may be made: not once the sample is sent, discarded or dropped.
    open: AtomicBool,
    // Views handed to Python keep this alive; the memory stays mapped until they go.
    _mapping: Arc<dyn Any + Send + Sync>,
    ptr: usize,
    len: usize,
}

impl Lent {
    /// Fills `view` for `owner` (the sample or its buffer), counting it.
    ///
    /// # Safety
    /// `view` is the `Py_buffer` Python passed to `owner`'s `__getbuffer__`.
    unsafe fn export(&self, owner: &Bound<'_, PyAny>, view: *mut ffi::Py_buffer, flags: c_int) -> PyResult<()> {
        if !self.open.load(Ordering::SeqCst) {
            return Err(PyBufferError::new_err("this sample was sent, discarded or dropped: its memory is not yours"));
        }
        let len = isize::try_from(self.len).map_err(|_| PyBufferError::new_err("sample too large"))?;
        // SAFETY: `ptr` points to `len` writable bytes kept mapped by `_mapping`, which lives as
        // long as `owner`, which the view references.
        let rc =
            unsafe { ffi::PyBuffer_FillInfo(view, owner.as_ptr(), self.ptr as *mut std::ffi::c_void, len, 0, flags) };
        if rc != 0 {
            return Err(PyErr::fetch(owner.py()));
        }
        self.views.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    fn release(&self) {
        self.views.fetch_sub(1, Ordering::SeqCst);
    }

    /// Refuses to give the block away (`what`: "send", "discard") while a view is open.
    fn check_no_views(&self, what: &str) -> PyResult<()> {
        match self.views.load(Ordering::SeqCst) {
            0 => Ok(()),
            n => Err(PyRuntimeError::new_err(format!(
                "cannot {what} the sample: {n} view(s) of it are still open (a memoryview, a numpy array made \
                 from it); release them first (`del array`, `view.release()`)"
            ))),
        }
    }
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
        let lent = Lent {
            sample: Mutex::new(Some((target, sample))),
            views: AtomicUsize::new(0),
            open: AtomicBool::new(true),
            _mapping: mapping,
            ptr,
            len,
        };
        Self { lent: Arc::new(lent), buffer: PyOnceLock::new() }
    }

    fn check_pending(&self) -> PyResult<()> {
        if lock(&self.lent.sample).is_some() { Ok(()) } else { Err(PyRuntimeError::new_err(GONE)) }
    }
}

impl Drop for Sample {
    fn drop(&mut self) {
        // Its buffer may live on; the block is given back once no view of it is left.
        self.lent.open.store(false, Ordering::SeqCst);
    }
}

#[pymethods]
impl Sample {
    /// Sends the sample; it cannot be sent twice, nor while a view of it is open
    /// (``RuntimeError``). When it cannot be sent, ``SendError`` is raised and the sample stays
    /// as it was, to send again or discard.
    // A failed send hands the sample back by value (see `nerve_topic::SendError`).
    #[allow(clippy::result_large_err)]
    fn send(&self, py: Python<'_>) -> PyResult<()> {
        self.lent.check_no_views("send")?;
        let taken = lock(&self.lent.sample).take();
        let (target, sample) = taken.ok_or_else(|| PyRuntimeError::new_err(GONE))?;
        // No view from here on: what readers get is what was written.
        self.lent.open.store(false, Ordering::SeqCst);
        let sent = (target.send)(py, target.lender.bind(py), sample)?;
        sent.map_err(|e| {
            let message = e.to_string();
            // Not sent: the sample stays with its Python object, filled as it was.
            *lock(&self.lent.sample) = Some((target, e.into_inner()));
            self.lent.open.store(true, Ordering::SeqCst);
            SendError::new_err(message)
        })
    }

    /// Gives the memory back without sending; refused while a view of it is open.
    fn discard(&self) -> PyResult<()> {
        self.lent.check_no_views("discard")?;
        self.lent.open.store(false, Ordering::SeqCst);
        lock(&self.lent.sample).take();
        Ok(())
    }

    /// The sample's :class:`SampleBuffer`, the same object every time.
    fn as_buffer(&self, py: Python<'_>) -> PyResult<Py<SampleBuffer>> {
        self.check_pending()?;
        let buffer = self.buffer.get_or_try_init(py, || Py::new(py, SampleBuffer { lent: self.lent.clone() }))?;
        Ok(buffer.clone_ref(py))
    }

    /// A new writable ``memoryview`` of the sample's shared memory, to release before the send.
    fn as_memoryview<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyMemoryView>> {
        let buffer = self.as_buffer(py)?;
        pyo3::types::PyMemoryView::from(buffer.bind(py).as_any())
    }

    fn __len__(&self) -> usize {
        self.lent.len
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    /// Sends the sample, unless the block raised: then it stays unsent, to send or discard.
    #[pyo3(signature = (exc_type=None, _exc=None, _tb=None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let pending = lock(&self.lent.sample).is_some();
        if pending && exc_type.is_none_or(|t| t.is_none()) {
            self.send(py)?;
        }
        Ok(false)
    }

    unsafe fn __getbuffer__(slf: Bound<'_, Self>, view: *mut ffi::Py_buffer, flags: c_int) -> PyResult<()> {
        // SAFETY: as Python called it.
        unsafe { slf.get().lent.export(slf.as_any(), view, flags) }
    }

    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {
        self.lent.release();
    }
}

#[pymethods]
impl SampleBuffer {
    fn __len__(&self) -> usize {
        self.lent.len
    }

    unsafe fn __getbuffer__(slf: Bound<'_, Self>, view: *mut ffi::Py_buffer, flags: c_int) -> PyResult<()> {
        // SAFETY: as Python called it.
        unsafe { slf.get().lent.export(slf.as_any(), view, flags) }
    }

    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {
        self.lent.release();
    }
}

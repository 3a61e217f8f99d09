//! What a Python object to send is, and the cheapest way to put it in shared memory: shared
//! by dataflow outputs and topic publishers.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array, make_array, new_empty_array};
use arrow_buffer::Buffer;
use arrow_data::ArrayData;
use arrow_schema::DataType;
use nerve_node::Extension;
use nerve_shm::codec::tensor_storage;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::arrow::PyArrow;

/// What a Python object to send is, for the cheapest way to put it in shared memory.
pub(crate) enum Outgoing {
    /// `bytes`: copied as they are.
    Bytes(Py<PyBytes>),
    /// A 1-D C-contiguous buffer of numbers (numpy array, memoryview…): one copy, no pyarrow.
    Primitive {
        /// Arrow type of the items.
        data_type: DataType,
        /// Number of items.
        items: usize,
        /// The exported buffer.
        buffer: RawBuffer,
    },
    /// An n-D C-contiguous buffer of numbers (a numpy image): one copy, no pyarrow, sent as
    /// Arrow's fixed-shape tensor of its shape.
    Tensor {
        /// Arrow type of the values.
        value_type: DataType,
        /// The buffer's shape, outermost dimension first.
        shape: Vec<usize>,
        /// The exported buffer.
        buffer: RawBuffer,
    },
    /// Anything else, as an Arrow array (pyarrow arrays as they are, lists and tuples of
    /// numbers built here, other objects through ``pyarrow.array``), and the extension type
    /// it is the storage of (a pyarrow extension array's).
    Array(ArrayRef, Option<Extension>),
}

impl Outgoing {
    /// What `data` is, to send on an endpoint whose values are declared of the Arrow type
    /// `declared` (an empty list is an empty array of it, rather than pyarrow's `null` array).
    pub(crate) fn classify(
        py: Python<'_>,
        pa: &PyArrow,
        data: &Bound<'_, PyAny>,
        declared: Option<&DataType>,
    ) -> PyResult<Self> {
        if let Ok(b) = data.cast::<PyBytes>() {
            return Ok(Self::Bytes(b.clone().unbind()));
        }
        if let Some(numbers) = numbers(data) {
            return Ok(Self::Array(numbers, None));
        }
        if let Some(t) = declared
            && is_empty_sequence(data)
        {
            return Ok(Self::Array(new_empty_array(t), None));
        }
        if crate::msg_value::is_message(py, data)? {
            return Ok(Self::Array(make_array(crate::msg_value::message_data(data)?), None));
        }
        let is_array = pa.is_array(py, data)?;
        if is_array && let Some(message) = pa.message_of(py, data) {
            return Ok(Self::Array(make_array(message), None));
        }
        if !is_array {
            if let Some(primitive) = Self::primitive(data) {
                return Ok(primitive);
            }
            // A strided numpy array (a slice with a step, a transposed image…) is made
            // contiguous first; a contiguous one was taken as it is above, without a call into
            // numpy on the send path.
            if is_ndarray(data) {
                let contiguous = contiguous(data)?;
                if let Some(primitive) = Self::primitive(&contiguous) {
                    return Ok(primitive);
                }
            }
        }
        if !is_array && let Some(why) = not_an_array(data) {
            return Err(PyTypeError::new_err(why));
        }
        let array = if is_array { data.clone() } else { pa.convert(py, data)? };
        let (array, extension) = PyArrow::from_py(&array)?;
        Ok(Self::Array(array, extension))
    }

    /// `obj`'s C-contiguous buffer of numbers with an Arrow type, if it exports one: flat
    /// with one dimension or none, a tensor with more.
    fn primitive(obj: &Bound<'_, PyAny>) -> Option<Self> {
        let buffer = RawBuffer::get(obj)?;
        let data_type = buffer.arrow_type()?;
        if let Some(shape) = buffer.shape().filter(|s| s.len() > 1) {
            return Some(Self::Tensor { value_type: data_type, shape, buffer });
        }
        let items = buffer.bytes().len() / buffer.itemsize().max(1);
        Some(Self::Primitive { data_type, items, buffer })
    }
}

impl Outgoing {
    /// The data as an Arrow array in ordinary memory (bytes become a `UInt8` array): for
    /// messages that do not go through shared memory, such as service requests and replies.
    pub(crate) fn into_array_data(self, py: Python<'_>) -> PyResult<ArrayData> {
        let invalid = |e: arrow_schema::ArrowError| pyo3::exceptions::PyValueError::new_err(e.to_string());
        let values = |data_type: DataType, items: usize, bytes: &[u8]| {
            ArrayData::builder(data_type).len(items).add_buffer(Buffer::from_slice_ref(bytes)).build().map_err(invalid)
        };
        match &self {
            Self::Array(array, _) => Ok(array.to_data()),
            Self::Bytes(b) => values(DataType::UInt8, b.bind(py).as_bytes().len(), b.bind(py).as_bytes()),
            Self::Primitive { data_type, items, buffer } => values(data_type.clone(), *items, buffer.bytes()),
            Self::Tensor { value_type, shape, buffer } => {
                let (storage, items) =
                    tensor_storage(value_type, shape).map_err(|e| PyValueError::new_err(e.to_string()))?;
                let child = values(value_type.clone(), items, buffer.bytes())?;
                ArrayData::builder(storage).len(1).add_child_data(child).build().map_err(invalid)
            }
        }
    }

    /// The data as [`Outgoing::into_array_data`] makes it, with the extension type it is the
    /// storage of (a tensor's shape): the array a reader receives, made in this process.
    pub(crate) fn into_array(self, py: Python<'_>) -> PyResult<(ArrayData, Option<Extension>)> {
        let extension = match &self {
            Self::Array(_, extension) => extension.clone(),
            Self::Tensor { shape, .. } => Some(Extension::fixed_shape_tensor(shape)),
            Self::Bytes(_) | Self::Primitive { .. } => None,
        };
        Ok((self.into_array_data(py)?, extension))
    }
}

/// A list or tuple of Python `int`s and `float`s (`numpy.float64` too) as the array
/// ``pyarrow.array`` would make of it (`Int64` when all are ints, `Float64` otherwise), built
/// here: pyarrow's conversion of a short list costs tens of microseconds, on the latency path
/// of every small message a robot sends this way (a command, a pose). `None` for anything
/// else, and where pyarrow would raise or pick another type (bools, `None`s, ints beyond 64
/// bits, or beyond 2^53 beside a float), so that pyarrow decides, and reports, as before.
fn numbers(obj: &Bound<'_, PyAny>) -> Option<ArrayRef> {
    if let Ok(list) = obj.cast_exact::<PyList>() {
        return numbers_of(list.iter());
    }
    numbers_of(obj.cast_exact::<PyTuple>().ok()?.iter())
}

fn numbers_of<'py>(items: impl ExactSizeIterator<Item = Bound<'py, PyAny>>) -> Option<ArrayRef> {
    if items.len() == 0 {
        return None; // pyarrow gives an array of type null
    }
    let mut ints: Vec<i64> = Vec::with_capacity(items.len());
    let mut floats: Option<Vec<f64>> = None;
    for item in items {
        // Float subclasses (numpy.float64) are floats to pyarrow too; int subclasses are not
        // taken (bool is one).
        if let Ok(f) = item.cast::<PyFloat>() {
            let floats = match &mut floats {
                Some(floats) => floats,
                None => floats.insert(ints.iter().map(|&v| exact_float(v)).collect::<Option<_>>()?),
            };
            floats.push(f.value());
        } else if item.is_exact_instance_of::<PyInt>() {
            let v: i64 = item.extract().ok()?;
            match &mut floats {
                Some(floats) => floats.push(exact_float(v)?),
                None => ints.push(v),
            }
        } else {
            return None;
        }
    }
    Some(match floats {
        Some(floats) => Arc::new(Float64Array::from(floats)),
        None => Arc::new(Int64Array::from(ints)),
    })
}

/// Why `obj` is refused rather than handed to ``pyarrow.array``, which would make an array of a
/// str's characters or of a dict's keys (silently not what was meant), or fail on a single
/// number with "object is not iterable".
fn not_an_array(obj: &Bound<'_, PyAny>) -> Option<String> {
    if obj.is_instance_of::<PyString>() {
        return Some(
            "a str is not sent as its characters: send [text] (a string array of one) or text.encode()".into(),
        );
    }
    if obj.is_instance_of::<PyDict>() {
        return Some("a dict is not sent as its keys: send [mapping] (a struct array of one row)".into());
    }
    if obj.is_none() {
        return Some("None is not an array: send [value]".into());
    }
    if obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyFloat>() {
        let kind = obj.get_type().name().map_or_else(|_| "value".to_owned(), |n| n.to_string());
        return Some(format!("a single {kind} is not an array: send [value]"));
    }
    None
}

/// `v` as a float, if a float holds it exactly (pyarrow's rule when ints and floats are mixed).
fn exact_float(v: i64) -> Option<f64> {
    const EXACT: i64 = 1 << f64::MANTISSA_DIGITS;
    #[allow(clippy::cast_precision_loss)] // exact within ±2^53, the only values converted
    let f = v as f64;
    (-EXACT..=EXACT).contains(&v).then_some(f)
}

/// Whether `obj` is an empty list or tuple (which pyarrow makes a `null` array of).
fn is_empty_sequence(obj: &Bound<'_, PyAny>) -> bool {
    obj.cast_exact::<PyList>().is_ok_and(|l| l.is_empty()) || obj.cast_exact::<PyTuple>().is_ok_and(|t| t.is_empty())
}

/// `numpy.ascontiguousarray(array)`: `array` itself when it is C-contiguous already.
pub(crate) fn contiguous<'py>(array: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    static ASCONTIGUOUSARRAY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let py = array.py();
    // Looked up once: an import on every message costs more than the rest of taking an array.
    let function = ASCONTIGUOUSARRAY
        .get_or_try_init(py, || -> PyResult<_> { Ok(py.import("numpy")?.getattr("ascontiguousarray")?.unbind()) })?;
    function.bind(py).call1((array,))
}

pub(crate) fn is_ndarray(obj: &Bound<'_, PyAny>) -> bool {
    obj.get_type().name().is_ok_and(|n| n == "ndarray")
}

/// A C-contiguous buffer exported by a Python object (numpy array, memoryview, array…).
pub(crate) struct RawBuffer {
    view: Box<ffi::Py_buffer>,
}

impl RawBuffer {
    pub(crate) fn get(obj: &Bound<'_, PyAny>) -> Option<Self> {
        let mut view: Box<ffi::Py_buffer> = Box::new(ffi::Py_buffer::new());
        // SAFETY: `obj` is a live object and `view` a writable Py_buffer.
        let rc = unsafe {
            ffi::PyObject_GetBuffer(obj.as_ptr(), &raw mut *view, ffi::PyBUF_C_CONTIGUOUS | ffi::PyBUF_FORMAT)
        };
        if rc != 0 {
            // Not a buffer, or not contiguous: the caller falls back to pyarrow.
            drop(PyErr::take(obj.py()));
            return None;
        }
        Some(Self { view })
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        let len = usize::try_from(self.view.len).unwrap_or(0);
        if len == 0 || self.view.buf.is_null() {
            return &[];
        }
        // SAFETY: the exporter guarantees `len` readable bytes at `buf` until release.
        unsafe { std::slice::from_raw_parts(self.view.buf.cast::<u8>(), len) }
    }

    fn itemsize(&self) -> usize {
        usize::try_from(self.view.itemsize).unwrap_or(1)
    }

    /// The buffer's dimensions, outermost first; `None` when it gives none (a flat buffer).
    fn shape(&self) -> Option<Vec<usize>> {
        let ndim = usize::try_from(self.view.ndim).ok()?;
        if self.view.shape.is_null() || ndim == 0 {
            return None;
        }
        // SAFETY: asked for with PyBUF_ND (part of PyBUF_C_CONTIGUOUS), `shape` holds `ndim`
        // lengths, valid until the buffer is released.
        let dims = unsafe { std::slice::from_raw_parts(self.view.shape, ndim) };
        dims.iter().map(|&d| usize::try_from(d).ok()).collect()
    }

    /// The Arrow primitive type of the items, when it has one and is stored natively.
    pub(crate) fn arrow_type(&self) -> Option<DataType> {
        let format = if self.view.format.is_null() {
            "B"
        } else {
            // SAFETY: a non-null format is a NUL-terminated string owned by the exporter.
            unsafe { std::ffi::CStr::from_ptr(self.view.format) }.to_str().ok()?
        };
        let code = match format.as_bytes() {
            [b'<' | b'=' | b'@', c] | [c] => *c,
            _ => return None, // big-endian, structured or multi-character formats
        };
        Some(match (code, self.itemsize()) {
            (b'b', 1) => DataType::Int8,
            (b'B' | b'c', 1) => DataType::UInt8,
            (b'h', 2) => DataType::Int16,
            (b'H', 2) => DataType::UInt16,
            (b'i' | b'l', 4) => DataType::Int32,
            (b'I' | b'L', 4) => DataType::UInt32,
            (b'l' | b'q', 8) => DataType::Int64,
            (b'L' | b'Q', 8) => DataType::UInt64,
            (b'e', 2) => DataType::Float16,
            (b'f', 4) => DataType::Float32,
            (b'd', 8) => DataType::Float64,
            _ => return None,
        })
    }
}

impl Drop for RawBuffer {
    fn drop(&mut self) {
        // SAFETY: releasing the buffer obtained in `get`, with the GIL held (RawBuffer never
        // leaves the thread that holds it).
        unsafe { ffi::PyBuffer_Release(&raw mut *self.view) }
    }
}

//! A `nerve.msg` message straight to its Arrow value and back, without pyarrow: one pass over
//! the Python attributes, the numpy arrays of numeric sequences taken as they are; and one pass
//! over a received value, numeric sequences read as numpy views of its buffers. Going through
//! pyarrow costs a call per field, more than the values themselves on every small field of
//! every message a robot sends.

use std::panic::AssertUnwindSafe;
use std::ptr::NonNull;
use std::sync::Arc;

use std::ffi::c_int;
use std::ops::Range;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef};
use arrow_buffer::{BooleanBuffer, Buffer, MutableBuffer};
use arrow_data::ArrayData;
use arrow_schema::DataType;
use pyo3::exceptions::{PyBufferError, PyIndexError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString, PyTuple, PyType};

use crate::outgoing::{RawBuffer, contiguous, is_ndarray};

/// Whether `obj` is an instance of a `nerve.msg` message class.
pub(crate) fn is_message(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    static MESSAGE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let class = MESSAGE.get_or_try_init(py, || -> PyResult<_> {
        Ok(py.import("nerve.msg")?.getattr("Message")?.cast_into::<PyType>()?.unbind())
    })?;
    obj.is_instance(class.bind(py))
}

/// The one-row Arrow value of `message`, an instance of a `nerve.msg` class, of the type its
/// class names (`TYPE`).
pub(crate) fn message_data(message: &Bound<'_, PyAny>) -> PyResult<ArrayData> {
    let name: String = message.getattr("TYPE")?.extract()?;
    let data_type = crate::msg::arrow_type(&name)?;
    column(std::slice::from_ref(message), &data_type, &Path::Root(&name))
}

/// Where a value lies in a message, spelled out only for an error
/// (`sensor_msgs/msg/Image.header.frame_id`): formatting it for every field would cost more
/// than taking most fields' values.
#[derive(Clone, Copy)]
enum Path<'a> {
    /// The message's type.
    Root(&'a str),
    /// A field of the value at the inner path.
    Field(&'a Path<'a>, &'a str),
    /// The elements of the sequence at the inner path.
    Items(&'a Path<'a>),
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Root(name) => f.write_str(name),
            Self::Field(inner, name) => write!(f, "{inner}.{name}"),
            Self::Items(inner) => write!(f, "{inner}[]"),
        }
    }
}

/// The array of `values`, a row each, of Arrow type `t`; `path` names them in errors
/// (`sensor_msgs/msg/Image.header.frame_id`).
fn column(values: &[Bound<'_, PyAny>], t: &DataType, path: &Path<'_>) -> PyResult<ArrayData> {
    let n = values.len();
    let data = match t {
        DataType::Struct(fields) => {
            let mut children = Vec::with_capacity(fields.len());
            for field in fields {
                let items = values.iter().map(|v| member(v, field.name(), path)).collect::<PyResult<Vec<_>>>()?;
                children.push(column(&items, field.data_type(), &Path::Field(path, field.name()))?);
            }
            ArrayData::builder(t.clone()).len(n).child_data(children)
        }
        DataType::Boolean => {
            let bits = values.iter().map(|v| scalar::<bool>(v, path)).collect::<PyResult<Vec<_>>>()?;
            ArrayData::builder(t.clone()).len(n).add_buffer(BooleanBuffer::from(bits).into_inner())
        }
        DataType::Utf8 => {
            let mut offsets = Vec::with_capacity(n + 1);
            offsets.push(0i32);
            let mut bytes = Vec::new();
            for v in values {
                let s = v.cast::<PyString>().map_err(|_| expected("a str", v, path))?;
                bytes.extend_from_slice(s.to_str()?.as_bytes());
                offsets.push(offset(bytes.len(), path)?);
            }
            ArrayData::builder(t.clone())
                .len(n)
                .add_buffer(Buffer::from_vec(offsets))
                .add_buffer(Buffer::from_vec(bytes))
        }
        DataType::List(item) => {
            let mut offsets = Vec::with_capacity(n + 1);
            offsets.push(0i32);
            let mut len = 0;
            let mut rows = Vec::with_capacity(n);
            for v in values {
                let row = Row::of(v, item.data_type(), path)?;
                len += row.len();
                offsets.push(offset(len, path)?);
                rows.push(row);
            }
            let child = Row::concat(rows, item.data_type(), path)?;
            ArrayData::builder(t.clone()).len(n).add_buffer(Buffer::from_vec(offsets)).child_data(vec![child])
        }
        DataType::FixedSizeList(item, size) => {
            let size = usize::try_from(*size).unwrap_or(0);
            let mut rows = Vec::with_capacity(n);
            for v in values {
                let row = Row::of(v, item.data_type(), path)?;
                if row.len() != size {
                    return Err(PyValueError::new_err(format!(
                        "{path}: exactly {size} elements are expected, not {}",
                        row.len()
                    )));
                }
                rows.push(row);
            }
            let child = Row::concat(rows, item.data_type(), path)?;
            ArrayData::builder(t.clone()).len(n).child_data(vec![child])
        }
        primitive => {
            let bytes = numbers(values, primitive, path)?;
            ArrayData::builder(t.clone()).len(n).add_buffer(bytes)
        }
    };
    data.build().map_err(|e| PyValueError::new_err(format!("{path}: {e}")))
}

/// Field `name` of a message given as an instance or a dict.
fn member<'py>(value: &Bound<'py, PyAny>, name: &str, path: &Path<'_>) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(dict) = value.cast::<PyDict>() {
        return dict.get_item(name)?.ok_or_else(|| PyTypeError::new_err(format!("{path}: the dict has no `{name}`")));
    }
    value.getattr(name).map_err(|_| expected("a message", value, path))
}

fn expected(what: &str, value: &Bound<'_, PyAny>, path: &Path<'_>) -> PyErr {
    let given = value.get_type().name().map_or_else(|_| "?".to_owned(), |n| n.to_string());
    PyTypeError::new_err(format!("{path}: {what} is expected, not {given}"))
}

fn offset(len: usize, path: &Path<'_>) -> PyResult<i32> {
    i32::try_from(len).map_err(|_| PyValueError::new_err(format!("{path}: over 2^31 elements or bytes")))
}

fn scalar<'py, T: FromPyObjectOwned<'py>>(value: &Bound<'py, PyAny>, path: &Path<'_>) -> PyResult<T> {
    value.extract::<T>().map_err(|e| {
        let e: PyErr = e.into();
        let given = value.repr().map_or_else(|_| "?".to_owned(), |r| r.to_string());
        PyTypeError::new_err(format!("{path}: {given} does not fit: {e}"))
    })
}

/// The little-endian bytes of Python numbers as Arrow primitive type `t`.
fn numbers(values: &[Bound<'_, PyAny>], t: &DataType, path: &Path<'_>) -> PyResult<Buffer> {
    macro_rules! each {
        ($($arrow:ident => $rust:ty),*) => {
            match t {
                $(DataType::$arrow => {
                    let items = values.iter().map(|v| scalar::<$rust>(v, path)).collect::<PyResult<Vec<$rust>>>()?;
                    Buffer::from_vec(items)
                })*
                other => return Err(PyTypeError::new_err(format!("{path}: no message field is a {other}"))),
            }
        };
    }
    Ok(each!(Int8 => i8, UInt8 => u8, Int16 => i16, UInt16 => u16, Int32 => i32, UInt32 => u32,
        Int64 => i64, UInt64 => u64, Float32 => f32, Float64 => f64))
}

/// One row's elements of a sequence field: the bytes of a numpy array of the elements' own
/// type as they are, or the items of a list, a tuple or another iterable (not a string).
enum Row<'py> {
    /// The array's bytes (kept alive by the array) and how many elements they hold.
    Numbers(Buffer, usize),
    /// Items to convert one by one.
    Items(Vec<Bound<'py, PyAny>>),
}

impl<'py> Row<'py> {
    fn of(value: &Bound<'py, PyAny>, item: &DataType, path: &Path<'_>) -> PyResult<Self> {
        if item.is_primitive() && is_ndarray(value) {
            // A C-contiguous array (what a camera hands over) is taken as it is; a strided one
            // is made contiguous first.
            let (contiguous, buffer) = match RawBuffer::get(value) {
                Some(buffer) => (value.clone(), Some(buffer)),
                None => {
                    let contiguous = contiguous(value)?;
                    let buffer = RawBuffer::get(&contiguous);
                    (contiguous, buffer)
                }
            };
            if let Some(buffer) = buffer.filter(|b| b.arrow_type().as_ref() == Some(item)) {
                let count = buffer.bytes().len() / item.primitive_width().unwrap_or(1).max(1);
                return Ok(Self::Numbers(shared(&contiguous, &buffer), count));
            }
            // Another dtype: converted number by number, each checked against the field's type.
            let flat = contiguous.call_method1("reshape", (-1,))?.call_method0("tolist")?;
            return Ok(Self::Items(flat.cast_into::<PyList>()?.iter().collect()));
        }
        if value.is_instance_of::<PyString>() || value.is_instance_of::<PyDict>() {
            return Err(expected("a sequence", value, path));
        }
        if let Ok(list) = value.cast::<PyList>() {
            return Ok(Self::Items(list.iter().collect()));
        }
        if let Ok(tuple) = value.cast::<PyTuple>() {
            return Ok(Self::Items(tuple.iter().collect()));
        }
        let items = value.try_iter().map_err(|_| expected("a sequence", value, path))?;
        Ok(Self::Items(items.collect::<PyResult<_>>()?))
    }

    fn len(&self) -> usize {
        match self {
            Self::Numbers(_, count) => *count,
            Self::Items(items) => items.len(),
        }
    }

    /// The elements of every row, one after the other, as one array of type `item`: a single
    /// numpy array's own bytes, or the rows' numbers gathered into one buffer.
    fn concat(rows: Vec<Self>, item: &DataType, path: &Path<'_>) -> PyResult<ArrayData> {
        let path = Path::Items(path);
        if !item.is_primitive() {
            let items: Vec<_> =
                rows.into_iter().flat_map(|r| if let Self::Items(i) = r { i } else { Vec::new() }).collect();
            return column(&items, item, &path);
        }
        let len = rows.iter().map(Self::len).sum();
        let mut buffers = rows
            .into_iter()
            .map(|row| match row {
                Self::Numbers(buffer, _) => Ok(buffer),
                Self::Items(items) => numbers(&items, item, &path),
            })
            .collect::<PyResult<Vec<_>>>()?;
        let bytes = if buffers.len() == 1 {
            buffers.remove(0)
        } else {
            let mut all = MutableBuffer::new(buffers.iter().map(Buffer::len).sum());
            buffers.iter().for_each(|b| all.extend_from_slice(b.as_slice()));
            all.into()
        };
        ArrayData::builder(item.clone())
            .len(len)
            .add_buffer(bytes)
            .build()
            .map_err(|e| PyValueError::new_err(format!("{path}: {e}")))
    }
}

/// The bytes of `array`'s exported `buffer`, as an Arrow buffer that keeps `array` alive (a
/// numpy array's data stays where it is while it is referenced: it cannot be resized).
fn shared(array: &Bound<'_, PyAny>, buffer: &RawBuffer) -> Buffer {
    let bytes = buffer.bytes();
    let Some(ptr) = NonNull::new(bytes.as_ptr().cast_mut()) else {
        return Buffer::from_vec(Vec::<u8>::new());
    };
    let owner = Arc::new(AssertUnwindSafe(array.clone().unbind()));
    // SAFETY: `bytes.len()` bytes at `ptr` stay valid and unchanged while `owner` holds the
    // numpy array (see above); nothing writes through this buffer.
    unsafe { Buffer::from_custom_allocation(ptr, bytes.len(), owner) }
}

/// Row `row` of `value` (a `pyarrow` array of message type `name`), its fields read as they
/// are asked for (see [`MessageFields`]).
pub(crate) fn fields(value: &Bound<'_, PyAny>, row: usize, name: &str) -> PyResult<MessageFields> {
    // A message just received comes with its data at hand: no export from pyarrow.
    let data = match crate::prebuilt::message_of(value.py(), value) {
        Some(data) => data,
        None => crate::arrow::PyArrow::from_py(value)?.0.to_data(),
    };
    let expected = crate::msg::arrow_type(name)?;
    if !nerve_types::same_layout(&expected, data.data_type()) {
        return Err(PyTypeError::new_err(format!(
            "{name}.from_arrow: the value is a {}, not a {name} ({expected})",
            data.data_type()
        )));
    }
    if row >= data.len() {
        return Err(PyIndexError::new_err(format!("{name}.from_arrow: row {row} of a value of {} rows", data.len())));
    }
    Ok(MessageFields { data, row, path: name.to_owned() })
}

/// One message of a struct array, whose fields are read only when asked for: a program that
/// reads an image's pixels does not pay for turning its header into Python objects. A number
/// or a string is a Python value, a numeric sequence a read-only numpy view of the array's
/// buffer (no copy), a nested message another `MessageFields`, any other sequence a list.
#[pyclass(frozen, module = "nerve._nerve")]
pub(crate) struct MessageFields {
    /// The struct array (checked of the message's type where reading began).
    data: ArrayData,
    /// The message's row, not counting the array's offset.
    row: usize,
    /// Where the message lies, for errors (`sensor_msgs/msg/Image.header`).
    path: String,
}

#[pymethods]
impl MessageFields {
    /// The value of field `name`.
    fn get<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let DataType::Struct(fields) = self.data.data_type() else {
            return Err(PyTypeError::new_err(format!("{}: not a message", self.path)));
        };
        let (index, _) = fields.find(name).ok_or_else(|| {
            pyo3::exceptions::PyAttributeError::new_err(format!("{} has no field `{name}`", self.path))
        })?;
        let child = &self.data.child_data()[index];
        // A struct's offset applies to its children: row `row` of the struct is row
        // `offset + row` of each of them.
        let row = self.data.offset() + self.row;
        plain(py, &arrow_array::make_array(child.clone()), row, &format!("{}.{name}", self.path))
    }
}

fn malformed(path: &str) -> PyErr {
    PyValueError::new_err(format!("{path}: a malformed Arrow value (offsets beyond its values)"))
}

fn plain<'py>(py: Python<'py>, array: &ArrayRef, row: usize, path: &str) -> PyResult<Bound<'py, PyAny>> {
    macro_rules! number {
        ($t:ty) => {
            array.as_primitive::<$t>().value(row).into_pyobject(py)?.into_any()
        };
    }
    Ok(match array.data_type() {
        DataType::Struct(_) => {
            Bound::new(py, MessageFields { data: array.to_data(), row, path: path.to_owned() })?.into_any()
        }
        DataType::Boolean => array.as_boolean().value(row).into_pyobject(py)?.to_owned().into_any(),
        DataType::Utf8 => PyString::new(py, array.as_string::<i32>().value(row)).into_any(),
        DataType::Int8 => number!(Int8Type),
        DataType::UInt8 => number!(UInt8Type),
        DataType::Int16 => number!(Int16Type),
        DataType::UInt16 => number!(UInt16Type),
        DataType::Int32 => number!(Int32Type),
        DataType::UInt32 => number!(UInt32Type),
        DataType::Int64 => number!(Int64Type),
        DataType::UInt64 => number!(UInt64Type),
        DataType::Float32 => number!(Float32Type),
        DataType::Float64 => number!(Float64Type),
        DataType::List(_) => {
            let list = array.as_list::<i32>();
            let offsets = list.value_offsets();
            let start = usize::try_from(offsets[row]).map_err(|_| malformed(path))?;
            let end = usize::try_from(offsets[row + 1]).map_err(|_| malformed(path))?;
            elements(py, list.values(), start..end, path)?
        }
        DataType::FixedSizeList(_, size) => {
            let size = usize::try_from(*size).unwrap_or(0);
            elements(py, array.as_fixed_size_list().values(), row * size..(row + 1) * size, path)?
        }
        other => return Err(PyTypeError::new_err(format!("{path}: no message field is a {other}"))),
    })
}

/// Elements `range` of `values`: a numpy view for numbers, else a list.
fn elements<'py>(py: Python<'py>, values: &ArrayRef, range: Range<usize>, path: &str) -> PyResult<Bound<'py, PyAny>> {
    if range.start > range.end || range.end > values.len() {
        return Err(malformed(path));
    }
    let t = values.data_type();
    if let (Some(width), Some(dtype)) = (t.primitive_width(), numpy_dtype(t)) {
        let data = values.to_data();
        let bytes = data.buffers()[0].slice_with_length((data.offset() + range.start) * width, range.len() * width);
        static FROMBUFFER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let frombuffer = FROMBUFFER
            .get_or_try_init(py, || -> PyResult<_> { Ok(py.import("numpy")?.getattr("frombuffer")?.unbind()) })?;
        return frombuffer.bind(py).call1((BufferView { bytes }, dtype));
    }
    let items = range.map(|i| plain(py, values, i, path)).collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, items)?.into_any())
}

fn numpy_dtype(t: &DataType) -> Option<&'static str> {
    Some(match t {
        DataType::Int8 => "i1",
        DataType::UInt8 => "u1",
        DataType::Int16 => "<i2",
        DataType::UInt16 => "<u2",
        DataType::Int32 => "<i4",
        DataType::UInt32 => "<u4",
        DataType::Int64 => "<i8",
        DataType::UInt64 => "<u8",
        DataType::Float32 => "<f4",
        DataType::Float64 => "<f8",
        _ => return None,
    })
}

/// Bytes of a received value lent to numpy, read-only; the value's memory (shared memory, for
/// a message from another process) stays mapped while a view of them lives.
#[pyclass(frozen, module = "nerve._nerve")]
struct BufferView {
    bytes: Buffer,
}

#[pymethods]
impl BufferView {
    unsafe fn __getbuffer__(slf: Bound<'_, Self>, view: *mut ffi::Py_buffer, flags: c_int) -> PyResult<()> {
        let bytes = &slf.get().bytes;
        let len = isize::try_from(bytes.len()).map_err(|_| PyBufferError::new_err("buffer too large"))?;
        // SAFETY: `len` bytes at the pointer stay valid while `bytes`, held by this object (which
        // the view references), lives; read-only (1), so nothing writes to a message others read.
        let rc = unsafe { ffi::PyBuffer_FillInfo(view, slf.as_ptr(), bytes.as_ptr().cast_mut().cast(), len, 1, flags) };
        if rc == 0 { Ok(()) } else { Err(PyErr::fetch(slf.py())) }
    }
}

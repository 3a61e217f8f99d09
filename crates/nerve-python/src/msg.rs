//! What `nerve.msg` is built on: ROS 2 message definitions, their Arrow types, CDR and type
//! hashes, from the process's type registry.
//!
//! The registry reads `NERVE_TYPES_PATH` (a dataflow's `types:` folders reach its nodes there),
//! `AMENT_PREFIX_PATH` and the shipped interfaces, as the variables are when a type is used.

use std::ffi::OsString;
use std::sync::{Arc, Mutex};

use arrow_array::ArrayRef;
use nerve_types::{
    Array as Count, BaseType, CdrError, Codec, Registry, TYPES_PATH_VAR, TypeName, TypesError, Value, type_hash,
};
use pyo3::exceptions::{PyLookupError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use crate::arrow::PyArrow;

/// The registry and the codecs made from it, for the environment they were made in.
struct Types {
    env: [Option<OsString>; 2],
    registry: Arc<Registry>,
    codecs: Vec<(TypeName, Arc<Codec>)>,
}

static TYPES: Mutex<Option<Types>> = Mutex::new(None);

/// Runs `f` on the process's registry and codecs, made again when `NERVE_TYPES_PATH` or
/// `AMENT_PREFIX_PATH` changed since (a program may set them before it uses a type).
fn with_types<R>(f: impl FnOnce(&mut Types) -> R) -> R {
    let env = [std::env::var_os(TYPES_PATH_VAR), std::env::var_os("AMENT_PREFIX_PATH")];
    let mut guard = nerve_shm::sync::recover(TYPES.lock());
    if guard.as_ref().is_some_and(|t| t.env != env) {
        *guard = None;
    }
    f(guard.get_or_insert_with(|| Types { env, registry: Arc::new(Registry::new(&[])), codecs: Vec::new() }))
}

fn registry() -> Arc<Registry> {
    with_types(|t| t.registry.clone())
}

fn type_name(name: &str) -> PyResult<TypeName> {
    TypeName::parse(name).map_err(|e| PyValueError::new_err(e.to_string()))
}

fn types_error(e: &TypesError) -> PyErr {
    match e {
        TypesError::Unknown(_) => PyLookupError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// An error encoding a value: one that does not fit its type is a `TypeError`, a row past
/// the end a `ValueError`.
fn encode_error(e: &CdrError) -> PyErr {
    match e {
        CdrError::Type(t) => types_error(t),
        CdrError::Field { .. } => PyTypeError::new_err(e.to_string()),
        CdrError::Frame { .. } => PyValueError::new_err(e.to_string()),
    }
}

/// The codec of `name`, made once per registry: making one resolves every nested type.
fn codec(name: &str) -> PyResult<Arc<Codec>> {
    let name = type_name(name)?;
    with_types(|types| {
        if let Some((_, c)) = types.codecs.iter().find(|(n, _)| *n == name) {
            return Ok(c.clone());
        }
        let codec = Arc::new(Codec::new(&types.registry, &name).map_err(|e| types_error(&e))?);
        types.codecs.push((name, codec.clone()));
        Ok(codec)
    })
}

fn value_to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(f) => f.into_pyobject(py)?.into_any(),
        Value::Str(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(items) => {
            PyList::new(py, items.iter().map(|i| value_to_py(py, i)).collect::<PyResult<Vec<_>>>()?)?.into_any()
        }
    })
}

/// The definition of message type `name` as Python data: its canonical name, its fields
/// (`name`, `base` as `("primitive", "float64")`, `("string", bound)` or `("message",
/// "pkg/msg/Type")`, `count` as `None`, `("fixed", n)`, `("bounded", n)` or `("unbounded",
/// None)`, `default` or `None`) and its constants.
#[pyfunction]
fn msg_definition<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
    let name = type_name(name)?;
    let message = registry().message(&name).map_err(|e| types_error(&e))?;
    let fields = PyList::empty(py);
    for f in &message.fields {
        let base = match &f.ty.base {
            BaseType::Primitive(p) => ("primitive", p.as_str().into_pyobject(py)?.into_any()),
            BaseType::String(bound) | BaseType::WString(bound) => ("string", bound.into_pyobject(py)?.into_any()),
            BaseType::Message(nested) => ("message", nested.to_string().into_pyobject(py)?.into_any()),
        };
        let count: Option<(&str, Option<usize>)> = match f.ty.array {
            Count::Single => None,
            Count::Fixed(n) => Some(("fixed", Some(n))),
            Count::Bounded(n) => Some(("bounded", Some(n))),
            Count::Unbounded => Some(("unbounded", None)),
        };
        let field = PyDict::new(py);
        field.set_item("name", &f.name)?;
        field.set_item("base", PyTuple::new(py, [base.0.into_pyobject(py)?.into_any(), base.1])?)?;
        field.set_item("count", count)?;
        field.set_item("default", f.default.as_ref().map(|d| value_to_py(py, d)).transpose()?)?;
        fields.append(field)?;
    }
    let constants = PyDict::new(py);
    for c in &message.constants {
        constants.set_item(&c.name, value_to_py(py, &c.value)?)?;
    }
    let out = PyDict::new(py);
    out.set_item("name", message.name.to_string())?;
    out.set_item("fields", fields)?;
    out.set_item("constants", constants)?;
    Ok(out)
}

/// `pyarrow`'s entry points, looked up once for every `nerve.msg` call.
fn pyarrow(py: Python<'_>) -> PyResult<&PyArrow> {
    static PYARROW: PyOnceLock<PyArrow> = PyOnceLock::new();
    PYARROW.get_or_try_init(py, || PyArrow::import(py))
}

/// The Arrow type of message type `name`.
pub(crate) fn arrow_type(name: &str) -> PyResult<arrow_schema::DataType> {
    Ok(codec(name)?.data_type().clone())
}

/// The one-row `pyarrow` value of `message`, an instance of a `nerve.msg` class.
#[pyfunction]
fn msg_to_arrow(py: Python<'_>, message: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    pyarrow(py)?.import_data(py, &crate::msg_value::message_data(message)?)
}

/// Row `row` of a `pyarrow` value of message type `name`, its fields read as asked for (see
/// `msg_value::MessageFields`): what `Type.from_arrow` makes its instance of.
#[pyfunction]
#[pyo3(signature = (value, name, row = 0))]
fn msg_fields(value: &Bound<'_, PyAny>, name: &str, row: usize) -> PyResult<crate::msg_value::MessageFields> {
    crate::msg_value::fields(value, row, name)
}

/// The `pyarrow.DataType` of message type `name`.
#[pyfunction]
fn msg_arrow_type(py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
    pyarrow(py)?.py_type(py, codec(name)?.data_type(), None)
}

/// Row `row` of `value` (a `pyarrow` array of message type `name`) as ROS 2 CDR bytes.
#[pyfunction]
#[pyo3(signature = (value, name, row = 0))]
fn msg_to_cdr<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    name: &str,
    row: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let codec = codec(name)?;
    let (array, _extension): (ArrayRef, _) = PyArrow::from_py(value)?;
    let bytes = py.detach(|| codec.encode(array.as_ref(), row)).map_err(|e| encode_error(&e))?;
    Ok(PyBytes::new(py, &bytes))
}

/// A one-row `pyarrow` array of message type `name` from ROS 2 CDR bytes.
#[pyfunction]
fn msg_from_cdr(py: Python<'_>, data: &[u8], name: &str) -> PyResult<Py<PyAny>> {
    let codec = codec(name)?;
    let array = py.detach(|| codec.decode(data)).map_err(|e| match e {
        CdrError::Type(t) => types_error(&t),
        bad_bytes => PyValueError::new_err(bad_bytes.to_string()),
    })?;
    pyarrow(py)?.to_py(py, &array, None)
}

/// The ROS 2 type hash of `name` (`RIHS01_…`, REP 2011).
#[pyfunction]
fn msg_type_hash(name: &str) -> PyResult<String> {
    type_hash(&registry(), &type_name(name)?).map_err(|e| types_error(&e))
}

/// Every type the registry finds, as canonical names.
#[pyfunction]
fn msg_types() -> PyResult<Vec<String>> {
    let listed = registry().list().map_err(|e| types_error(&e))?;
    Ok(listed.into_keys().map(|n| n.to_string()).collect())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(msg_definition, m)?)?;
    m.add_function(wrap_pyfunction!(msg_arrow_type, m)?)?;
    m.add_function(wrap_pyfunction!(msg_to_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(msg_fields, m)?)?;
    m.add_function(wrap_pyfunction!(msg_to_cdr, m)?)?;
    m.add_function(wrap_pyfunction!(msg_from_cdr, m)?)?;
    m.add_function(wrap_pyfunction!(msg_type_hash, m)?)?;
    m.add_function(wrap_pyfunction!(msg_types, m)?)?;
    Ok(())
}

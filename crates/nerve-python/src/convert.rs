//! JSON values (metadata, dataflow descriptors) to and from Python objects.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

const MAX_DEPTH: usize = 64;

/// A JSON value as the equivalent Python object.
pub(crate) fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => map_to_dict(py, map)?.into_any(),
    })
}

/// A JSON object as a Python dict.
pub(crate) fn map_to_dict<'py>(py: Python<'py>, map: &Map<String, Value>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in map {
        d.set_item(k, to_py(py, v)?)?;
    }
    Ok(d)
}

/// A Python dict of plain values (bool, int, float, str, None, lists and dicts of them, numpy
/// scalars as their Python values) as a JSON object.
pub(crate) fn dict_to_map(d: &Bound<'_, PyDict>) -> PyResult<Map<String, Value>> {
    let mut map = Map::new();
    for (k, v) in d.iter() {
        let key: String = k.extract().map_err(|_| PyTypeError::new_err("metadata keys must be strings"))?;
        let value = from_py(&v, &format!("metadata `{key}`"), 0)?;
        map.insert(key, value);
    }
    Ok(map)
}

/// A plain Python value (bool, int, float, str, None, lists and dicts of them; numpy scalars of
/// those kinds count as their Python values) as JSON; `what` names the value in errors
/// (``metadata `frame` ``).
pub(crate) fn from_py(v: &Bound<'_, PyAny>, what: &str, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(PyTypeError::new_err(format!("{what} is nested too deeply")));
    }
    if v.is_none() {
        Ok(Value::Null)
    } else if let Ok(b) = v.cast::<PyBool>() {
        Ok(Value::Bool(b.is_true()))
    } else if v.is_instance_of::<PyInt>() {
        if let Ok(i) = v.extract::<i64>() { Ok(Value::from(i)) } else { Ok(Value::from(v.extract::<u64>()?)) }
    } else if let Ok(f) = v.cast::<PyFloat>() {
        Number::from_f64(f.value())
            .map(Value::Number)
            .ok_or_else(|| PyTypeError::new_err(format!("{what}: {} is not a finite number", f.value())))
    } else if let Ok(s) = v.cast::<PyString>() {
        Ok(Value::String(s.to_str()?.to_owned()))
    } else if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        v.try_iter()?.map(|item| from_py(&item?, what, depth + 1)).collect::<PyResult<Vec<_>>>().map(Value::Array)
    } else if let Ok(d) = v.cast::<PyDict>() {
        let mut map = Map::new();
        for (k, item) in d.iter() {
            let k: String = k.extract().map_err(|_| PyTypeError::new_err(format!("{what}: keys must be strings")))?;
            map.insert(k, from_py(&item, what, depth + 1)?);
        }
        Ok(Value::Object(map))
    } else if let Some(plain) = numpy_scalar(v)? {
        from_py(&plain, what, depth + 1)
    } else {
        Err(PyTypeError::new_err(format!(
            "{what}: {} is not a bool, int, float, str, None, list or dict",
            v.get_type().name()?
        )))
    }
}

/// The Python value a numpy bool, integer or floating scalar holds (`numpy.int64(3)` is `3`),
/// since numpy code hands those out where plain numbers are meant (`array.sum()`, `array[0]`);
/// `None` for anything else. (`numpy.float64` is a `float` already.)
fn numpy_scalar<'py>(v: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    // Only a type of numpy's own can be one: other values never import numpy.
    if v.get_type().module()?.to_str()? != "numpy" {
        return Ok(None);
    }
    let numpy = v.py().import("numpy")?;
    for kind in ["bool_", "integer", "floating"] {
        if v.is_instance(&numpy.getattr(kind)?)? {
            return v.call_method0("item").map(Some);
        }
    }
    Ok(None)
}

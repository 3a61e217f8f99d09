//! A node's parameters from Python: values to and from Python objects, and on-change callbacks
//! that run on the node's control thread with the GIL taken.

use nerve_node::{ParamError, ParamValue, Params};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyString};

use crate::convert;
use crate::errors::ParameterError;

/// Maps a parameter error to ``nerve.ParameterError``, with the node's or runtime's reason.
pub(crate) fn param_error(e: &ParamError) -> PyErr {
    ParameterError::new_err(e.to_string())
}

/// A Python value (bool, int, float, str, or a list or tuple of one of those) as a parameter value.
pub(crate) fn from_py(key: &str, value: &Bound<'_, PyAny>) -> PyResult<ParamValue> {
    let what = format!("parameter `{key}`");
    let json = convert::from_py(value, &what, 0)?;
    ParamValue::from_json(&json).map_err(|why| PyTypeError::new_err(format!("{what}: {why}")))
}

/// A parameter value as the Python value it stands for.
pub(crate) fn to_py<'py>(py: Python<'py>, value: &ParamValue) -> PyResult<Bound<'py, PyAny>> {
    convert::to_py(py, &value.to_json())
}

/// Every parameter as a dict, by key.
pub(crate) fn to_dict<'py>(py: Python<'py>, params: &Params) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (key, value) in params.list() {
        d.set_item(key, to_py(py, &value)?)?;
    }
    Ok(d)
}

/// Registers `callback(key, value)`: ``None`` or ``True`` accepts, ``False`` or a ``str`` reason
/// refuses, and an exception refuses with its text as the reason.
pub(crate) fn on_change(params: &Params, callback: Py<PyAny>) {
    params.on_change(move |key, value| {
        Python::attach(|py| {
            let verdict = to_py(py, value).and_then(|v| callback.bind(py).call1((key, v)));
            match verdict {
                Ok(r) if r.is_none() => Ok(()),
                Ok(r) => match (r.cast::<PyBool>(), r.cast::<PyString>()) {
                    (Ok(b), _) if b.is_true() => Ok(()),
                    (Ok(_), _) => Err("refused by the node's on_param_change callback".into()),
                    (_, Ok(reason)) => Err(reason.to_string().into()),
                    _ => Err(format!(
                        "the node's on_param_change callback returned {}; it must return None or True to \
                         accept, False or a reason (str) to refuse",
                        r.get_type().name().map_or_else(|_| "an object".to_owned(), |n| n.to_string())
                    )
                    .into()),
                },
                // The setter sees what was raised, as Python prints it: `ValueError: …`.
                Err(e) => Err(e.to_string().into()),
            }
        })
    });
}

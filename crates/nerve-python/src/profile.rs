//! Stage stamps of the Python receive path, for `benches/profile/breakdown.yml` (cargo feature
//! `profile-stages`, which also has `nerve-node` stamp the wait's return and the decode).
//!
//! An input event's metadata gets `_pa0` and `_pa1` around the pyarrow import of its array, and
//! `_dict` once its event dict is made, on `nerve.monotonic_ns()`.

use nerve_node::{Metadata, monotonic_ns};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// `node::input_event` for a message whose array `import` makes, with the stages stamped.
pub(crate) fn input_event<'py>(
    py: Python<'py>,
    id: impl IntoPyObject<'py>,
    metadata: &Metadata,
    import: impl FnOnce() -> PyResult<Py<PyAny>>,
) -> PyResult<Py<PyDict>> {
    let importing = monotonic_ns();
    let value = import()?;
    let imported = monotonic_ns();
    let event = crate::node::input_event(py, id, metadata, value)?;
    if let Some(meta) = event.bind(py).get_item("metadata")? {
        meta.set_item("_pa0", importing)?;
        meta.set_item("_pa1", imported)?;
        meta.set_item("_dict", monotonic_ns())?;
    }
    Ok(event)
}

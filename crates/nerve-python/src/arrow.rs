//! Moving arrays between Rust and `pyarrow` through the Arrow C data interface.

use std::sync::{Mutex, MutexGuard};

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema, from_ffi};
use arrow_array::{ArrayRef, make_array};
use arrow_data::ArrayData;
use arrow_schema::DataType;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;

use nerve_node::Extension;
use nerve_shm::sync::recover;

use crate::prebuilt::{Import, Prebuilt};

/// `pyarrow` entry points, looked up once per node.
pub(crate) struct PyArrow {
    import_array: Py<PyAny>,
    import_type: Py<PyAny>,
    array_type: Py<PyAny>,
    to_array: Py<PyAny>,
    /// Python type objects of recently seen Arrow types, and the extension types they are the
    /// storage of: a node sees few distinct types.
    types: Mutex<Vec<(TypeKey, Py<PyAny>)>>,
    /// Arrays of received messages, imported ahead.
    prebuilt: Mutex<Prebuilt>,
}

impl PyArrow {
    pub(crate) fn import(py: Python<'_>) -> PyResult<Self> {
        let pa = py.import("pyarrow")?;
        let array = pa.getattr("Array")?;
        Ok(Self {
            import_array: array.getattr("_import_from_c")?.unbind(),
            import_type: pa.getattr("DataType")?.getattr("_import_from_c")?.unbind(),
            array_type: array.unbind(),
            to_array: pa.getattr("array")?.unbind(),
            types: Mutex::new(Vec::new()),
            prebuilt: Mutex::default(),
        })
    }

    pub(crate) fn py_type(&self, py: Python<'_>, t: &DataType, extension: Option<&Extension>) -> PyResult<Py<PyAny>> {
        // Python runs while the lock is held (the import): waiting for it must let go of the GIL, or
        // another thread holding the lock and waiting for the GIL would never get either.
        let mut types = recover(self.types.lock_py_attached(py));
        if let Some((_, ty)) = types.iter().find(|(k, _)| k.0 == *t && k.1.as_ref() == extension) {
            return Ok(ty.clone_ref(py));
        }
        // pyarrow makes an extension type (a `FixedShapeTensorType`) of a field carrying its
        // name and metadata, when it knows the extension, and the storage type otherwise.
        let schema = match extension {
            Some(e) => FFI_ArrowSchema::try_from(&e.field("", t.clone())),
            None => FFI_ArrowSchema::try_from(t),
        }
        .map_err(|e| PyTypeError::new_err(e.to_string()))?;
        let addr = std::ptr::addr_of!(schema) as usize;
        // pyarrow copies the schema description; `schema` is released when it goes out of scope.
        let ty = self.import_type.call1(py, (addr,))?;
        if types.len() >= 64 {
            types.remove(0);
        }
        types.push(((t.clone(), extension.cloned()), ty.clone_ref(py)));
        Ok(ty)
    }

    /// A `pyarrow.Array` viewing the same buffers as `data` (no copy): an extension array
    /// (a `FixedShapeTensorArray`) when `data` is the storage of `extension`.
    pub(crate) fn to_py(&self, py: Python<'_>, data: &ArrayRef, extension: Option<&Extension>) -> PyResult<Py<PyAny>> {
        self.import_as(py, &data.to_data(), extension)
    }

    /// [`PyArrow::to_py`] for an array already in its `ArrayData` form.
    pub(crate) fn import_data(&self, py: Python<'_>, data: &ArrayData) -> PyResult<Py<PyAny>> {
        self.import_as(py, data, None)
    }

    /// [`PyArrow::to_py`] for an array in its `ArrayData` form, the storage of `extension`.
    pub(crate) fn import_as(
        &self,
        py: Python<'_>,
        data: &ArrayData,
        extension: Option<&Extension>,
    ) -> PyResult<Py<PyAny>> {
        let ty = self.py_type(py, data.data_type(), extension)?;
        let array = FFI_ArrowArray::new(data);
        let addr = std::ptr::addr_of!(array) as usize;
        // pyarrow moves the struct out (it takes over the release callback, which drops our
        // reference to the shared block when Python frees the array).
        self.import_array.call1(py, (addr, ty))
    }

    /// Like [`PyArrow::to_py`] for a received message: served by the array imported ahead for
    /// its place, if there is one (see `prebuilt`; extension arrays never are).
    pub(crate) fn received(
        &self,
        py: Python<'_>,
        data: &ArrayRef,
        extension: Option<&Extension>,
    ) -> PyResult<Py<PyAny>> {
        if extension.is_some() {
            return self.to_py(py, data, extension);
        }
        self.lock_prebuilt(py).array(py, self, data)
    }

    /// Imports arrays ahead for the places recent messages came from. Call before waiting for
    /// the next message: the work is done with warm caches, off the latency path.
    pub(crate) fn prepare(&self, py: Python<'_>) -> PyResult<()> {
        self.lock_prebuilt(py).prepare(py, self)
    }

    /// How many received messages were served by an array imported ahead.
    pub(crate) fn imported_ahead(&self, py: Python<'_>) -> u64 {
        self.lock_prebuilt(py).used()
    }

    /// The received message's data behind `obj`, if `obj` is an array this node was just handed
    /// for it (see `prebuilt`): sent on without an export.
    pub(crate) fn message_of(&self, py: Python<'_>, obj: &Bound<'_, PyAny>) -> Option<ArrayData> {
        self.lock_prebuilt(py).send_on(py, obj)
    }

    /// How many arrays were sent on with the data of the message they came in.
    pub(crate) fn sent_on(&self, py: Python<'_>) -> u64 {
        self.lock_prebuilt(py).sent_on()
    }

    /// The arrays imported ahead. Python runs while the lock is held (the imports), so waiting
    /// for it lets go of the GIL, as in [`PyArrow::py_type`].
    fn lock_prebuilt(&self, py: Python<'_>) -> MutexGuard<'_, Prebuilt> {
        recover(self.prebuilt.lock_py_attached(py))
    }

    /// Whether `obj` is a `pyarrow.Array`.
    pub(crate) fn is_array(&self, py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<bool> {
        obj.is_instance(self.array_type.bind(py))
    }

    /// `pyarrow.array(obj)`: lists, scalars sequences and the like.
    pub(crate) fn convert<'py>(&self, py: Python<'py>, obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        self.to_array.bind(py).call1((obj,))
    }

    /// The Rust view of a `pyarrow.Array` (no copy; the buffers stay owned by pyarrow): its
    /// storage, and the extension type it stands for if it is an extension array.
    pub(crate) fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<(ArrayRef, Option<Extension>)> {
        let mut array = FFI_ArrowArray::empty();
        let mut schema = FFI_ArrowSchema::empty();
        obj.call_method1(
            "_export_to_c",
            (std::ptr::addr_of_mut!(array) as usize, std::ptr::addr_of_mut!(schema) as usize),
        )?;
        let extension = extension_of(&schema)?;
        // SAFETY: pyarrow just filled both structs following the C data interface.
        let data: ArrayData = unsafe { from_ffi(array, &schema) }.map_err(|e| PyTypeError::new_err(e.to_string()))?;
        Ok((make_array(data), extension))
    }
}

/// The Arrow type and the extension type it is the storage of, if any.
type TypeKey = (DataType, Option<Extension>);

/// The extension type an exported array's schema names, if any.
fn extension_of(schema: &FFI_ArrowSchema) -> PyResult<Option<Extension>> {
    let mut metadata = schema.metadata().map_err(|e| PyTypeError::new_err(e.to_string()))?;
    Ok(metadata
        .remove("ARROW:extension:name")
        .map(|name| Extension { name, metadata: metadata.remove("ARROW:extension:metadata").unwrap_or_default() }))
}

impl Import for PyArrow {
    fn import_data(&self, py: Python<'_>, data: &ArrayData) -> PyResult<Py<PyAny>> {
        PyArrow::import_data(self, py, data)
    }
}

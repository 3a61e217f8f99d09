//! `pyarrow` arrays imported ahead of the message they will show.
//!
//! Importing an array into `pyarrow` is the largest single cost of receiving a message in
//! Python, and a node that sleeps between messages pays it with cold caches: several times its
//! warm cost, all of it on the latency path. Yet the array of a flat message of numbers is fully
//! given by where its values lie, their type and their count, and a steady stream keeps coming
//! back to the same few shared-memory blocks. So, while a node is between messages (warm, and
//! off the latency path), an array is imported for each place recent messages came from more
//! than once; a message that arrives at such a place is handed that array, and its block is
//! attached to the array's buffer at that moment. Every other message is imported as it comes.

use std::ptr::NonNull;
use std::sync::{Arc, Mutex, PoisonError};

use arrow_buffer::Buffer;
use arrow_data::ArrayData;
use arrow_schema::DataType;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::arrow::PyArrow;

/// How many recent places are remembered (a reader that holds on to a few messages while the
/// next arrives still finds its blocks here).
const REMEMBERED: usize = 4;

/// Where a flat array of numbers lies: two messages at one place have equal arrays.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Place {
    data_type: DataType,
    len: usize,
    offset: usize,
    values: usize,
    bytes: usize,
}

impl Place {
    /// The place of `data` when it is one buffer of numbers without nulls or children.
    fn of(data: &ArrayData) -> Option<Self> {
        let [values] = data.buffers() else { return None };
        (data.data_type().primitive_width().is_some() && data.nulls().is_none() && data.child_data().is_empty()).then(
            || Self {
                data_type: data.data_type().clone(),
                len: data.len(),
                offset: data.offset(),
                values: values.as_ptr() as usize,
                bytes: values.len(),
            },
        )
    }

    /// An array at this place whose memory is kept alive by whatever `owner` will hold.
    fn array(&self, owner: Arc<Owner>) -> PyResult<ArrayData> {
        let values = NonNull::new(self.values as *mut u8).ok_or_else(|| PyValueError::new_err("null buffer"))?;
        // SAFETY: nothing reads these bytes until `Prebuilt::array` hands the array out, and it
        // does so only after putting into `owner` a received array whose buffer has this very
        // address and length (and which keeps its block mapped). Until then the array lives
        // only in `Prebuilt`, and neither Arrow's layout checks nor pyarrow's import read
        // values.
        let buffer = unsafe { Buffer::from_custom_allocation(values, self.bytes, owner) };
        ArrayData::builder(self.data_type.clone())
            .len(self.len)
            .offset(self.offset)
            .add_buffer(buffer)
            .build()
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }
}

/// Keeps the received message (and so its block) alive for as long as pyarrow uses the array.
#[derive(Debug, Default)]
struct Owner(Mutex<Option<ArrayData>>);

/// An imported array waiting for a message at its place.
struct Ready {
    place: Place,
    array: Py<PyAny>,
    owner: Arc<Owner>,
}

/// The arrays one node keeps ready.
#[derive(Default)]
pub(crate) struct Prebuilt {
    /// Recent places, most recent first, and how many messages came from each.
    seen: Vec<(Place, u32)>,
    ready: Vec<Ready>,
    /// Messages handed an array imported ahead.
    used: u64,
}

impl Prebuilt {
    /// The `pyarrow` array of `data` (no copy): the one prepared for its place, else imported
    /// now.
    pub(crate) fn array(&mut self, py: Python<'_>, pa: &PyArrow, data: &arrow_array::ArrayRef) -> PyResult<Py<PyAny>> {
        let data = data.to_data();
        let Some(place) = Place::of(&data) else { return pa.import_data(py, &data) };
        let found = self.ready.iter().position(|r| r.place == place);
        self.saw(place);
        let Some(i) = found else { return pa.import_data(py, &data) };
        let ready = self.ready.swap_remove(i);
        *ready.owner.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(data);
        self.used += 1;
        Ok(ready.array)
    }

    /// Imports an array for every recent place messages came from more than once and that has
    /// none ready; forgets those of places no longer recent. Call between messages.
    pub(crate) fn prepare(&mut self, py: Python<'_>, pa: &PyArrow) -> PyResult<()> {
        let seen = &self.seen;
        self.ready.retain(|r| seen.iter().any(|(p, _)| *p == r.place));
        for (place, count) in &self.seen {
            if *count < 2 || self.ready.iter().any(|r| r.place == *place) {
                continue;
            }
            let owner = Arc::new(Owner::default());
            let array = pa.import_data(py, &place.array(owner.clone())?)?;
            self.ready.push(Ready { place: place.clone(), array, owner });
        }
        Ok(())
    }

    /// How many messages were handed an array imported ahead.
    pub(crate) fn used(&self) -> u64 {
        self.used
    }

    fn saw(&mut self, place: Place) {
        let count = match self.seen.iter().position(|(p, _)| *p == place) {
            Some(i) => self.seen.remove(i).1.saturating_add(1),
            None => 1,
        };
        self.seen.insert(0, (place, count));
        self.seen.truncate(REMEMBERED);
    }
}

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
//!
//! A node that sends such an array on as it got it (a relay, an echo) has its data at hand here:
//! the send takes it from the message rather than exporting it back out of pyarrow, which costs
//! tens of microseconds with cold caches.

use std::collections::VecDeque;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, Weak};

use arrow_buffer::Buffer;
use arrow_data::ArrayData;
use arrow_schema::DataType;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyWeakrefReference;

use nerve_shm::sync::lock;

/// How an array becomes a `pyarrow` array: `PyArrow` (in `arrow.rs`, which holds the
/// [`Prebuilt`] arrays) imports both the arrays prepared here and every other one.
pub(crate) trait Import {
    /// `data` as a `pyarrow` array, without a copy.
    fn import_data(&self, py: Python<'_>, data: &ArrayData) -> PyResult<Py<PyAny>>;
}

/// How many recent places are remembered: a few blocks per input for a node with several
/// inputs (8 → 1), and a reader that holds on to a few messages while the next arrive.
const REMEMBERED: usize = 32;

/// How many arrays handed out last can be sent on without an export: a relay sends on the
/// message it just got, or one of the last few it keeps.
const HANDED: usize = 8;

/// Where a flat array of numbers lies: two messages at one place have equal arrays.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Place {
    // First: the field that tells places apart soonest.
    values: usize,
    bytes: usize,
    len: usize,
    offset: usize,
    data_type: DataType,
}

impl Place {
    /// The place of `data` when it is one buffer of numbers without nulls or children.
    fn of(data: &ArrayData) -> Option<Self> {
        let [values] = data.buffers() else { return None };
        (data.data_type().primitive_width().is_some() && data.nulls().is_none() && data.child_data().is_empty()).then(
            || Self {
                values: values.as_ptr() as usize,
                bytes: values.len(),
                len: data.len(),
                offset: data.offset(),
                data_type: data.data_type().clone(),
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
    array: Py<PyAny>,
    owner: Arc<Owner>,
    /// Tells this very array apart from any other object later at the same address.
    weak: Py<PyWeakrefReference>,
}

/// An array handed out for a received message: while it lives, its owner holds the message.
struct Handed {
    weak: Py<PyWeakrefReference>,
    // Weak: the message stays held only as long as pyarrow uses the array.
    owner: Weak<Owner>,
}

/// A recent place: how many messages came from it, when the last did, and its array if one is
/// ready.
struct Seen {
    place: Place,
    count: u32,
    last: u64,
    ready: Option<Ready>,
}

/// The arrays one node keeps ready.
#[derive(Default)]
pub(crate) struct Prebuilt {
    /// Where each remembered place's values lie (by index into `seen`): the lookup on arrival
    /// runs with cold caches, so it scans these few lines rather than every entry.
    addresses: Vec<usize>,
    seen: Vec<Seen>,
    /// Messages received so far (the clock of `Seen::last`).
    received: u64,
    /// Messages handed an array imported ahead.
    used: u64,
    /// The arrays imported ahead handed out last, newest first.
    handed: VecDeque<Handed>,
    /// Arrays sent on with the data of their message ([`Prebuilt::message_of`]).
    sent_on: u64,
}

impl Prebuilt {
    /// The `pyarrow` array of `data` (no copy): the one prepared for its place, else imported
    /// now.
    pub(crate) fn array(
        &mut self,
        py: Python<'_>,
        pa: &impl Import,
        data: &arrow_array::ArrayRef,
    ) -> PyResult<Py<PyAny>> {
        let data = data.to_data();
        let Some(place) = Place::of(&data) else { return pa.import_data(py, &data) };
        self.received += 1;
        let found =
            (0..self.addresses.len()).find(|&i| self.addresses[i] == place.values && self.seen[i].place == place);
        let Some(i) = found else {
            self.remember(place);
            return pa.import_data(py, &data);
        };
        let seen = &mut self.seen[i];
        seen.count = seen.count.saturating_add(1);
        seen.last = self.received;
        let Some(ready) = seen.ready.take() else { return pa.import_data(py, &data) };
        *lock(&ready.owner.0) = Some(data);
        self.used += 1;
        if self.handed.len() == HANDED {
            self.handed.pop_back();
        }
        self.handed.push_front(Handed { weak: ready.weak, owner: Arc::downgrade(&ready.owner) });
        Ok(ready.array)
    }

    /// The received message behind `obj`, when `obj` is one of the arrays imported ahead that
    /// this node was handed last and still holds: sending it on needs no export from pyarrow.
    pub(crate) fn message_of(&mut self, py: Python<'_>, obj: &Bound<'_, PyAny>) -> Option<ArrayData> {
        // The weak reference, not the address, says it is the same object: an address can be
        // reused by a new array once the old one is gone.
        let handed = self.handed.iter().find(|h| h.weak.bind(py).upgrade().is_some_and(|o| o.is(obj)))?;
        let owner = handed.owner.upgrade()?;
        let data = lock(&owner.0).clone()?;
        self.sent_on += 1;
        Some(data)
    }

    /// How many arrays were sent on with the data of their message.
    pub(crate) fn sent_on(&self) -> u64 {
        self.sent_on
    }

    /// Imports an array for every recent place messages came from more than once and that has
    /// none ready. Call between messages.
    pub(crate) fn prepare(&mut self, py: Python<'_>, pa: &impl Import) -> PyResult<()> {
        for seen in self.seen.iter_mut().filter(|s| s.count >= 2 && s.ready.is_none()) {
            let owner = Arc::new(Owner::default());
            let array = pa.import_data(py, &seen.place.array(owner.clone())?)?;
            let weak = PyWeakrefReference::new(array.bind(py))?.unbind();
            seen.ready = Some(Ready { array, owner, weak });
        }
        Ok(())
    }

    /// How many messages were handed an array imported ahead.
    pub(crate) fn used(&self) -> u64 {
        self.used
    }

    /// Remembers a new place, in the stead of the least recently used one once full.
    fn remember(&mut self, place: Place) {
        let entry = Seen { place, count: 1, last: self.received, ready: None };
        if self.seen.len() < REMEMBERED {
            self.addresses.push(entry.place.values);
            self.seen.push(entry);
            return;
        }
        let oldest = (0..self.seen.len()).min_by_key(|&i| self.seen[i].last).unwrap_or(0);
        self.addresses[oldest] = entry.place.values;
        self.seen[oldest] = entry;
    }
}

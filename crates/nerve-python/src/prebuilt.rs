//! `pyarrow` arrays imported ahead of the message they will show.
//!
//! Importing an array into `pyarrow` is the largest single cost of receiving a message in
//! Python, and a node that sleeps between messages pays it with cold caches: several times its
//! warm cost, all of it on the latency path. Yet an array without nulls (a flat one of numbers,
//! a typed message) is fully given by its type, where its buffers lie and how long its parts
//! are, and a steady stream keeps coming back to the same few shared-memory blocks with
//! messages laid out alike. So, while a node is between messages (warm, and
//! off the latency path), an array is imported for each place recent messages came from more
//! than once; a message that arrives at such a place is handed that array, and its block is
//! attached to the array's buffer at that moment. Every other message is imported as it comes.
//!
//! A node that sends such an array on as it got it (a relay, an echo) has its data at hand here:
//! the send takes it from the message rather than exporting it back out of pyarrow, which costs
//! tens of microseconds with cold caches; so does `Message.from_arrow` reading a typed one.

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

/// How many arrays handed out last can be sent on or read without an export: a relay sends on
/// the message it just got, or one of the last few it keeps, and a typed reader reads the one
/// it just got (several nodes or subscribers may share a process).
const HANDED: usize = 16;

/// The arrays imported ahead that this process handed out last, newest first. Process-wide:
/// where one is used (sent on by a node, read by `Message.from_arrow`) the endpoint that
/// received it is not known.
static HANDED_OUT: Mutex<VecDeque<Handed>> = Mutex::new(VecDeque::new());

/// The received message behind `obj`, when `obj` is one of the arrays imported ahead that this
/// process was handed last and still holds: its data without an export from pyarrow, which
/// costs tens of microseconds with cold caches.
pub(crate) fn message_of(py: Python<'_>, obj: &Bound<'_, PyAny>) -> Option<ArrayData> {
    // The weak reference, not the address, says it is the same object: an address can be
    // reused by a new array once the old one is gone.
    let owner = {
        let handed = lock(&HANDED_OUT);
        handed.iter().find(|h| h.weak.bind(py).upgrade().is_some_and(|o| o.is(obj)))?.owner.upgrade()?
    };
    lock(&owner.0).clone()
}

/// Where an array's buffers lie and how its nodes are laid out: two messages at one place have
/// equal arrays. The array is any without nulls, a flat one of numbers or a nested message.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Place {
    /// Each buffer's address and length, a node's own before its children's, nodes in
    /// depth-first order. First: the field that tells places apart soonest.
    buffers: Vec<(usize, usize)>,
    /// Each node's length, offset, and how many buffers and children it has, in that order.
    nodes: Vec<[usize; 4]>,
    data_type: DataType,
}

/// How deep a nested array is taken apart; deeper ones (no message is) are imported as they come.
const MAX_DEPTH: usize = 16;

impl Place {
    /// The place of `data` when neither it nor any of its children has nulls (messages have
    /// none; a validity bitmap would be one more buffer whose bits must be read to compare).
    fn of(data: &ArrayData) -> Option<Self> {
        let mut place = Self { buffers: Vec::new(), nodes: Vec::new(), data_type: data.data_type().clone() };
        place.add(data, 0).then_some(place).filter(|p| !p.buffers.is_empty())
    }

    fn add(&mut self, data: &ArrayData, depth: usize) -> bool {
        if data.nulls().is_some() || depth > MAX_DEPTH {
            return false;
        }
        self.nodes.push([data.len(), data.offset(), data.buffers().len(), data.child_data().len()]);
        self.buffers.extend(data.buffers().iter().map(|b| (b.as_ptr() as usize, b.len())));
        data.child_data().iter().all(|child| self.add(child, depth + 1))
    }

    /// The address a lookup compares first.
    fn first(&self) -> usize {
        self.buffers[0].0
    }

    /// An array at this place whose memory is kept alive by whatever `owner` will hold.
    fn array(&self, owner: &Arc<Owner>) -> PyResult<ArrayData> {
        let mut nodes = self.nodes.iter();
        let mut buffers = self.buffers.iter();
        Self::node(&self.data_type, &mut nodes, &mut buffers, owner)
    }

    fn node<'a>(
        data_type: &DataType,
        nodes: &mut impl Iterator<Item = &'a [usize; 4]>,
        buffers: &mut impl Iterator<Item = &'a (usize, usize)>,
        owner: &Arc<Owner>,
    ) -> PyResult<ArrayData> {
        let malformed = || PyValueError::new_err("a place that does not match its type");
        let &[len, offset, n_buffers, n_children] = nodes.next().ok_or_else(malformed)?;
        let mut builder = ArrayData::builder(data_type.clone()).len(len).offset(offset);
        for &(address, bytes) in buffers.take(n_buffers) {
            let values = NonNull::new(address as *mut u8).ok_or_else(|| PyValueError::new_err("null buffer"))?;
            // SAFETY: nothing reads these bytes until `Prebuilt::array` hands the array out, and
            // it does so only after putting into `owner` a received array whose buffers have
            // these very addresses and lengths (and which keeps its block mapped). Until then
            // the array lives only in `Prebuilt`, and pyarrow's import reads no values.
            builder = builder.add_buffer(unsafe { Buffer::from_custom_allocation(values, bytes, owner.clone()) });
        }
        let child_types = nerve_shm::message::child_types(data_type);
        if child_types.len() != n_children {
            return Err(malformed());
        }
        for t in &child_types {
            builder = builder.add_child_data(Self::node(t, nodes, buffers, owner)?);
        }
        // SAFETY: not validated here, which would read the values (the offsets of a list or a
        // string) before the message they belong to has arrived: the array is handed out only
        // in the stead of a received array of this very layout, buffers and type, validated
        // when it was read from shared memory.
        Ok(unsafe { builder.build_unchecked() })
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
    /// Arrays sent on with the data of their message ([`Prebuilt::send_on`]).
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
            (0..self.addresses.len()).find(|&i| self.addresses[i] == place.first() && self.seen[i].place == place);
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
        let mut handed = lock(&HANDED_OUT);
        if handed.len() == HANDED {
            handed.pop_back();
        }
        handed.push_front(Handed { weak: ready.weak, owner: Arc::downgrade(&ready.owner) });
        Ok(ready.array)
    }

    /// The received message behind `obj` (see [`message_of`]), counted as sent on.
    pub(crate) fn send_on(&mut self, py: Python<'_>, obj: &Bound<'_, PyAny>) -> Option<ArrayData> {
        let data = message_of(py, obj)?;
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
            let array = pa.import_data(py, &seen.place.array(&owner)?)?;
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
            self.addresses.push(entry.place.first());
            self.seen.push(entry);
            return;
        }
        let oldest = (0..self.seen.len()).min_by_key(|&i| self.seen[i].last).unwrap_or(0);
        self.addresses[oldest] = entry.place.first();
        self.seen[oldest] = entry;
    }
}

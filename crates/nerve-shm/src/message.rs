//! The in-block message format: a fixed header, the Arrow type, the array layout, the sender's
//! metadata, then the Arrow buffers, each 64-byte aligned, exactly as readers will use them.
//!
//! Nothing is serialized per element: the layout is a few integers per buffer, so encoding and
//! decoding cost the same for 8 bytes and 64 MiB.

use std::borrow::Cow;
use std::sync::Arc;

use arrow_array::types::{
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{ArrayRef, PrimitiveArray, make_array};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, ScalarBuffer};
use arrow_data::ArrayData;
use arrow_schema::DataType;
use smallvec::SmallVec;

use crate::error::ShmError;

const MAGIC: u32 = 0x4d56_524e; // "NRVM"
/// Version of the message format; readers refuse other versions.
pub const MESSAGE_VERSION: u16 = 1;
/// Bytes of the fixed header.
pub const HEADER_LEN: usize = 64;
/// Alignment of every Arrow buffer inside a block.
pub const ALIGN: usize = 64;
const MAX_DEPTH: usize = 32;
const MAX_ITEMS: u64 = 4096;

/// What goes before the buffers of one message.
#[derive(Debug, Clone)]
pub struct Frame {
    // Shared: an outlet sends the same type with every message.
    type_json: Arc<[u8]>,
    // Inline up to a primitive array's layout, so the common send allocates nothing for it.
    layout: SmallVec<[u8; 64]>,
    meta: Vec<u8>,
    data_len: usize,
}

/// Name of Arrow's canonical fixed-shape tensor extension type.
pub const FIXED_SHAPE_TENSOR: &str = "arrow.fixed_shape_tensor";

/// The Arrow extension type a message's array stands for, the array being its storage: what an
/// Arrow field carries as `ARROW:extension:name` and `ARROW:extension:metadata`. An n-D numpy
/// array travels as [`FIXED_SHAPE_TENSOR`], so its shape arrives with it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Extension {
    /// The extension's name (`ARROW:extension:name`).
    pub name: String,
    /// Its serialized parameters (`ARROW:extension:metadata`; empty when it has none).
    pub metadata: String,
}

impl Extension {
    /// Arrow's canonical fixed-shape tensor of `shape`, in row-major order: its storage is a
    /// fixed-size list of the product of `shape` values, one list per tensor.
    #[must_use]
    pub fn fixed_shape_tensor(shape: &[usize]) -> Self {
        Self { name: FIXED_SHAPE_TENSOR.to_owned(), metadata: serde_json::json!({ "shape": shape }).to_string() }
    }

    /// The shape of a [`FIXED_SHAPE_TENSOR`] (in its stored order: a permuted tensor's
    /// `permutation` is not applied); `None` for another extension, or malformed metadata.
    #[must_use]
    pub fn tensor_shape(&self) -> Option<Vec<usize>> {
        #[derive(serde::Deserialize)]
        struct Params {
            shape: Vec<usize>,
        }
        if self.name != FIXED_SHAPE_TENSOR {
            return None;
        }
        serde_json::from_str::<Params>(&self.metadata).ok().map(|p| p.shape)
    }

    /// The Arrow field of a value of this extension whose storage type is `storage`: what
    /// `arrow_schema`'s `Field::try_extension_type` and pyarrow read an extension from.
    #[must_use]
    pub fn field(&self, name: &str, storage: DataType) -> arrow_schema::Field {
        let keys = [
            ("ARROW:extension:name".to_owned(), self.name.clone()),
            ("ARROW:extension:metadata".to_owned(), self.metadata.clone()),
        ];
        arrow_schema::Field::new(name, storage, true).with_metadata(std::collections::HashMap::from(keys))
    }
}

/// The type of a message as it travels: a plain Arrow type as `serde` writes it, or a JSON
/// object naming an extension and its storage type (no Arrow type serializes as such an
/// object, so the two never mix).
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
enum TypeJson<'a> {
    Extension { extension: Cow<'a, Extension>, storage: Cow<'a, DataType> },
    Plain(Cow<'a, DataType>),
}

/// Serializes an Arrow type, and the extension type its array stands for if any, the way
/// messages carry them.
///
/// # Errors
/// When the type cannot be represented.
pub fn encode_type(t: &DataType, extension: Option<&Extension>) -> Result<Vec<u8>, ShmError> {
    let json = match extension {
        Some(e) => TypeJson::Extension { extension: Cow::Borrowed(e), storage: Cow::Borrowed(t) },
        None => TypeJson::Plain(Cow::Borrowed(t)),
    };
    serde_json::to_vec(&json).map_err(|e| ShmError::Unsupported(format!("type {t}: {e}")))
}

/// Parses a type written by [`encode_type`].
///
/// # Errors
/// When the bytes are not a type.
pub fn decode_type(bytes: &[u8]) -> Result<(DataType, Option<Extension>), ShmError> {
    let json: TypeJson<'static> =
        serde_json::from_slice(bytes).map_err(|e| ShmError::Malformed(format!("array type: {e}")))?;
    Ok(match json {
        TypeJson::Extension { extension, storage } => (storage.into_owned(), Some(extension.into_owned())),
        TypeJson::Plain(t) => (t.into_owned(), None),
    })
}

impl Frame {
    /// Frame for a single buffer of `byte_len` bytes holding `items` values of a primitive
    /// type, with no nulls: the fast path for bytes, numpy arrays and loaned samples.
    #[must_use]
    pub fn primitive(type_json: impl Into<Arc<[u8]>>, items: usize, byte_len: usize, meta: Vec<u8>) -> Self {
        let mut layout = [0u8; 64];
        for (word, w) in layout.chunks_exact_mut(8).zip([items as u64, 0, 0, 0, 1, 0, byte_len as u64, 0]) {
            word.copy_from_slice(&w.to_le_bytes());
        }
        Self { type_json: type_json.into(), layout: SmallVec::from_buf(layout), meta, data_len: byte_len }
    }

    /// Frame for one tensor of `items` values of a primitive type in a single buffer of
    /// `byte_len` bytes, with no nulls: a fixed-size list array of one list (the storage of a
    /// [`FIXED_SHAPE_TENSOR`]) around the values of [`Frame::primitive`], for n-D arrays.
    #[must_use]
    pub fn tensor(type_json: impl Into<Arc<[u8]>>, items: usize, byte_len: usize, meta: Vec<u8>) -> Self {
        let mut frame = Self::primitive(type_json, items, byte_len, meta);
        // One list, no offset, no nulls, no buffers of its own, and the values as its one child.
        let list = [1u64, 0, 0, 0, 0, 1].map(u64::to_le_bytes);
        frame.layout.insert_many(0, list.into_iter().flatten());
        frame
    }

    /// Frame for any Arrow array, and the buffers to copy with their offsets in the data area.
    ///
    /// # Errors
    /// When the array is nested deeper than nerve carries.
    pub fn array(
        data: &ArrayData,
        type_json: impl Into<Arc<[u8]>>,
        meta: Vec<u8>,
    ) -> Result<(Self, Vec<(Buffer, usize)>), ShmError> {
        let mut layout = Vec::new();
        let mut copies = Vec::new();
        let mut data_len = 0usize;
        encode_node(data, &mut layout, &mut copies, &mut data_len, 0)?;
        Ok((Self { type_json: type_json.into(), layout: SmallVec::from_vec(layout), meta, data_len }, copies))
    }

    /// Copies `copies` (from [`Frame::array`]) into the data area of the message in `dst`.
    pub fn write_data(&self, dst: &mut [u8], copies: &[(Buffer, usize)]) {
        let start = self.data_offset();
        for (buffer, at) in copies {
            dst[start + at..start + at + buffer.len()].copy_from_slice(buffer.as_slice());
        }
    }

    /// Offset of the data area from the start of the block.
    #[must_use]
    pub fn data_offset(&self) -> usize {
        (HEADER_LEN + self.type_json.len() + self.layout.len() + self.meta.len()).next_multiple_of(ALIGN)
    }

    /// Bytes the whole message occupies.
    #[must_use]
    pub fn total_len(&self) -> usize {
        self.data_offset() + self.data_len
    }

    /// Writes everything but the buffers into the start of `dst`.
    ///
    /// # Panics
    /// If `dst` is shorter than [`Frame::data_offset`].
    pub fn write_head(&self, dst: &mut [u8], stamp: u64) {
        let mut h = [0u8; HEADER_LEN];
        h[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        h[4..6].copy_from_slice(&MESSAGE_VERSION.to_le_bytes());
        h[8..16].copy_from_slice(&stamp.to_le_bytes());
        h[16..20].copy_from_slice(&len32(self.type_json.len()).to_le_bytes());
        h[20..24].copy_from_slice(&len32(self.layout.len()).to_le_bytes());
        h[24..28].copy_from_slice(&len32(self.meta.len()).to_le_bytes());
        h[32..40].copy_from_slice(&(self.data_offset() as u64).to_le_bytes());
        h[40..48].copy_from_slice(&(self.data_len as u64).to_le_bytes());
        dst[..HEADER_LEN].copy_from_slice(&h);
        let mut at = HEADER_LEN;
        for part in [&self.type_json[..], &self.layout, &self.meta] {
            dst[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
    }
}

fn len32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn encode_node(
    data: &ArrayData,
    out: &mut Vec<u8>,
    copies: &mut Vec<(Buffer, usize)>,
    data_len: &mut usize,
    depth: usize,
) -> Result<(), ShmError> {
    if depth > MAX_DEPTH {
        return Err(ShmError::Unsupported(format!("arrays nested deeper than {MAX_DEPTH} levels")));
    }
    let mut push = |w: usize| out.extend_from_slice(&(w as u64).to_le_bytes());
    let mut place = |b: &Buffer, copies: &mut Vec<(Buffer, usize)>| {
        let at = data_len.next_multiple_of(ALIGN);
        *data_len = at + b.len();
        copies.push((b.clone(), at));
        at
    };
    push(data.len());
    push(data.offset());
    push(data.null_count());
    match data.nulls() {
        Some(n) => {
            let bits = n.inner();
            let at = place(bits.inner(), copies);
            push(1);
            for w in [at, bits.inner().len(), bits.offset(), bits.len()] {
                push(w);
            }
        }
        None => {
            push(0);
        }
    }
    push(data.buffers().len());
    for b in data.buffers() {
        let at = place(b, copies);
        push(at);
        push(b.len());
    }
    push(data.child_data().len());
    for child in data.child_data() {
        encode_node(child, out, copies, data_len, depth + 1)?;
    }
    Ok(())
}

/// A message read in place from a block.
#[derive(Debug, Clone, Copy)]
pub struct MessageView<'a> {
    /// Sender's monotonic clock at send, in nanoseconds.
    pub stamp: u64,
    /// The Arrow type, as written by [`encode_type`].
    pub type_json: &'a [u8],
    /// The sender's metadata (a JSON object, empty when none).
    pub meta: &'a [u8],
    layout: &'a [u8],
    data_offset: usize,
    data_len: usize,
}

impl<'a> MessageView<'a> {
    /// Checks and views the message in the first `len` bytes of `block`.
    ///
    /// # Errors
    /// When the header is not a nerve message of this version or points outside the block.
    pub fn parse(block: &'a [u8], len: usize) -> Result<Self, ShmError> {
        let bad = |what: &str| ShmError::Malformed(what.to_owned());
        if len > block.len() || len < HEADER_LEN {
            return Err(bad("message length outside its block"));
        }
        let bytes = &block[..len];
        let u32_at = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]) as usize;
        let u64_at = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[i..i + 8]);
            u64::from_le_bytes(w)
        };
        if u32_at(0) != MAGIC as usize {
            return Err(bad("not a nerve message (bad magic)"));
        }
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if version != MESSAGE_VERSION {
            return Err(ShmError::Malformed(format!(
                "message format {version}, this nerve reads format {MESSAGE_VERSION}"
            )));
        }
        let (tl, ll, ml) = (u32_at(16), u32_at(20), u32_at(24));
        let data_offset = usize::try_from(u64_at(32)).map_err(|_| bad("data offset"))?;
        let data_len = usize::try_from(u64_at(40)).map_err(|_| bad("data length"))?;
        let head_end = HEADER_LEN + tl + ll + ml;
        if head_end > data_offset || data_offset.checked_add(data_len).is_none_or(|e| e > len) {
            return Err(bad("header sections outside the message"));
        }
        Ok(Self {
            stamp: u64_at(8),
            type_json: &bytes[HEADER_LEN..HEADER_LEN + tl],
            layout: &bytes[HEADER_LEN + tl..HEADER_LEN + tl + ll],
            meta: &bytes[HEADER_LEN + tl + ll..head_end],
            data_offset,
            data_len,
        })
    }

    /// Rebuilds the array over the block without copying: `buffer(offset, len)` must return
    /// an Arrow buffer viewing those bytes of the block (offsets from the block start).
    ///
    /// # Errors
    /// When the layout is inconsistent with `data_type` or points outside the message.
    pub fn array(
        &self,
        data_type: &DataType,
        mut buffer: impl FnMut(usize, usize) -> Buffer,
    ) -> Result<ArrayData, ShmError> {
        let mut words = Words { bytes: self.layout, at: 0 };
        let data = decode_node(data_type, &mut words, self, &mut buffer, 0)?;
        if words.at != self.layout.len() {
            return Err(ShmError::Malformed("trailing bytes after the array layout".into()));
        }
        Ok(data)
    }

    /// Like [`MessageView::array`], as an array. A flat array of numbers without nulls (bytes,
    /// images, point clouds: most of what robots send) is built directly, sparing Arrow's
    /// generic route through `ArrayData`, which costs more than the rest of receiving a small
    /// message; everything else takes that route.
    ///
    /// # Errors
    /// As [`MessageView::array`].
    pub fn array_ref(
        &self,
        data_type: &DataType,
        mut buffer: impl FnMut(usize, usize) -> Buffer,
    ) -> Result<ArrayRef, ShmError> {
        if let Some(array) = self.flat_numbers(data_type, &mut buffer) {
            return Ok(array);
        }
        self.array(data_type, buffer).map(make_array)
    }

    /// The array, when it is one buffer of numbers with no validity bitmap and no children and
    /// the layout says so consistently; `None` for anything else (left to the generic route,
    /// which also names what is wrong with a malformed layout).
    fn flat_numbers(&self, t: &DataType, buffer: &mut impl FnMut(usize, usize) -> Buffer) -> Option<ArrayRef> {
        let width = t.primitive_width()?;
        let mut w = Words { bytes: self.layout, at: 0 };
        let (len, offset, _null_count) = (w.usize().ok()?, w.usize().ok()?, w.usize().ok()?);
        let (has_nulls, n_buffers) = (w.next().ok()?, w.next().ok()?);
        let (at, blen) = (w.usize().ok()?, w.usize().ok()?);
        let n_children = w.next().ok()?;
        let layout_ok = has_nulls == 0 && n_buffers == 1 && n_children == 0 && w.at == self.layout.len();
        if !layout_ok || !self.in_data(at, blen) {
            return None;
        }
        let mut values = || {
            let values = buffer(self.data_offset + at, blen);
            holds_values(&values, width, offset, len).then_some(values)
        };
        macro_rules! numbers {
            ($($variant:ident => $ty:ty),* $(,)?) => {
                match t {
                    $(DataType::$variant => {
                        Arc::new(PrimitiveArray::<$ty>::new(ScalarBuffer::new(values()?, offset, len), None)) as ArrayRef
                    })*
                    _ => return None,
                }
            };
        }
        Some(numbers! {
            UInt8 => UInt8Type, Int8 => Int8Type, UInt16 => UInt16Type, Int16 => Int16Type,
            UInt32 => UInt32Type, Int32 => Int32Type, UInt64 => UInt64Type, Int64 => Int64Type,
            Float32 => Float32Type, Float64 => Float64Type,
        })
    }

    /// Whether `len` bytes at `start` of the data area lie inside it, starting aligned.
    fn in_data(&self, start: usize, len: usize) -> bool {
        start.checked_add(len).is_some_and(|e| e <= self.data_len) && start.is_multiple_of(ALIGN)
    }
}

struct Words<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Words<'_> {
    fn next(&mut self) -> Result<u64, ShmError> {
        let end = self.at + 8;
        let w = self.bytes.get(self.at..end).ok_or_else(|| ShmError::Malformed("array layout ends early".into()))?;
        self.at = end;
        let mut a = [0u8; 8];
        a.copy_from_slice(w);
        Ok(u64::from_le_bytes(a))
    }
    fn usize(&mut self) -> Result<usize, ShmError> {
        usize::try_from(self.next()?).map_err(|_| ShmError::Malformed("layout value too large".into()))
    }
    fn count(&mut self) -> Result<usize, ShmError> {
        let n = self.next()?;
        if n > MAX_ITEMS {
            return Err(ShmError::Malformed(format!("layout count {n} too large")));
        }
        usize::try_from(n).map_err(|_| ShmError::Malformed("layout count".into()))
    }
}

/// The types of the children of an array of type `t`, in the order Arrow keeps them.
#[must_use]
pub fn child_types(t: &DataType) -> Vec<DataType> {
    match t {
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => vec![f.data_type().clone()],
        DataType::Struct(fields) => fields.iter().map(|f| f.data_type().clone()).collect(),
        DataType::Union(fields, _) => fields.iter().map(|(_, f)| f.data_type().clone()).collect(),
        DataType::Dictionary(_, v) => vec![(**v).clone()],
        DataType::RunEndEncoded(r, v) => vec![r.data_type().clone(), v.data_type().clone()],
        _ => Vec::new(),
    }
}

fn decode_node(
    t: &DataType,
    w: &mut Words<'_>,
    view: &MessageView<'_>,
    buffer: &mut impl FnMut(usize, usize) -> Buffer,
    depth: usize,
) -> Result<ArrayData, ShmError> {
    if depth > MAX_DEPTH {
        return Err(ShmError::Malformed("array layout nested too deep".into()));
    }
    let mut range = |start: usize, len: usize| -> Result<Buffer, ShmError> {
        if !view.in_data(start, len) {
            return Err(ShmError::Malformed(format!(
                "buffer at {start}+{len} outside the {} data bytes or misaligned",
                view.data_len
            )));
        }
        Ok(buffer(view.data_offset + start, len))
    };
    let len = w.usize()?;
    let offset = w.usize()?;
    let _null_count = w.usize()?;
    let nulls = match w.next()? {
        0 => None,
        1 => {
            let (at, bytes, bit_offset, bit_len) = (w.usize()?, w.usize()?, w.usize()?, w.usize()?);
            if bit_offset.checked_add(bit_len).is_none_or(|e| e.div_ceil(8) > bytes) {
                return Err(ShmError::Malformed("validity bitmap shorter than its bits".into()));
            }
            Some(NullBuffer::new(BooleanBuffer::new(range(at, bytes)?, bit_offset, bit_len)))
        }
        _ => return Err(ShmError::Malformed("bad validity flag".into())),
    };
    let n_buffers = w.count()?;
    let mut buffers = Vec::with_capacity(n_buffers);
    for _ in 0..n_buffers {
        let (at, blen) = (w.usize()?, w.usize()?);
        buffers.push(range(at, blen)?);
    }
    let n_children = w.count()?;
    let types = child_types(t);
    if types.len() != n_children {
        return Err(ShmError::Malformed(format!("type {t} has {} children, message has {n_children}", types.len())));
    }
    let mut children = Vec::with_capacity(n_children);
    for ct in &types {
        children.push(decode_node(ct, w, view, buffer, depth + 1)?);
    }
    check_buffer_widths(t, &buffers)?;
    let primitive_ok = primitive_layout_ok(t, len, offset, nulls.as_ref(), &buffers, &children);
    let builder =
        ArrayData::builder(t.clone()).len(len).offset(offset).nulls(nulls).buffers(buffers).child_data(children);
    if primitive_ok {
        // SAFETY: `primitive_layout_ok` checked everything Arrow requires of a primitive array:
        // one aligned values buffer covering `offset + len` values, no children, and a validity
        // bitmap (if any) with exactly one bit per value.
        return Ok(unsafe { builder.build_unchecked() });
    }
    builder.build().map_err(|e| ShmError::Malformed(format!("array does not match its type {t}: {e}")))
}

/// Every fixed-width buffer holds whole, aligned values. Arrow's own validation assumes this
/// (it panics rather than erring on a ragged offsets buffer), so bytes from another process or
/// host are checked here first.
fn check_buffer_widths(t: &DataType, buffers: &[Buffer]) -> Result<(), ShmError> {
    let layout = arrow_data::layout(t);
    for (i, (spec, b)) in layout.buffers.iter().zip(buffers).enumerate() {
        if let arrow_data::BufferSpec::FixedWidth { byte_width, alignment } = spec
            && (b.len() % byte_width != 0 || b.as_ptr().align_offset(*alignment) != 0)
        {
            return Err(ShmError::Malformed(format!(
                "buffer {i} of a {t} array is {} bytes, not whole aligned {byte_width}-byte values",
                b.len()
            )));
        }
    }
    Ok(())
}

/// The common case (numbers, bytes) checked directly, sparing the generic validation that
/// dominates the cost of receiving a small message.
fn primitive_layout_ok(
    t: &DataType,
    len: usize,
    offset: usize,
    nulls: Option<&NullBuffer>,
    buffers: &[Buffer],
    children: &[ArrayData],
) -> bool {
    let Some(width) = t.primitive_width() else { return false };
    let [values] = buffers else { return false };
    children.is_empty() && holds_values(values, width, offset, len) && nulls.is_none_or(|n| n.len() == len)
}

/// Whether `values` is whole, aligned `width`-byte values, at least `offset + len` of them.
/// (`ScalarBuffer::new` panics on misaligned memory: a block's word is never taken for it.)
fn holds_values(values: &Buffer, width: usize, offset: usize, len: usize) -> bool {
    values.len().is_multiple_of(width)
        && values.as_ptr().align_offset(width) == 0
        && offset.checked_add(len).and_then(|n| n.checked_mul(width)).is_some_and(|n| n <= values.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, Float64Array, Int32Array, StringArray, StructArray, UInt8Array};

    /// Encodes `array` into a fresh buffer, then decodes it in place.
    fn roundtrip(array: &ArrayRef, corrupt: impl FnOnce(&mut Vec<u8>)) -> Result<ArrayRef, ShmError> {
        let data = array.to_data();
        let (frame, copies) = Frame::array(&data, encode_type(data.data_type(), None)?, b"{}".to_vec())?;
        let mut block = vec![0u8; frame.total_len() + ALIGN];
        // Place the message at a 64-byte aligned address, as a page-aligned block would.
        let shift = block.as_ptr().align_offset(ALIGN);
        let msg = &mut block[shift..shift + frame.total_len()];
        frame.write_head(msg, 42);
        let start = frame.data_offset();
        for (b, at) in &copies {
            msg[start + at..start + at + b.len()].copy_from_slice(b.as_slice());
        }
        let mut owned = msg.to_vec();
        corrupt(&mut owned);
        let owned = Buffer::from_vec(owned);
        let view = MessageView::parse(owned.as_slice(), owned.len())?;
        assert_eq!(view.stamp, 42);
        let (t, extension) = decode_type(view.type_json)?;
        assert_eq!(extension, None);
        let base = owned.clone();
        // The direct route for flat numbers and the generic one agree, in what they build and
        // in what they refuse.
        let direct = view.array_ref(&t, |offset, len| base.slice_with_length(offset, len));
        let generic = view.array(&t, |offset, len| base.slice_with_length(offset, len)).map(make_array);
        match (&direct, &generic) {
            (Ok(a), Ok(b)) => assert_eq!(a.to_data(), b.to_data()),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            _ => panic!("direct {direct:?}, generic {generic:?}"),
        }
        direct
    }

    #[test]
    fn flat_numbers_round_trip_with_their_offset() {
        let floats: ArrayRef = Arc::new(Float64Array::from(vec![0.5, 1.5, 2.5, 3.5]).slice(1, 2));
        let bytes: ArrayRef = Arc::new(UInt8Array::from(vec![1u8, 2, 3, 4, 5, 6, 7, 8, 9]));
        for array in [floats, bytes] {
            let back = roundtrip(&array, |_| {}).expect("decodes");
            assert_eq!(back.to_data(), array.to_data());
        }
    }

    #[test]
    fn primitive_with_nulls_and_offset_round_trips() {
        let array: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None, Some(3), Some(4), None]).slice(1, 3));
        let back = roundtrip(&array, |_| {}).expect("decodes");
        assert_eq!(back.to_data(), array.to_data());
    }

    #[test]
    fn nested_arrays_round_trip() {
        let strings: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), None, Some("ccc")]));
        let ints: ArrayRef = Arc::new(Int32Array::from(vec![7, 8, 9]));
        let array: ArrayRef = Arc::new(StructArray::try_from(vec![("s", strings), ("i", ints)]).expect("struct"));
        let back = roundtrip(&array, |_| {}).expect("decodes");
        assert_eq!(back.to_data(), array.to_data());
    }

    #[test]
    fn layouts_pointing_outside_the_message_are_refused() {
        let array: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3]));
        // Layout words: len, offset, null_count, has_nulls, n_buffers, start, len, n_children.
        // Grow the array length past its values buffer.
        let err = roundtrip(&array, |m| {
            let at = HEADER_LEN + usize::from_le_bytes([m[16], m[17], m[18], m[19], 0, 0, 0, 0]);
            m[at..at + 8].copy_from_slice(&1000u64.to_le_bytes());
        })
        .expect_err("a length beyond the buffer must be refused");
        assert!(err.to_string().contains("does not match its type"), "{err}");
        // Point the values buffer past the end of the data.
        let err = roundtrip(&array, |m| {
            let at = HEADER_LEN + usize::from_le_bytes([m[16], m[17], m[18], m[19], 0, 0, 0, 0]) + 5 * 8;
            m[at..at + 8].copy_from_slice(&(1u64 << 20).to_le_bytes());
        })
        .expect_err("a buffer outside the message must be refused");
        assert!(err.to_string().contains("outside"), "{err}");
        // A bad magic number is not a message at all.
        let err = roundtrip(&array, |m| m[0] ^= 0xff).expect_err("bad magic");
        assert!(err.to_string().contains("magic"), "{err}");
    }

    #[test]
    fn a_ragged_offsets_buffer_is_an_error_not_a_panic() {
        // Found by tests/fuzz_message.rs: Arrow's validation asserts on such a buffer.
        let array: ArrayRef = Arc::new(StringArray::from(vec!["a", "bc", "def"]));
        let err = roundtrip(&array, |m| {
            let type_len = u32::from_le_bytes([m[16], m[17], m[18], m[19]]) as usize;
            // Layout words: len, offset, null count, has nulls, buffer count, then (at, len) of
            // the offsets buffer: its length is word 6.
            let word = HEADER_LEN + type_len + 6 * 8;
            let len = u64::from_le_bytes(m[word..word + 8].try_into().expect("a word"));
            m[word..word + 8].copy_from_slice(&(len - 1).to_le_bytes());
        })
        .expect_err("ragged offsets");
        assert!(err.to_string().contains("not whole aligned 4-byte values"), "{err}");
    }

    #[test]
    fn a_plain_type_travels_as_serde_writes_it_and_an_extension_beside_its_storage() {
        assert_eq!(encode_type(&DataType::UInt8, None).ok(), Some(b"\"UInt8\"".to_vec()));
        let tensor = Extension::fixed_shape_tensor(&[480, 640, 3]);
        assert_eq!((tensor.name.as_str(), tensor.metadata.as_str()), (FIXED_SHAPE_TENSOR, r#"{"shape":[480,640,3]}"#));
        assert_eq!(tensor.tensor_shape(), Some(vec![480, 640, 3]));
        let storage = DataType::FixedSizeList(Arc::new(arrow_schema::Field::new("item", DataType::UInt8, true)), 6);
        for (t, extension) in [(storage.clone(), Some(tensor)), (storage, None), (DataType::Float64, None)] {
            let json = encode_type(&t, extension.as_ref()).expect("encodes");
            assert_eq!(decode_type(&json).expect("decodes"), (t, extension));
        }
        assert!(decode_type(br#"{"extension": {"name": "x"}, "storage": "UInt8"}"#).is_err());
    }

    #[test]
    fn a_tensor_frame_is_a_fixed_size_list_of_one_around_its_values() {
        let values: Vec<u8> = (0..24).collect();
        let storage = DataType::FixedSizeList(Arc::new(arrow_schema::Field::new("item", DataType::UInt8, true)), 24);
        let frame = Frame::tensor(encode_type(&storage, None).expect("type"), 24, 24, Vec::new());
        let mut message = arrow_buffer::MutableBuffer::from_len_zeroed(frame.total_len());
        frame.write_head(message.as_slice_mut(), 7);
        let start = frame.data_offset();
        message.as_slice_mut()[start..].copy_from_slice(&values);
        let message: Buffer = message.into();
        let view = MessageView::parse(message.as_slice(), message.len()).expect("parses");
        let array = view.array_ref(&storage, |offset, len| message.slice_with_length(offset, len)).expect("decodes");
        let list = array.as_any().downcast_ref::<arrow_array::FixedSizeListArray>().expect("a fixed-size list");
        assert_eq!((list.len(), list.null_count()), (1, 0));
        let inner = list.value(0);
        let inner = inner.as_any().downcast_ref::<UInt8Array>().expect("of bytes");
        assert_eq!(inner.values().as_ref(), values.as_slice());
    }
}

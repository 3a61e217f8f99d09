//! ROS 2's wire format: CDR (XCDR1, the encapsulation header first) to and from the Arrow
//! value of a message type, exactly when a message leaves nerve or comes in from ROS 2.
//!
//! Alignment counts from the end of the 4-byte header; padding is written as zeros (ROS 2's
//! own writer leaves whatever its buffer held there, so padding is never compared).

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, make_array};
use arrow_buffer::{BooleanBuffer, Buffer, MutableBuffer, ToByteSlice};
use arrow_data::ArrayData;
use arrow_schema::DataType;

use crate::arrow::{arrow_type, primitive};
use crate::definition::{Array as Count, BaseType, Primitive};
use crate::name::TypeName;
use crate::registry::{Registry, TypesError};

/// The encapsulation header of little-endian plain CDR, which ROS 2 writes.
const HEADER_LE: [u8; 4] = [0x00, 0x01, 0x00, 0x00];
/// Big-endian plain CDR: read, never written.
const HEADER_BE: [u8; 4] = [0x00, 0x00, 0x00, 0x00];

/// What is wrong with a value to encode or with bytes to decode.
#[derive(Debug, thiserror::Error)]
pub enum CdrError {
    /// The type cannot be resolved.
    #[error(transparent)]
    Type(#[from] TypesError),
    /// A field's value (or bytes) is not what its type requires.
    #[error("{type_name}: field `{field}`: {what}")]
    Field {
        /// The message type.
        type_name: String,
        /// The path of the field (`header.frame_id`, `points[3].x`).
        field: String,
        /// What is wrong.
        what: String,
    },
    /// Not CDR at all.
    #[error("{type_name}: {what}")]
    Frame {
        /// The message type.
        type_name: String,
        /// What is wrong.
        what: String,
    },
}

/// The shape of a message type, as CDR walks it.
#[derive(Debug, Clone)]
enum Shape {
    Bool,
    Prim(Primitive),
    Str(Option<usize>),
    /// ROS 2's `wstring` as its default middleware (Fast DDS) writes it: a count of UTF-16
    /// code units, then each unit in four bytes.
    WStr(Option<usize>),
    Struct(Vec<(String, Shape)>),
    Seq(Box<Shape>, Option<usize>),
    Fixed(Box<Shape>, usize),
}

fn shape_of(registry: &Registry, name: &TypeName) -> Result<Shape, TypesError> {
    let message = registry.message(name)?;
    let mut fields = Vec::with_capacity(message.fields.len());
    for f in &message.fields {
        let element = match &f.ty.base {
            BaseType::Primitive(Primitive::Bool) => Shape::Bool,
            BaseType::Primitive(p) => Shape::Prim(*p),
            BaseType::String(bound) => Shape::Str(*bound),
            BaseType::WString(bound) => Shape::WStr(*bound),
            BaseType::Message(nested) => shape_of(registry, nested)?,
        };
        fields.push((
            f.name.clone(),
            match f.ty.array {
                Count::Single => element,
                Count::Fixed(n) => Shape::Fixed(Box::new(element), n),
                Count::Bounded(n) => Shape::Seq(Box::new(element), Some(n)),
                Count::Unbounded => Shape::Seq(Box::new(element), None),
            },
        ));
    }
    Ok(Shape::Struct(fields))
}

/// A compiled message type: encodes and decodes its values.
#[derive(Debug, Clone)]
pub struct Codec {
    name: String,
    shape: Shape,
    data_type: DataType,
}

impl Codec {
    /// The codec of the message `name`.
    ///
    /// # Errors
    /// The type cannot be resolved (see [`Registry::resolve`]).
    pub fn new(registry: &Registry, name: &TypeName) -> Result<Self, TypesError> {
        registry.resolve(name)?;
        Ok(Self { name: name.to_string(), shape: shape_of(registry, name)?, data_type: arrow_type(registry, name)? })
    }

    /// The Arrow type of the values this codec reads and writes.
    #[must_use]
    pub fn data_type(&self) -> &DataType {
        &self.data_type
    }

    /// Row `row` of `value` (an array of this type) as CDR, header first.
    ///
    /// # Errors
    /// [`CdrError::Field`] naming the first field whose value does not fit its type (a wrong
    /// Arrow type, a null, a sequence or string over its bound).
    pub fn encode(&self, value: &dyn Array, row: usize) -> Result<Vec<u8>, CdrError> {
        if row >= value.len() {
            return Err(CdrError::Frame {
                type_name: self.name.clone(),
                what: format!("row {row} of a value of {} rows", value.len()),
            });
        }
        let mut w = Writer { buf: HEADER_LE.to_vec(), name: &self.name, path: Vec::new() };
        w.value(&self.shape, value, row)?;
        Ok(w.buf)
    }

    /// A one-row array of this type from CDR bytes.
    ///
    /// # Errors
    /// [`CdrError`] naming where the bytes stop making sense: a header that is not plain CDR, a
    /// length past the end, a string that is not UTF-8 or not terminated.
    pub fn decode(&self, bytes: &[u8]) -> Result<ArrayRef, CdrError> {
        let frame = |what: String| CdrError::Frame { type_name: self.name.clone(), what };
        let header = bytes.get(..4).ok_or_else(|| frame(format!("{} bytes, fewer than a CDR header", bytes.len())))?;
        let big_endian = match header {
            h if h[..2] == HEADER_LE[..2] => false,
            h if h[..2] == HEADER_BE[..2] => true,
            h => return Err(frame(format!("header {h:02x?} is not plain CDR (XCDR1)"))),
        };
        self.decode_body(&bytes[4..], big_endian)
    }

    /// A one-row array of this type from the CDR bytes that follow the encapsulation header
    /// (a DDS sample's payload, whose header the middleware has already read).
    ///
    /// # Errors
    /// As [`Codec::decode`], but for the header.
    pub fn decode_body(&self, body: &[u8], big_endian: bool) -> Result<ArrayRef, CdrError> {
        let mut r = Reader { bytes: body, pos: 0, big_endian, name: &self.name, path: Vec::new() };
        let mut column = Column::new(&self.shape);
        r.value(&self.shape, &mut column)?;
        let data = column.finish(&self.data_type).map_err(|e| CdrError::Frame {
            type_name: self.name.clone(),
            what: format!("cannot build the Arrow value: {e}"),
        })?;
        Ok(make_array(data))
    }
}

struct Writer<'a> {
    buf: Vec<u8>,
    name: &'a str,
    path: Vec<String>,
}

impl Writer<'_> {
    fn fail(&self, what: impl Into<String>) -> CdrError {
        CdrError::Field { type_name: self.name.to_owned(), field: self.path.concat(), what: what.into() }
    }

    fn align(&mut self, n: usize) {
        while !(self.buf.len() - 4).is_multiple_of(n) {
            self.buf.push(0);
        }
    }

    fn value(&mut self, shape: &Shape, array: &dyn Array, i: usize) -> Result<(), CdrError> {
        if array.is_null(i) {
            return Err(self.fail("is null; every field of a message has a value"));
        }
        match shape {
            Shape::Bool => {
                let a = array.as_boolean_opt().ok_or_else(|| self.wrong(array, "Boolean"))?;
                self.buf.push(u8::from(a.value(i)));
            }
            Shape::Prim(p) => self.primitives(*p, array, i, 1)?,
            Shape::Str(bound) => {
                let s = array.as_string_opt::<i32>().ok_or_else(|| self.wrong(array, "Utf8"))?.value(i);
                if bound.is_some_and(|b| s.chars().count() > b) {
                    return Err(self.fail(format!("a string of {} characters, over its bound {bound:?}", s.len())));
                }
                self.align(4);
                self.buf.extend_from_slice(&u32_len(s.len() + 1).to_le_bytes());
                self.buf.extend_from_slice(s.as_bytes());
                self.buf.push(0);
            }
            Shape::WStr(bound) => {
                let s = array.as_string_opt::<i32>().ok_or_else(|| self.wrong(array, "Utf8"))?.value(i);
                let units: Vec<u16> = s.encode_utf16().collect();
                if bound.is_some_and(|b| units.len() > b) {
                    return Err(self.fail(format!(
                        "a wstring of {} UTF-16 units, over its bound {}",
                        units.len(),
                        bound.unwrap_or(0)
                    )));
                }
                self.align(4);
                self.buf.extend_from_slice(&u32_len(units.len()).to_le_bytes());
                for unit in units {
                    self.buf.extend_from_slice(&u32::from(unit).to_le_bytes());
                }
            }
            Shape::Struct(fields) => {
                let a = array.as_struct_opt().ok_or_else(|| self.wrong(array, "Struct"))?;
                if fields.is_empty() {
                    // ROS 2's placeholder member of an empty message.
                    self.buf.push(0);
                }
                for (j, (name, field)) in fields.iter().enumerate() {
                    let column = a.columns().get(j).ok_or_else(|| self.fail(format!("has no field `{name}`")))?;
                    self.path.push(if self.path.is_empty() { name.clone() } else { format!(".{name}") });
                    self.value(field, column.as_ref(), i)?;
                    self.path.pop();
                }
            }
            Shape::Seq(element, bound) => {
                let a = array.as_list_opt::<i32>().ok_or_else(|| self.wrong(array, "List"))?;
                let offsets = a.value_offsets();
                let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
                if bound.is_some_and(|b| end - start > b) {
                    return Err(self.fail(format!("{} elements, over its bound {}", end - start, bound.unwrap_or(0))));
                }
                self.align(4);
                self.buf.extend_from_slice(&u32_len(end - start).to_le_bytes());
                self.elements(element, a.values().as_ref(), start, end)?;
            }
            Shape::Fixed(element, n) => {
                let a = array.as_fixed_size_list_opt().ok_or_else(|| self.wrong(array, "FixedSizeList"))?;
                if a.value_length() as usize != *n {
                    return Err(self.fail(format!("{} elements, not {n}", a.value_length())));
                }
                let start = a.value_offset_at(i);
                self.elements(element, a.values().as_ref(), start, start + n)?;
            }
        }
        Ok(())
    }

    fn elements(&mut self, element: &Shape, values: &dyn Array, start: usize, end: usize) -> Result<(), CdrError> {
        match element {
            // An image's pixels: one copy of the whole run of values.
            Shape::Prim(p) if values.null_count() == 0 => self.primitives(*p, values, start, end - start),
            _ => {
                for k in start..end {
                    self.path.push(format!("[{}]", k - start));
                    self.value(element, values, k)?;
                    self.path.pop();
                }
                Ok(())
            }
        }
    }

    /// `count` values of `p` from index `start`, aligned as their size requires.
    fn primitives(&mut self, p: Primitive, array: &dyn Array, start: usize, count: usize) -> Result<(), CdrError> {
        fn raw<T: ArrowPrimitiveType>(a: &dyn Array, start: usize, count: usize) -> Option<&[u8]> {
            a.as_primitive_opt::<T>().map(|a| a.values()[start..start + count].to_byte_slice())
        }
        let bytes = match p {
            Primitive::Byte | Primitive::Char | Primitive::UInt8 => raw::<UInt8Type>(array, start, count),
            Primitive::Int8 => raw::<Int8Type>(array, start, count),
            Primitive::Int16 => raw::<Int16Type>(array, start, count),
            Primitive::UInt16 => raw::<UInt16Type>(array, start, count),
            Primitive::Int32 => raw::<Int32Type>(array, start, count),
            Primitive::UInt32 => raw::<UInt32Type>(array, start, count),
            Primitive::Int64 => raw::<Int64Type>(array, start, count),
            Primitive::UInt64 => raw::<UInt64Type>(array, start, count),
            Primitive::Float32 => raw::<Float32Type>(array, start, count),
            Primitive::Float64 => raw::<Float64Type>(array, start, count),
            Primitive::Bool => None,
        };
        let Some(bytes) = bytes else {
            return Err(self.wrong(array, &primitive(p).to_string()));
        };
        if count > 0 {
            self.align(size_of(p));
        }
        // Arrow's buffers are little-endian on every platform nerve runs on, as is the CDR
        // nerve writes.
        self.buf.extend_from_slice(bytes);
        Ok(())
    }

    fn wrong(&self, array: &dyn Array, expected: &str) -> CdrError {
        self.fail(format!("is {}, not {expected}", array.data_type()))
    }
}

fn u32_len(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn size_of(p: Primitive) -> usize {
    match p {
        Primitive::Bool | Primitive::Byte | Primitive::Char | Primitive::Int8 | Primitive::UInt8 => 1,
        Primitive::Int16 | Primitive::UInt16 => 2,
        Primitive::Int32 | Primitive::UInt32 | Primitive::Float32 => 4,
        Primitive::Int64 | Primitive::UInt64 | Primitive::Float64 => 8,
    }
}

/// Values read so far for one field, turned into an Arrow array at the end.
enum Column {
    Bool(Vec<bool>),
    /// Arrow's own allocation: aligned for any primitive type.
    Prim(MutableBuffer),
    Str {
        offsets: Vec<i32>,
        data: Vec<u8>,
    },
    Struct {
        len: usize,
        fields: Vec<Column>,
    },
    List {
        offsets: Vec<i32>,
        values: Box<Column>,
    },
    Fixed {
        len: usize,
        values: Box<Column>,
    },
}

impl Column {
    fn new(shape: &Shape) -> Self {
        match shape {
            Shape::Bool => Self::Bool(Vec::new()),
            Shape::Prim(_) => Self::Prim(MutableBuffer::new(0)),
            Shape::Str(_) | Shape::WStr(_) => Self::Str { offsets: vec![0], data: Vec::new() },
            Shape::Struct(fields) => {
                Self::Struct { len: 0, fields: fields.iter().map(|(_, s)| Self::new(s)).collect() }
            }
            Shape::Seq(element, _) => Self::List { offsets: vec![0], values: Box::new(Self::new(element)) },
            Shape::Fixed(element, _) => Self::Fixed { len: 0, values: Box::new(Self::new(element)) },
        }
    }

    fn finish(self, ty: &DataType) -> Result<ArrayData, arrow_schema::ArrowError> {
        let builder = match (self, ty) {
            (Self::Bool(values), _) => ArrayData::builder(ty.clone())
                .len(values.len())
                .add_buffer(BooleanBuffer::from_iter(values.iter().copied()).into_inner()),
            (Self::Prim(bytes), _) => {
                let width = ty.primitive_width().unwrap_or(1);
                ArrayData::builder(ty.clone()).len(bytes.len() / width).add_buffer(bytes.into())
            }
            (Self::Str { offsets, data }, _) => ArrayData::builder(ty.clone())
                .len(offsets.len() - 1)
                .add_buffer(Buffer::from_vec(offsets))
                .add_buffer(Buffer::from_vec(data)),
            (Self::Struct { len, fields }, DataType::Struct(types)) => {
                let children = fields
                    .into_iter()
                    .zip(types.iter())
                    .map(|(c, f)| c.finish(f.data_type()))
                    .collect::<Result<_, _>>()?;
                ArrayData::builder(ty.clone()).len(len).child_data(children)
            }
            (Self::List { offsets, values }, DataType::List(item)) => ArrayData::builder(ty.clone())
                .len(offsets.len() - 1)
                .add_buffer(Buffer::from_vec(offsets))
                .add_child_data(values.finish(item.data_type())?),
            (Self::Fixed { len, values }, DataType::FixedSizeList(item, _)) => {
                ArrayData::builder(ty.clone()).len(len).add_child_data(values.finish(item.data_type())?)
            }
            (_, other) => {
                return Err(arrow_schema::ArrowError::SchemaError(format!("no column of type {other}")));
            }
        };
        // `build` checks every length and offset against the type.
        builder.build()
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    big_endian: bool,
    name: &'a str,
    path: Vec<String>,
}

impl<'a> Reader<'a> {
    fn fail(&self, what: impl Into<String>) -> CdrError {
        CdrError::Field { type_name: self.name.to_owned(), field: self.path.concat(), what: what.into() }
    }

    fn align(&mut self, n: usize) {
        self.pos += (n - self.pos % n) % n;
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], CdrError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(self.fail(format!(
                "needs {n} bytes at offset {}, past the end of the {} bytes",
                self.pos,
                self.bytes.len()
            )));
        };
        let bytes: &'a [u8] = self.bytes;
        let slice = &bytes[self.pos..end];
        self.pos = end;
        Ok(slice)
    }

    fn u32(&mut self) -> Result<usize, CdrError> {
        self.align(4);
        let big_endian = self.big_endian;
        let b: [u8; 4] = self.take(4)?.try_into().unwrap_or_default();
        Ok((if big_endian { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) }) as usize)
    }

    /// A count read from the bytes, checked against what is left: each element takes at least
    /// one byte, so a forged count cannot make the reader allocate more than the input's size.
    fn count(&mut self) -> Result<usize, CdrError> {
        let n = self.u32()?;
        let left = self.bytes.len() - self.pos.min(self.bytes.len());
        if n > left {
            return Err(self.fail(format!("a count of {n}, more than the {left} bytes left")));
        }
        Ok(n)
    }

    fn value(&mut self, shape: &Shape, column: &mut Column) -> Result<(), CdrError> {
        match (shape, column) {
            (Shape::Bool, Column::Bool(values)) => {
                let b = self.take(1)?[0];
                if b > 1 {
                    return Err(self.fail(format!("{b} is not a bool (0 or 1)")));
                }
                values.push(b == 1);
            }
            (Shape::Prim(p), Column::Prim(bytes)) => self.primitives(*p, 1, bytes)?,
            (Shape::Str(bound), Column::Str { offsets, data }) => {
                let n = self.count()?;
                let raw = self.take(n)?;
                // Some writers send an empty string as a bare zero length.
                let text = match raw.split_last() {
                    None => &[][..],
                    Some((0, text)) => text,
                    Some(_) => return Err(self.fail("a string without its terminating zero")),
                };
                let s = std::str::from_utf8(text).map_err(|e| self.fail(format!("a string that is not UTF-8: {e}")))?;
                if bound.is_some_and(|b| s.chars().count() > b) {
                    return Err(self.fail(format!("a string over its bound {}", bound.unwrap_or(0))));
                }
                data.extend_from_slice(text);
                offsets.push(i32::try_from(data.len()).map_err(|_| self.fail("strings over 2 GiB in all"))?);
            }
            (Shape::WStr(bound), Column::Str { offsets, data }) => {
                let n = self.count()?;
                let big_endian = self.big_endian;
                let raw = self.take(n.saturating_mul(4))?;
                let units = raw
                    .chunks_exact(4)
                    .map(|c| {
                        let b: [u8; 4] = c.try_into().unwrap_or_default();
                        let unit = if big_endian { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) };
                        u16::try_from(unit).map_err(|_| self.fail(format!("{unit:#x} is not a UTF-16 code unit")))
                    })
                    .collect::<Result<Vec<u16>, _>>()?;
                if bound.is_some_and(|b| units.len() > b) {
                    return Err(self.fail(format!("a wstring over its bound {}", bound.unwrap_or(0))));
                }
                let s =
                    String::from_utf16(&units).map_err(|e| self.fail(format!("a wstring that is not UTF-16: {e}")))?;
                data.extend_from_slice(s.as_bytes());
                offsets.push(i32::try_from(data.len()).map_err(|_| self.fail("strings over 2 GiB in all"))?);
            }
            (Shape::Struct(shapes), Column::Struct { len, fields }) => {
                if shapes.is_empty() {
                    self.take(1)?;
                }
                for ((name, s), c) in shapes.iter().zip(fields.iter_mut()) {
                    self.path.push(if self.path.is_empty() { name.clone() } else { format!(".{name}") });
                    self.value(s, c)?;
                    self.path.pop();
                }
                *len += 1;
            }
            (Shape::Seq(element, bound), Column::List { offsets, values }) => {
                let n = self.count()?;
                if bound.is_some_and(|b| n > b) {
                    return Err(self.fail(format!("{n} elements, over its bound {}", bound.unwrap_or(0))));
                }
                self.elements(element, n, values)?;
                let last = offsets.last().copied().unwrap_or(0);
                offsets.push(last + i32::try_from(n).map_err(|_| self.fail("a sequence over 2^31 elements"))?);
            }
            (Shape::Fixed(element, n), Column::Fixed { len, values }) => {
                self.elements(element, *n, values)?;
                *len += 1;
            }
            _ => return Err(self.fail("internal: shape and column disagree")),
        }
        Ok(())
    }

    fn elements(&mut self, element: &Shape, n: usize, values: &mut Column) -> Result<(), CdrError> {
        if let (Shape::Prim(p), Column::Prim(bytes)) = (element, &mut *values) {
            return self.primitives(*p, n, bytes);
        }
        for k in 0..n {
            self.path.push(format!("[{k}]"));
            self.value(element, values)?;
            self.path.pop();
        }
        Ok(())
    }

    fn primitives(&mut self, p: Primitive, n: usize, out: &mut MutableBuffer) -> Result<(), CdrError> {
        if n == 0 {
            return Ok(());
        }
        let size = size_of(p);
        self.align(size);
        let big_endian = self.big_endian;
        let raw = self.take(n * size)?;
        if big_endian && size > 1 {
            for chunk in raw.chunks_exact(size) {
                out.extend_from_slice(&chunk.iter().rev().copied().collect::<Vec<u8>>());
            }
        } else {
            out.extend_from_slice(raw);
        }
        Ok(())
    }
}

/// A one-row value of `name` from its CDR bytes; see [`Codec::decode`].
///
/// # Errors
/// As [`Codec::new`] and [`Codec::decode`].
pub fn from_cdr(registry: &Registry, name: &TypeName, bytes: &[u8]) -> Result<ArrayRef, CdrError> {
    Codec::new(registry, name)?.decode(bytes)
}

/// Row `row` of `value` as the CDR of `name`; see [`Codec::encode`].
///
/// # Errors
/// As [`Codec::new`] and [`Codec::encode`].
pub fn to_cdr(registry: &Registry, name: &TypeName, value: &dyn Array, row: usize) -> Result<Vec<u8>, CdrError> {
    Codec::new(registry, name)?.encode(value, row)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow_array::StructArray;

    fn codec(name: &str) -> Codec {
        let registry = Registry::with_folders(Vec::new());
        let name = TypeName::parse(name).unwrap_or_else(|e| panic!("{e}"));
        Codec::new(&registry, &name).unwrap_or_else(|e| panic!("{e}"))
    }

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap_or_default()).collect()
    }

    /// Bytes `rclpy.serialization.serialize_message` wrote (ROS 2 Kilted, Fast DDS), with the
    /// padding — which ROS 2 leaves uninitialised — set to zero and the bytes ROS 2 leaves past
    /// the message's end cut off.
    const STRING_HELLO: &str = "00010000 06000000 68656c6c 6f00";
    const IMAGE: &str = "00010000 00000000 00000000 01000000 00000000 01000000 02000000 05000000 72676238 \
                         00 00 0000 06000000 06000000 000102030405";
    const JOINT_STATE: &str = "00010000 00000000 00000000 02000000 78000000 02000000 02000000 61000000 \
                               03000000 62630000 02000000 00000000 0000e03f 00000000 000000c0 00000000 \
                               01000000 00000000 00000840";
    /// As written, garbage padding and trailing bytes included.
    const JOINT_STATE_RAW: &str = "00010000000000000000000002000000780015ba020000000200000061000000030000006263000002000000\
                                   000000000000e03f00000000000000c000000000010000000000000000000840fe7e0000e83e15ba";

    #[test]
    fn decodes_what_ros_2_wrote_and_writes_it_back() -> Result<(), CdrError> {
        for (name, golden) in [("std_msgs/String", STRING_HELLO), ("sensor_msgs/Image", IMAGE)] {
            let c = codec(name);
            let value = c.decode(&hex(golden))?;
            assert_eq!(c.encode(value.as_ref(), 0)?, hex(golden), "{name}");
        }
        let joints = codec("sensor_msgs/JointState");
        let value = joints.decode(&hex(JOINT_STATE_RAW))?;
        assert_eq!(joints.encode(value.as_ref(), 0)?, hex(JOINT_STATE));
        let row = value.as_struct();
        let names = row.column_by_name("name").map(|c| c.as_list::<i32>().value(0));
        assert_eq!(
            names.as_ref().map(|n| n.as_string::<i32>().iter().flatten().collect::<Vec<_>>()),
            Some(vec!["a", "bc"])
        );
        let position = row.column_by_name("position").map(|c| c.as_list::<i32>().value(0));
        assert_eq!(position.as_ref().map(|p| p.as_primitive::<Float64Type>().values().to_vec()), Some(vec![0.5, -2.0]));
        Ok(())
    }

    #[test]
    fn a_value_of_the_wrong_shape_or_truncated_bytes_are_named() {
        let image = codec("sensor_msgs/Image");
        let golden = hex(IMAGE);
        let e = image.decode(&golden[..golden.len() - 3]).err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(e, "sensor_msgs/msg/Image: field `data`: a count of 6, more than the 3 bytes left");
        let mut forged = golden.clone();
        forged[4 + 8..4 + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        let e = image.decode(&forged).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("field `header.frame_id`: a count of 4294967295, more than"), "{e}");
        let e = image.decode(&[1, 2, 3, 4, 5]).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("is not plain CDR"), "{e}");
        let string = codec("std_msgs/String");
        let wrong = StructArray::from(vec![(
            Arc::new(arrow_schema::Field::new("data", DataType::Int32, false)),
            Arc::new(arrow_array::Int32Array::from(vec![1])) as ArrayRef,
        )]);
        let e = string.encode(&wrong, 0).err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(e, "std_msgs/msg/String: field `data`: is Int32, not Utf8");
    }

    proptest::proptest! {
        /// Bytes from outside the process: any input gives a value or an error, never a panic.
        #[test]
        fn decoding_any_bytes_never_panics(body in proptest::collection::vec(proptest::num::u8::ANY, 0..256)) {
            for name in ["sensor_msgs/Image", "sensor_msgs/JointState", "nav_msgs/Odometry", "std_msgs/Empty"] {
                let mut bytes = HEADER_LE.to_vec();
                bytes.extend_from_slice(&body);
                if let Ok(value) = codec(name).decode(&bytes) {
                    proptest::prop_assert_eq!(value.len(), 1);
                }
            }
        }
    }
}

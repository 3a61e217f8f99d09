//! How a Rust value becomes a column of a message's Arrow struct, and is read back from one.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowPrimitiveType, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, FixedSizeListArray, ListArray, PrimitiveArray, StringArray, StructArray,
};
use arrow_buffer::{ArrowNativeType, OffsetBuffer};
use arrow_schema::{ArrowError, DataType, Field, Fields};

use crate::seq::Seq;

/// Why a value is not the message asked for, or cannot be made into one.
#[derive(Debug, thiserror::Error)]
pub enum MessageError {
    /// The Arrow value has another type than the message's.
    #[error("a {message} is a {expected}, but the value given is a {actual}")]
    Type {
        /// The message type (`sensor_msgs/msg/Image`).
        message: &'static str,
        /// Its Arrow type.
        expected: DataType,
        /// The value's.
        actual: DataType,
    },
    /// One message was asked for, but the value holds another number of rows.
    #[error("the {message} value holds {rows} messages where one was expected (read them with `from_arrow_rows`)")]
    Rows {
        /// The message type.
        message: &'static str,
        /// How many the value holds.
        rows: usize,
    },
    /// The value has the right type, but its buffers disagree with each other (a list's offsets
    /// beyond its values, say): it was not built by Arrow's own checks.
    #[error("a malformed Arrow value: {0}")]
    Malformed(String),
    /// Arrow refused to build the value (a sequence of more than 2³¹ elements, say).
    #[error("cannot build the Arrow value: {0}")]
    Arrow(#[from] ArrowError),
}

/// A Rust type that is one column of a message's Arrow struct: a number, a string, a message, or
/// an array or sequence of them. Generated messages implement it; so do the field types below.
pub trait Column: Sized {
    /// The Arrow type of one value.
    fn data_type() -> DataType;

    /// An Arrow array of `values`, one row each.
    ///
    /// # Errors
    /// [`MessageError::Arrow`] when Arrow cannot hold them (over 2³¹ elements in one list).
    fn column(values: &[&Self]) -> Result<ArrayRef, MessageError>;

    /// Row `row` of `array`, whose layout is that of [`Column::data_type`] (checked by the caller).
    ///
    /// # Errors
    /// [`MessageError::Malformed`] when the array's buffers disagree with its type or `row`.
    fn read(array: &dyn Array, row: usize) -> Result<Self, MessageError>;
}

/// A ROS 2 message type as a Rust struct (generated: see the crate's documentation).
pub trait Message: Column + Default + Clone + PartialEq + fmt::Debug {
    /// Its full ROS 2 name, `sensor_msgs/msg/Image`.
    const TYPE_NAME: &'static str;

    /// The Arrow value of this one message (a struct array of one row): what a node sends.
    ///
    /// # Errors
    /// As [`Column::column`].
    fn to_arrow(&self) -> Result<ArrayRef, MessageError> {
        Self::column(&[self])
    }

    /// One Arrow value of several messages, a row each.
    ///
    /// # Errors
    /// As [`Column::column`].
    fn to_arrow_rows(messages: &[Self]) -> Result<ArrayRef, MessageError> {
        Self::column(&messages.iter().collect::<Vec<_>>())
    }

    /// The message a received value holds. Its number sequences ([`Seq`]) view the value's
    /// buffers: no copy.
    ///
    /// # Errors
    /// [`MessageError::Type`] for a value of another type (whatever the nullability of its
    /// fields), [`MessageError::Rows`] for a value of other than one row.
    fn from_arrow(array: &dyn Array) -> Result<Self, MessageError> {
        check::<Self>(array)?;
        if array.len() != 1 {
            return Err(MessageError::Rows { message: Self::TYPE_NAME, rows: array.len() });
        }
        Self::read(array, 0)
    }

    /// Every message of a value of several rows.
    ///
    /// # Errors
    /// [`MessageError::Type`] for a value of another type.
    fn from_arrow_rows(array: &dyn Array) -> Result<Vec<Self>, MessageError> {
        check::<Self>(array)?;
        (0..array.len()).map(|row| Self::read(array, row)).collect()
    }
}

fn check<M: Message>(array: &dyn Array) -> Result<(), MessageError> {
    let expected = M::data_type();
    if nerve_types::same_layout(&expected, array.data_type()) {
        Ok(())
    } else {
        Err(MessageError::Type { message: M::TYPE_NAME, expected, actual: array.data_type().clone() })
    }
}

fn malformed(what: &str, array: &dyn Array, row: usize) -> MessageError {
    MessageError::Malformed(format!("{what} at row {row} of a {} of {} rows", array.data_type(), array.len()))
}

fn cast<'a, A: ?Sized>(found: Option<&'a A>, array: &dyn Array, row: usize) -> Result<&'a A, MessageError> {
    let found = found.ok_or_else(|| malformed("another array type", array, row))?;
    if row < array.len() { Ok(found) } else { Err(malformed("no such row", array, row)) }
}

/// A number type of a message field, with the Arrow type its values are stored as.
pub trait Scalar: Column + ArrowNativeType {
    /// The Arrow type of these numbers.
    type Arrow: ArrowPrimitiveType<Native = Self>;
}

macro_rules! scalars {
    ($($rust:ty => $arrow:ty),* $(,)?) => {$(
        impl Scalar for $rust {
            type Arrow = $arrow;
        }

        impl Column for $rust {
            fn data_type() -> DataType {
                <$arrow as ArrowPrimitiveType>::DATA_TYPE
            }

            fn column(values: &[&Self]) -> Result<ArrayRef, MessageError> {
                Ok(Arc::new(PrimitiveArray::<$arrow>::from_iter_values(values.iter().map(|v| **v))))
            }

            fn read(array: &dyn Array, row: usize) -> Result<Self, MessageError> {
                Ok(cast(array.as_primitive_opt::<$arrow>(), array, row)?.value(row))
            }
        }
    )*};
}

scalars! {
    u8 => UInt8Type, i8 => Int8Type, u16 => UInt16Type, i16 => Int16Type, u32 => UInt32Type,
    i32 => Int32Type, u64 => UInt64Type, i64 => Int64Type, f32 => Float32Type, f64 => Float64Type,
}

impl Column for bool {
    fn data_type() -> DataType {
        DataType::Boolean
    }

    fn column(values: &[&Self]) -> Result<ArrayRef, MessageError> {
        Ok(Arc::new(values.iter().map(|v| Some(**v)).collect::<BooleanArray>()))
    }

    fn read(array: &dyn Array, row: usize) -> Result<Self, MessageError> {
        Ok(cast(array.as_boolean_opt(), array, row)?.value(row))
    }
}

impl Column for String {
    fn data_type() -> DataType {
        DataType::Utf8
    }

    fn column(values: &[&Self]) -> Result<ArrayRef, MessageError> {
        // Arrow's builder would panic past 2³¹ bytes of text.
        offsets(values.iter().map(|v| v.len()))?;
        Ok(Arc::new(StringArray::from_iter_values(values.iter())))
    }

    fn read(array: &dyn Array, row: usize) -> Result<Self, MessageError> {
        Ok(cast(array.as_string_opt::<i32>(), array, row)?.value(row).to_owned())
    }
}

fn item(data_type: DataType) -> Arc<Field> {
    Arc::new(Field::new("item", data_type, false))
}

fn offsets(lengths: impl Iterator<Item = usize>) -> Result<OffsetBuffer<i32>, MessageError> {
    let mut at = 0i32;
    let mut offsets = vec![0i32];
    for len in lengths {
        at = i32::try_from(len)
            .ok()
            .and_then(|len| at.checked_add(len))
            .ok_or_else(|| ArrowError::ComputeError("a list of over 2³¹ elements".into()))?;
        offsets.push(at);
    }
    Ok(OffsetBuffer::new(offsets.into()))
}

/// The range of row `row` of a list in its values.
fn span(list: &ListArray, row: usize) -> Result<Range<usize>, MessageError> {
    let bad = || malformed("list offsets beyond its values", list, row);
    let offsets = list.value_offsets();
    let start = usize::try_from(offsets[row]).map_err(|_| bad())?;
    let end = usize::try_from(offsets[row + 1]).map_err(|_| bad())?;
    if start <= end && end <= list.values().len() { Ok(start..end) } else { Err(bad()) }
}

impl<T: Column> Column for Vec<T> {
    fn data_type() -> DataType {
        DataType::List(item(T::data_type()))
    }

    fn column(values: &[&Self]) -> Result<ArrayRef, MessageError> {
        let offsets = offsets(values.iter().map(|v| v.len()))?;
        let items: Vec<&T> = values.iter().flat_map(|v| v.iter()).collect();
        Ok(Arc::new(ListArray::try_new(item(T::data_type()), offsets, T::column(&items)?, None)?))
    }

    fn read(array: &dyn Array, row: usize) -> Result<Self, MessageError> {
        let list = cast(array.as_list_opt::<i32>(), array, row)?;
        span(list, row)?.map(|i| T::read(list.values(), i)).collect()
    }
}

impl<T: Scalar> Column for Seq<T> {
    fn data_type() -> DataType {
        DataType::List(item(T::data_type()))
    }

    fn column(values: &[&Self]) -> Result<ArrayRef, MessageError> {
        let offsets = offsets(values.iter().map(|v| v.len()))?;
        // One message's sequence is sent from its own buffer; several are gathered into one.
        let items = match values {
            [one] => one.buffer().clone(),
            _ => values.iter().flat_map(|v| v.iter().copied()).collect(),
        };
        let items: ArrayRef = Arc::new(PrimitiveArray::<T::Arrow>::new(items, None));
        Ok(Arc::new(ListArray::try_new(item(T::data_type()), offsets, items, None)?))
    }

    fn read(array: &dyn Array, row: usize) -> Result<Self, MessageError> {
        let list = cast(array.as_list_opt::<i32>(), array, row)?;
        let span = span(list, row)?;
        let items =
            list.values().as_primitive_opt::<T::Arrow>().ok_or_else(|| malformed("another item type", array, row))?;
        Ok(Seq::from(items.values().slice(span.start, span.len())))
    }
}

impl<T: Column, const N: usize> Column for [T; N] {
    fn data_type() -> DataType {
        DataType::FixedSizeList(item(T::data_type()), fixed_len(N))
    }

    fn column(values: &[&Self]) -> Result<ArrayRef, MessageError> {
        let items: Vec<&T> = values.iter().flat_map(|v| v.iter()).collect();
        Ok(Arc::new(FixedSizeListArray::try_new(item(T::data_type()), fixed_len(N), T::column(&items)?, None)?))
    }

    fn read(array: &dyn Array, row: usize) -> Result<Self, MessageError> {
        let list = cast(array.as_fixed_size_list_opt(), array, row)?;
        if list.values().len() < (row + 1) * N {
            return Err(malformed("fewer values than the fixed size asks for", array, row));
        }
        let items = (row * N..(row + 1) * N).map(|i| T::read(list.values(), i)).collect::<Result<Vec<_>, _>>()?;
        items.try_into().map_err(|_| malformed("another number of values", array, row))
    }
}

fn fixed_len(n: usize) -> i32 {
    // Interface files bound fixed arrays far below this; saturating keeps the type honest.
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// The Arrow struct of a message's columns, one row per message (generated code calls it).
///
/// # Errors
/// As [`Column::column`].
pub fn struct_column(fields: Fields, columns: Vec<ArrayRef>, rows: usize) -> Result<ArrayRef, MessageError> {
    if fields.is_empty() {
        return Ok(Arc::new(StructArray::new_empty_fields(rows, None)));
    }
    Ok(Arc::new(StructArray::try_new(fields, columns, None)?))
}

/// The column of one field of `messages` (generated code calls it).
///
/// # Errors
/// As [`Column::column`].
pub fn column_of<M, T: Column>(messages: &[&M], field: impl Fn(&M) -> &T) -> Result<ArrayRef, MessageError> {
    T::column(&messages.iter().map(|m| field(m)).collect::<Vec<_>>())
}

/// The `count` columns of a message's struct array that has a row `row` (generated code calls
/// it).
///
/// # Errors
/// [`MessageError::Malformed`] for another array, a missing row or another number of columns.
pub fn struct_fields(array: &dyn Array, row: usize, count: usize) -> Result<&[ArrayRef], MessageError> {
    let columns = cast(array.as_struct_opt(), array, row)?.columns();
    if columns.len() == count { Ok(columns) } else { Err(malformed("another number of fields", array, row)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_sequence_is_sent_from_its_own_buffer() -> Result<(), MessageError> {
        let seq = Seq::from(vec![7u8; 1000]);
        let array = Seq::column(&[&seq])?;
        let back = Seq::<u8>::read(array.as_ref(), 0)?;
        assert_eq!(back.as_ptr(), seq.as_ptr());
        Ok(())
    }

    #[test]
    fn rows_of_nested_sequences_read_back() -> Result<(), MessageError> {
        let rows = [vec![[1.0f64, 2.0], [3.0, 4.0]], vec![], vec![[5.0, 6.0]]];
        let array = Vec::<[f64; 2]>::column(&rows.iter().collect::<Vec<_>>())?;
        for (i, row) in rows.iter().enumerate() {
            assert_eq!(&Vec::<[f64; 2]>::read(array.as_ref(), i)?, row);
        }
        let strings = [vec!["a".to_owned(), "bc".to_owned()]];
        let array = Vec::<String>::column(&[&strings[0]])?;
        assert_eq!(Vec::<String>::read(array.as_ref(), 0)?, strings[0]);
        Ok(())
    }

    #[test]
    fn a_missing_row_is_an_error_not_a_panic() -> Result<(), MessageError> {
        let array = u32::column(&[&1])?;
        assert!(matches!(u32::read(array.as_ref(), 1), Err(MessageError::Malformed(_))));
        assert!(matches!(String::read(array.as_ref(), 0), Err(MessageError::Malformed(_))));
        Ok(())
    }
}

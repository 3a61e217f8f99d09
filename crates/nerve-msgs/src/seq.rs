//! A sequence of numbers that shares its memory: a view of a received message's buffer, or
//! the vector it was built from.

use std::fmt;
use std::ops::Deref;

use arrow_buffer::{ArrowNativeType, ScalarBuffer};

/// A `T[]` field of numbers (an image's `data`, a point cloud's `data`, a joint state's
/// `position`). It reads as a slice; cloning it shares the memory. Built from a `Vec<T>` it owns
/// that vector (no copy); read from a received message it views the sender's shared memory.
#[derive(Clone, PartialEq)]
pub struct Seq<T: ArrowNativeType>(ScalarBuffer<T>);

impl<T: ArrowNativeType> Seq<T> {
    /// The elements as a slice.
    #[must_use]
    pub fn as_slice(&self) -> &[T] {
        &self.0
    }

    /// The Arrow buffer holding the elements.
    #[must_use]
    pub fn buffer(&self) -> &ScalarBuffer<T> {
        &self.0
    }

    /// The elements in a vector of their own (a copy unless this holds the only reference to
    /// memory it allocated itself).
    #[must_use]
    pub fn into_vec(self) -> Vec<T> {
        self.0.into_inner().into_vec().unwrap_or_else(|buffer| ScalarBuffer::<T>::from(buffer).to_vec())
    }
}

impl<T: ArrowNativeType> Default for Seq<T> {
    fn default() -> Self {
        Self(ScalarBuffer::from(Vec::new()))
    }
}

impl<T: ArrowNativeType> Deref for Seq<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T: ArrowNativeType> AsRef<[T]> for Seq<T> {
    fn as_ref(&self) -> &[T] {
        &self.0
    }
}

impl<T: ArrowNativeType> From<Vec<T>> for Seq<T> {
    fn from(values: Vec<T>) -> Self {
        Self(ScalarBuffer::from(values))
    }
}

impl<T: ArrowNativeType> From<&[T]> for Seq<T> {
    fn from(values: &[T]) -> Self {
        Self(ScalarBuffer::from(values.to_vec()))
    }
}

impl<T: ArrowNativeType, const N: usize> From<[T; N]> for Seq<T> {
    fn from(values: [T; N]) -> Self {
        Self(ScalarBuffer::from(Vec::from(values)))
    }
}

impl<T: ArrowNativeType> From<ScalarBuffer<T>> for Seq<T> {
    fn from(buffer: ScalarBuffer<T>) -> Self {
        Self(buffer)
    }
}

impl<T: ArrowNativeType> FromIterator<T> for Seq<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl<T: ArrowNativeType> fmt::Debug for Seq<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // An image's megabytes are no use in a log line.
        const SHOWN: usize = 16;
        let mut list = f.debug_list();
        list.entries(self.0.iter().take(SHOWN));
        if self.0.len() > SHOWN {
            list.entry(&format_args!("… {} in all", self.0.len()));
        }
        list.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seq_built_from_a_vec_keeps_its_memory() {
        let values = vec![1u16, 2, 3];
        let at = values.as_ptr();
        let seq = Seq::from(values);
        assert_eq!(seq.as_ptr(), at);
        assert_eq!(seq.clone().as_ptr(), at);
        assert_eq!(seq.into_vec(), [1, 2, 3]);
    }

    #[test]
    fn a_long_seq_prints_its_start_and_length() {
        let seq: Seq<u8> = (0..40).collect();
        assert_eq!(format!("{seq:?}"), "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, … 40 in all]");
    }
}

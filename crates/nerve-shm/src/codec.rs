//! Arrays into and out of blocks: the sending and receiving halves that every endpoint — a
//! dataflow output, a topic publisher — shares.

use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use arrow_array::ArrayRef;
use arrow_buffer::Buffer;
use arrow_data::ArrayData;
use arrow_schema::DataType;

use crate::channel::{FanOut, Published};
use crate::clock::monotonic_ns;
use crate::error::ShmError;
use crate::message::{Extension, Frame, MessageView, decode_type, encode_type};
use crate::pool::{BlockRef, Lease};

/// Sender-supplied key/value parameters of a message.
pub type Parameters = serde_json::Map<String, serde_json::Value>;

/// What comes with a message besides its data.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Metadata {
    /// Sender's `CLOCK_MONOTONIC` at send, in nanoseconds (comparable across processes of one
    /// host, e.g. with Python's `time.monotonic_ns()`).
    pub timestamp: u64,
    /// Sender's parameters.
    pub parameters: Parameters,
    /// The extension type the array stands for (an n-D array's fixed-shape tensor), if any.
    pub extension: Option<Arc<Extension>>,
}

/// A block lent to fill with one message in place, then sent with [`Outlet::send`].
///
/// Dropping it unsent gives the block back.
#[derive(Debug)]
pub struct Loan {
    frame: Frame,
    lease: Lease,
}

impl Loan {
    /// The bytes to fill.
    #[must_use]
    pub fn data_mut(&mut self) -> &mut [u8] {
        let (start, end) = (self.frame.data_offset(), self.frame.total_len());
        &mut self.lease.bytes_mut()[start..end]
    }

    /// Start of the bytes to fill; valid for [`Loan::len`] bytes while the loan lives.
    #[must_use]
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.data_mut().as_mut_ptr()
    }

    /// Bytes to fill.
    #[must_use]
    pub fn len(&self) -> usize {
        self.frame.total_len() - self.frame.data_offset()
    }

    /// Whether the loan holds no bytes.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A handle that keeps the loan's memory mapped even after it is sent (bindings hand out
    /// raw views whose lifetime they cannot bound).
    #[must_use]
    pub fn keep_mapped(&self) -> Arc<dyn std::any::Any + Send + Sync> {
        self.lease.mapping()
    }
}

/// A message encoded elsewhere, copied into a block (see [`Outlet::copy_encoded`]).
#[derive(Debug)]
pub struct EncodedCopy {
    lease: Lease,
    len: usize,
    stamp: u64,
}

/// The producer end of an output: turns arrays into messages in its pool's blocks.
#[derive(Debug)]
pub struct Outlet {
    fan_out: FanOut,
    last_type: Option<(DataType, Option<Extension>, Arc<[u8]>)>,
    max_message: usize,
}

impl Outlet {
    /// Sends through `fan_out`, refusing messages over `max_message` bytes.
    #[must_use]
    pub fn new(fan_out: FanOut, max_message: usize) -> Self {
        Self { fan_out, last_type: None, max_message }
    }

    /// The fan-out writer underneath (its readers and pool).
    pub fn fan_out_mut(&mut self) -> &mut FanOut {
        &mut self.fan_out
    }

    /// Whether `loan` was lent by this outlet (only then may [`Outlet::send`] take it).
    #[must_use]
    pub fn lent(&self, loan: &Loan) -> bool {
        self.fan_out.lent(&loan.lease)
    }

    fn type_json(&mut self, t: &DataType, extension: Option<&Extension>) -> Result<Arc<[u8]>, ShmError> {
        if let Some((cached, cached_extension, json)) = &self.last_type
            && cached == t
            && cached_extension.as_ref() == extension
        {
            return Ok(json.clone());
        }
        let json: Arc<[u8]> = encode_type(t, extension)?.into();
        self.last_type = Some((t.clone(), extension.cloned(), json.clone()));
        Ok(json)
    }

    fn lease(&mut self, frame: Frame) -> Result<Loan, ShmError> {
        let len = frame.total_len();
        if len > self.max_message {
            return Err(ShmError::TooLarge { len, limit: self.max_message });
        }
        let lease = self.fan_out.lease(len)?;
        Ok(Loan { frame, lease })
    }

    /// A loan already holding a copy of `data` (one copy, into shared memory), the storage of
    /// `extension` if one is given.
    ///
    /// # Errors
    /// A message over the limit, an array nerve cannot carry, or no block to be had.
    pub fn loan_array(
        &mut self,
        data: &ArrayData,
        extension: Option<&Extension>,
        parameters: &Parameters,
    ) -> Result<Loan, ShmError> {
        let type_json = self.type_json(data.data_type(), extension)?;
        let (frame, copies) = Frame::array(data, type_json, meta(parameters)?)?;
        let mut loan = self.lease(frame)?;
        loan.frame.write_data(loan.lease.bytes_mut(), &copies);
        Ok(loan)
    }

    /// A loan of `byte_len` bytes for `items` values of the primitive type `data_type`, to be
    /// filled in place.
    ///
    /// # Errors
    /// A message over the limit, or no block to be had.
    pub fn loan_primitive(
        &mut self,
        data_type: &DataType,
        items: usize,
        byte_len: usize,
        parameters: &Parameters,
    ) -> Result<Loan, ShmError> {
        let frame = Frame::primitive(self.type_json(data_type, None)?, items, byte_len, meta(parameters)?);
        self.lease(frame)
    }

    /// A loan of `byte_len` bytes for one row-major tensor of `shape` whose values are of the
    /// primitive type `value_type`, to be filled in place: sent as Arrow's fixed-shape tensor
    /// (see [`Extension::fixed_shape_tensor`]), so readers get the shape with the values.
    ///
    /// # Errors
    /// A message over the limit, or no block to be had.
    pub fn loan_tensor(
        &mut self,
        value_type: &DataType,
        shape: &[usize],
        byte_len: usize,
        parameters: &Parameters,
    ) -> Result<Loan, ShmError> {
        let (storage, items) = tensor_storage(value_type, shape)?;
        let extension = Extension::fixed_shape_tensor(shape);
        let frame = Frame::tensor(self.type_json(&storage, Some(&extension))?, items, byte_len, meta(parameters)?);
        self.lease(frame)
    }

    /// Stamps a filled loan and queues it to every reader (see [`FanOut::publish`]).
    pub fn send(&mut self, loan: Loan, stop: &AtomicBool) -> Published {
        self.send_with(loan, stop, |_| ())
    }

    /// Copies a message encoded elsewhere (by another outlet) into a block of this outlet, as
    /// is, for [`Outlet::send_copy`]: the sender's stamp and parameters are kept.
    ///
    /// # Errors
    /// A malformed or oversized message, or no block to be had.
    pub fn copy_encoded(&mut self, message: &[u8]) -> Result<EncodedCopy, ShmError> {
        self.copy_encoded_with(message.len(), |block| block.copy_from_slice(message))
    }

    /// Like [`Outlet::copy_encoded`] for a message of `len` bytes that `fill` writes (from
    /// the pieces it arrived in, say); it is checked in the block, after `fill`.
    ///
    /// # Errors
    /// A malformed or oversized message, or no block to be had.
    pub fn copy_encoded_with(&mut self, len: usize, fill: impl FnOnce(&mut [u8])) -> Result<EncodedCopy, ShmError> {
        if len > self.max_message {
            return Err(ShmError::TooLarge { len, limit: self.max_message });
        }
        let mut lease = self.fan_out.lease(len)?;
        let bytes = &mut lease.bytes_mut()[..len];
        fill(bytes);
        let stamp = MessageView::parse(bytes, len)?.stamp;
        Ok(EncodedCopy { lease, len, stamp })
    }

    /// Queues a copy made by [`Outlet::copy_encoded`] to every reader.
    pub fn send_copy(&mut self, copy: EncodedCopy, stop: &AtomicBool) -> Published {
        self.send_copy_with(copy, stop, |_| ())
    }

    /// Like [`Outlet::send_copy`], to the readers whose bit is in `edges` only (see
    /// [`FanOut::publish_to`]).
    pub fn send_copy_to(&mut self, copy: EncodedCopy, edges: u64, stop: &AtomicBool) -> Published {
        self.fan_out.publish_to(copy.lease, copy.len, copy.stamp, edges, stop)
    }

    /// Like [`Outlet::send_copy`], handing the message to `also` once every reader has it.
    pub fn send_copy_with(&mut self, copy: EncodedCopy, stop: &AtomicBool, also: impl FnOnce(&[u8])) -> Published {
        self.fan_out.publish_then(copy.lease, copy.len, copy.stamp, u64::MAX, stop, also)
    }

    /// Like [`Outlet::send`], handing the whole encoded message to `also` once every reader
    /// has it (to send it over a network, or copy it to a topic's subscribers, for instance):
    /// the readers here do not wait for that.
    pub fn send_with(&mut self, mut loan: Loan, stop: &AtomicBool, also: impl FnOnce(&[u8])) -> Published {
        let stamp = monotonic_ns();
        loan.frame.write_head(loan.lease.bytes_mut(), stamp);
        let total = loan.frame.total_len();
        self.fan_out.publish_then(loan.lease, total, stamp, u64::MAX, stop, also)
    }
}

/// The storage type of a row-major tensor of `shape` holding `value_type` values (a fixed-size
/// list of all of them, as [`Extension::fixed_shape_tensor`] stores one), and how many values
/// it holds.
///
/// # Errors
/// When the tensor holds more values than an Arrow list can.
pub fn tensor_storage(value_type: &DataType, shape: &[usize]) -> Result<(DataType, usize), ShmError> {
    let items = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
    let size = items.and_then(|n| i32::try_from(n).ok());
    let (Some(items), Some(size)) = (items, size) else {
        return Err(ShmError::Unsupported(format!("a tensor of shape {shape:?}: more than 2^31 values")));
    };
    let item = arrow_schema::Field::new("item", value_type.clone(), true);
    Ok((DataType::FixedSizeList(Arc::new(item), size), items))
}

/// Encodes `data` and `parameters` as one message in ordinary memory, stamped now: the form a
/// message takes where no shared memory is involved (a service request or reply, for instance).
///
/// # Errors
/// An array nerve cannot carry, or metadata that is not JSON.
pub fn encode(data: &ArrayData, parameters: &Parameters) -> Result<Vec<u8>, ShmError> {
    encode_stamped(data, None, parameters, monotonic_ns())
}

/// Encodes a message as it was received, `metadata` (its sender's stamp, parameters and
/// extension type) and `data`, in ordinary memory: the form a decoded message takes to travel
/// on as its sender sent it (to another host, say).
///
/// # Errors
/// As [`encode`].
pub fn encode_received(data: &ArrayRef, metadata: &Metadata) -> Result<Vec<u8>, ShmError> {
    encode_stamped(&data.to_data(), metadata.extension.as_deref(), &metadata.parameters, metadata.timestamp)
}

fn encode_stamped(
    data: &ArrayData,
    extension: Option<&Extension>,
    parameters: &Parameters,
    stamp: u64,
) -> Result<Vec<u8>, ShmError> {
    let (frame, copies) = Frame::array(data, encode_type(data.data_type(), extension)?, meta(parameters)?)?;
    let mut out = vec![0; frame.total_len()];
    frame.write_data(&mut out, &copies);
    frame.write_head(&mut out, stamp);
    Ok(out)
}

fn meta(parameters: &Parameters) -> Result<Vec<u8>, ShmError> {
    if parameters.is_empty() {
        return Ok(Vec::new());
    }
    serde_json::to_vec(parameters).map_err(|e| ShmError::Unsupported(format!("metadata: {e}")))
}

/// A copy of an encoded message in 64-byte aligned memory, ready for [`Decoder::decode_buffer`]
/// (Arrow buffers must be aligned; bytes off a network or a pipe need not be).
#[must_use]
pub fn aligned_copy(message: &[u8]) -> Buffer {
    let mut aligned = arrow_buffer::MutableBuffer::from_len_zeroed(message.len());
    aligned.as_slice_mut().copy_from_slice(message);
    aligned.into()
}

/// The consumer end of one input: rebuilds messages as arrays viewing their blocks.
#[derive(Debug, Default)]
pub struct Decoder {
    last_type: Option<(Vec<u8>, DataType, Option<Arc<Extension>>)>,
}

impl Decoder {
    /// Views the message in the first `len` bytes of `block`; the array keeps the block (and
    /// so the sender's memory) referenced until it is dropped.
    ///
    /// # Errors
    /// When the message is malformed.
    pub fn decode(&mut self, block: BlockRef, len: usize) -> Result<(Metadata, ArrayRef), ShmError> {
        let block = Arc::new(block);
        let base = block.bytes().as_ptr();
        self.decode_with(block.bytes(), len, |offset, len| {
            // SAFETY: `MessageView::array` only asks for ranges inside the message, which lies
            // inside the block; the buffer keeps the block (and its mapping) alive.
            unsafe {
                let ptr = NonNull::new_unchecked(base.add(offset).cast_mut());
                Buffer::from_custom_allocation(ptr, len, block.clone())
            }
        })
    }

    /// Views a whole message received as bytes (from the network); its arrays are slices of
    /// `message`, which should be 64-byte aligned (a `MutableBuffer` is).
    ///
    /// # Errors
    /// When the message is malformed.
    pub fn decode_buffer(&mut self, message: &Buffer) -> Result<(Metadata, ArrayRef), ShmError> {
        self.decode_with(message.as_slice(), message.len(), |offset, len| message.slice_with_length(offset, len))
    }

    fn decode_with(
        &mut self,
        bytes: &[u8],
        len: usize,
        buffer: impl FnMut(usize, usize) -> Buffer,
    ) -> Result<(Metadata, ArrayRef), ShmError> {
        let view = MessageView::parse(bytes, len)?;
        // Taken out and put back rather than cloned: a nested type is a tree of allocations.
        let last = match self.last_type.take() {
            Some(last) if last.0.as_slice() == view.type_json => last,
            _ => {
                let (data_type, extension) = decode_type(view.type_json)?;
                (view.type_json.to_vec(), data_type, extension.map(Arc::new))
            }
        };
        let (_, data_type, extension) = self.last_type.insert(last);
        let parameters = if view.meta.is_empty() {
            Parameters::new()
        } else {
            serde_json::from_slice(view.meta).map_err(|e| ShmError::Malformed(format!("metadata: {e}")))?
        };
        let data = view.array_ref(data_type, buffer)?;
        Ok((Metadata { timestamp: view.stamp, parameters, extension: extension.clone() }, data))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Array, ArrayRef, UInt16Array};
    use arrow_buffer::Buffer;

    use super::{Decoder, Parameters, encode, encode_received};

    #[test]
    fn a_received_message_encoded_again_keeps_its_stamp_parameters_and_data() {
        let data: ArrayRef = Arc::new(UInt16Array::from(vec![1, 2, 65535]));
        let mut parameters = Parameters::new();
        parameters.insert("frame".into(), "camera".into());
        let sent = encode(&data.to_data(), &parameters).expect("encoded");
        let mut decoder = Decoder::default();
        let (metadata, received) = decoder.decode_buffer(&Buffer::from_vec(sent)).expect("decoded");
        let again = encode_received(&received, &metadata).expect("encoded again");
        let (metadata_again, data_again) = decoder.decode_buffer(&Buffer::from_vec(again)).expect("decoded again");
        assert_eq!(metadata_again, metadata);
        assert_eq!(data_again.to_data(), data.to_data());
    }
}

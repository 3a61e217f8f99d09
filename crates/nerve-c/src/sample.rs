//! `nerve_sample`: a block of shared memory lent by a node's output or a publisher, filled in
//! place, then sent.

use std::ffi::{c_char, c_int};
use std::mem::MaybeUninit;

use nerve_node::{Sample, SendError};

use crate::args::{out, parameters, text};
use crate::error::{ApiError, NerveStatus, guard};
use crate::handles::{self, Kind};
use crate::node::NerveNode;

/// Bytes of shared memory lent by one output of a node or by a publisher (opaque): written in
/// place, then sent with `nerve_node_send_sample` or `nerve_publisher_send_sample`, so readers
/// see the very bytes written, never a copy.
///
/// Thread-safety: one thread at a time.
pub struct NerveSample {
    /// `None` only while a send is under way.
    sample: Option<Sample>,
}

/// Lends `len` bytes of shared memory for output `output`, to be sent as an Arrow `UInt8` array
/// with `parameters_json` (a JSON object's text, or NULL) as its metadata parameters.
///
/// On success `*sample` is a new handle owned by the caller: sent with `nerve_node_send_sample`
/// or given back unsent with `nerve_sample_free`. Fails as `nerve_node_send_bytes`.
///
/// Thread-safety: any thread.
///
/// # Safety
/// `node` is a live handle; `output` and `parameters_json` (unless NULL) are NUL-terminated
/// strings; `sample` is valid for writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_loan(
    node: *const NerveNode,
    output: *const c_char,
    parameters_json: *const c_char,
    len: usize,
    sample: *mut *mut NerveSample,
) -> c_int {
    guard("nerve_node_loan", || {
        // SAFETY: as the caller promises.
        let (node, output, params, sample) = unsafe {
            (
                handles::get(node, Kind::Node, "node")?,
                text(output, "output")?,
                parameters(parameters_json, "parameters_json")?,
                out(sample, "sample")?,
            )
        };
        lend(node.node.loan(output, &params, len)?, sample);
        Ok(NerveStatus::Ok)
    })
}

/// Hands block `lent` to C as a new sample handle, written to `sample`.
pub(crate) fn lend(lent: Sample, sample: &mut MaybeUninit<*mut NerveSample>) {
    sample.write(handles::give(NerveSample { sample: Some(lent) }, Kind::Sample));
}

/// What lends samples and sends them: a node's output or a publisher.
pub(crate) trait Lender {
    /// Sends `sample`, or hands it back unsent.
    // The unsent sample comes back by value, as the Rust APIs bound here give it.
    #[allow(clippy::result_large_err)]
    fn send_sample(&self, sample: Sample) -> Result<(), SendError<Sample>>;
}

impl Lender for nerve_node::Node {
    fn send_sample(&self, sample: Sample) -> Result<(), SendError<Sample>> {
        nerve_node::Node::send_sample(self, sample)
    }
}

impl Lender for nerve_topic::Publisher {
    fn send_sample(&self, sample: Sample) -> Result<(), SendError<Sample>> {
        nerve_topic::Publisher::send_sample(self, sample)
    }
}

/// Sends the block of live sample `sample` through `lender`: on success the handle is used up;
/// on failure the block goes back into it, unsent.
///
/// # Safety
/// `sample` is NULL or a pointer no other thread uses meanwhile.
pub(crate) unsafe fn send(sample: *mut NerveSample, lender: &impl Lender) -> Result<NerveStatus, ApiError> {
    // SAFETY: as the caller promises.
    let handle = unsafe { handles::get_mut(sample, Kind::Sample, "sample") }?;
    let lent = handle.sample.take().ok_or(ApiError::InvalidHandle { arg: "sample", kind: "nerve_sample" })?;
    match lender.send_sample(lent) {
        Ok(()) => {
            // SAFETY: live, and this thread's alone.
            drop(unsafe { handles::take(sample, Kind::Sample, "sample") }?);
            Ok(NerveStatus::Ok)
        }
        Err(e) => {
            let message = e.to_string();
            handle.sample = Some(e.into_inner());
            Err(ApiError::Send(message))
        }
    }
}

/// The bytes of a sample, to fill: `*data` points to `*len` writable bytes (of shared memory),
/// valid until the sample is sent or freed.
///
/// Thread-safety: one thread at a time per sample.
///
/// # Safety
/// `sample` is a live handle no other thread uses; `data` and `len` are valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_sample_data(sample: *mut NerveSample, data: *mut *mut u8, len: *mut usize) -> c_int {
    guard("nerve_sample_data", || {
        // SAFETY: as the caller promises.
        let (sample, data, len) =
            unsafe { (handles::get_mut(sample, Kind::Sample, "sample")?, out(data, "data")?, out(len, "len")?) };
        let lent = sample.sample.as_mut().ok_or(ApiError::InvalidHandle { arg: "sample", kind: "nerve_sample" })?;
        len.write(lent.len());
        data.write(lent.as_mut_ptr());
        Ok(NerveStatus::Ok)
    })
}

/// Sends a filled sample on the output that lent it. On success the sample is used up (its
/// handle is freed); on failure it stays the caller's, unsent.
///
/// Fails with `NERVE_STATUS_INVALID_HANDLE` for a sample sent or freed already, and with
/// `NERVE_STATUS_INVALID_ARGUMENT` for a sample another node or a publisher lent.
///
/// Thread-safety: any thread, one per sample.
///
/// # Safety
/// `node` and `sample` are live handles; no other thread uses `sample`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_node_send_sample(node: *const NerveNode, sample: *mut NerveSample) -> c_int {
    guard("nerve_node_send_sample", || {
        // SAFETY: as the caller promises.
        let node = unsafe { handles::get(node, Kind::Node, "node") }?;
        // SAFETY: as the caller promises.
        unsafe { send(sample, &node.node) }
    })
}

/// Gives an unsent sample's block back and frees the handle; NULL is allowed.
///
/// Thread-safety: no other thread may use the sample.
///
/// # Safety
/// `sample` is NULL or a live handle no other thread uses.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nerve_sample_free(sample: *mut NerveSample) -> c_int {
    // SAFETY: as the caller promises.
    unsafe { handles::free("nerve_sample_free", sample, Kind::Sample, "sample") }
}

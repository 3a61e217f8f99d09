//! What a writer fills: one lent-block type for a node's outputs and a topic's publishers, and
//! the error that hands it back when it cannot be sent.

use std::fmt;
use std::sync::Arc;

use arrow_schema::DataType;
use nerve_shm::codec::{Loan, Parameters};

/// A block of shared memory lent by one endpoint — an output of a dataflow node or a topic
/// publisher — to fill in place, then send with that same endpoint (`Node::send_sample`,
/// [`crate::Publisher::send_sample`]). Readers in other processes see the very bytes written
/// here: nothing is copied on the way.
///
/// Dropping it unsent gives the block back.
#[derive(Debug)]
pub struct Sample {
    loan: Loan,
    endpoint: Arc<str>,
    /// Type, count and parameters of the values, for readers of the sender's own process, who
    /// get a copy (the block belongs to the readers of other processes); `None` when there is
    /// nobody to copy for.
    local: Option<LocalCopy>,
}

/// What a copy of a sample's values for this process's readers needs.
#[derive(Debug)]
pub(crate) struct LocalCopy {
    pub(crate) data_type: DataType,
    pub(crate) items: usize,
    pub(crate) parameters: Parameters,
}

impl Sample {
    /// A block lent by the endpoint named `endpoint` (an output id or a topic): how an endpoint
    /// hands out a [`Loan`] of its pool.
    #[must_use]
    pub fn new(loan: Loan, endpoint: Arc<str>) -> Self {
        Self { loan, endpoint, local: None }
    }

    pub(crate) fn with_local_copy(mut self, local: LocalCopy) -> Self {
        self.local = Some(local);
        self
    }

    pub(crate) fn take_local_copy(&mut self) -> Option<LocalCopy> {
        self.local.take()
    }

    /// The output or topic that lent the block, where it must be sent.
    #[must_use]
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The bytes to fill.
    #[must_use]
    pub fn data_mut(&mut self) -> &mut [u8] {
        self.loan.data_mut()
    }

    /// Start of the bytes to fill; valid for [`Sample::len`] bytes while the sample lives.
    #[must_use]
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.loan.as_mut_ptr()
    }

    /// Bytes to fill.
    #[must_use]
    pub fn len(&self) -> usize {
        self.loan.len()
    }

    /// Whether the sample holds no bytes.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.loan.is_empty()
    }

    /// A handle that keeps the block mapped even after the sample is sent (bindings hand out
    /// raw views whose lifetime they cannot bound).
    #[must_use]
    pub fn keep_mapped(&self) -> Arc<dyn std::any::Any + Send + Sync> {
        self.loan.keep_mapped()
    }

    /// The loan underneath, for the endpoint that sends it.
    #[must_use]
    pub fn into_loan(self) -> Loan {
        self.loan
    }

    /// The loan underneath, to check where it came from.
    #[must_use]
    pub fn loan(&self) -> &Loan {
        &self.loan
    }
}

/// Why a send could not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SendFailure {
    /// The sample was lent by another endpoint: its block belongs to that endpoint's pool, and
    /// this one's readers cannot see it.
    #[error("the sample was lent by `{lent_by}`; send it there")]
    LentElsewhere {
        /// The endpoint that lent it.
        lent_by: String,
    },
    /// The filled bytes do not make an array of the sample's type (for this process's readers).
    #[error("the filled values do not form an array of the sample's type: {0}")]
    BadValues(String),
}

/// A send that could not complete: the sample comes back to the caller unsent, with why (the
/// shape of tokio's `SendError<T>`), so nothing written into it is lost.
///
/// ```no_run
/// use nerve_topic::{Publisher, SendError};
///
/// let publisher = Publisher::new("scan", Default::default())?;
/// let mut sample = publisher.loan(4, &Default::default())?;
/// sample.data_mut().copy_from_slice(&[1, 2, 3, 4]);
/// if let Err(SendError { sample, reason, .. }) = publisher.send_sample(sample) {
///     eprintln!("not sent ({reason}); {} bytes are still ours", sample.len());
/// }
/// # Ok::<(), nerve_topic::TopicError>(())
/// ```
pub struct SendError<T> {
    /// The value that was not sent.
    pub sample: T,
    /// Where it was to go: an output id or a topic.
    pub endpoint: String,
    /// Why not.
    pub reason: SendFailure,
}

impl<T> SendError<T> {
    /// The value that was not sent.
    pub fn into_inner(self) -> T {
        self.sample
    }
}

impl<T> fmt::Debug for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendError")
            .field("endpoint", &self.endpoint)
            .field("reason", &self.reason)
            .finish_non_exhaustive()
    }
}

impl<T> fmt::Display for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot send on `{}`: {}", self.endpoint, self.reason)
    }
}

impl<T> std::error::Error for SendError<T> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.reason)
    }
}

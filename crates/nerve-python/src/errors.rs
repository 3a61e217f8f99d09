//! Python exception classes for nerve's errors.

use nerve_node::NodeError;
use nerve_topic::TopicError;
use pyo3::exceptions::{PyException, PyKeyError, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(nerve, NerveError, PyException, "Base class of nerve's errors.");
pyo3::create_exception!(nerve, ConnectError, NerveError, "The node could not join a running dataflow.");
pyo3::create_exception!(nerve, VersionMismatchError, ConnectError, "Node library and runtime versions differ.");
pyo3::create_exception!(nerve, SendError, NerveError, "A message could not be sent.");
pyo3::create_exception!(
    nerve,
    ParameterError,
    NerveError,
    "A parameter could not be read, declared or set: unknown key, wrong type, or refused by a callback."
);

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("NerveError", py.get_type::<NerveError>())?;
    m.add("ConnectError", py.get_type::<ConnectError>())?;
    m.add("VersionMismatchError", py.get_type::<VersionMismatchError>())?;
    m.add("SendError", py.get_type::<SendError>())?;
    m.add("ParameterError", py.get_type::<ParameterError>())?;
    Ok(())
}

/// Maps a node error to the matching Python exception.
pub(crate) fn to_py(e: &NodeError) -> PyErr {
    let msg = e.to_string();
    match e {
        NodeError::VersionMismatch { .. } => VersionMismatchError::new_err(msg),
        NodeError::NotStartedByNerve { .. }
        | NodeError::Connect { .. }
        | NodeError::NoDataflow { .. }
        | NodeError::Refused { .. } => ConnectError::new_err(msg),
        NodeError::UnknownOutput { .. } => PyKeyError::new_err(msg),
        NodeError::TooLarge { .. }
        | NodeError::DeclaredType { .. }
        | NodeError::TimerId { .. }
        | NodeError::Message { .. } => PyValueError::new_err(msg),
        NodeError::WrongType { .. } => pyo3::exceptions::PyTypeError::new_err(msg),
        NodeError::LockMemory(_)
        | NodeError::NotSimTime
        | NodeError::NoServer { .. }
        | NodeError::ServerEnded { .. } => NerveError::new_err(msg),
        NodeError::Shm(_) | NodeError::Control(_) | NodeError::Protocol(_) => SendError::new_err(msg),
        NodeError::Topic(e) => topic_error(e),
    }
}

/// Maps a topic error to the matching Python exception.
pub(crate) fn topic_error(e: &TopicError) -> PyErr {
    let msg = e.to_string();
    match e {
        TopicError::BadName { .. }
        | TopicError::BadScope(_)
        | TopicError::BadQueueSize(_)
        | TopicError::BadWorkers(_)
        | TopicError::TooLarge { .. }
        | TopicError::BadOption { .. }
        | TopicError::BadAddress { .. } => PyValueError::new_err(msg),
        TopicError::Registry { .. }
        | TopicError::Shm(_)
        | TopicError::Network(_)
        | TopicError::Thread(_)
        | TopicError::InboxQueues { .. } => NerveError::new_err(msg),
    }
}

/// `e` with `place` (where it happened: "output `image`") in front of its message, of the same
/// Python type, and `e` as its cause; `e` itself if its type cannot be made from a message.
pub(crate) fn at(py: Python<'_>, e: PyErr, place: &str) -> PyErr {
    let message = format!("{place}: {}", e.value(py));
    match e.get_type(py).call1((message,)) {
        Ok(value) => {
            let placed = PyErr::from_value(value);
            placed.set_cause(py, Some(e));
            placed
        }
        Err(_) => e,
    }
}

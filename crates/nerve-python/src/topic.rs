//! `nerve.Publisher` and the core of `nerve.Subscriber`: topics by name from any process.

use std::sync::Arc;

use nerve_topic::{CallbackMode, Callbacks, Message, PublisherOptions, RunScope, Scope, SubscriberOptions};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::arrow::PyArrow;
use crate::at_exit::Slot;
use crate::errors::{at, topic_error};
use crate::node::{input_event, params};
use crate::outgoing::Outgoing;
use crate::sample::{Lender, Sample, Target};
use crate::wait::{Waited, WokenTogether, deadline, interruptible, wait_until};

fn scope(s: &str) -> PyResult<Scope> {
    s.parse().map_err(|e| topic_error(&e))
}

/// Whose name an endpoint's is, from its ``shared=`` and ``run=`` keywords: the run of this
/// process by default (global outside any run), global with ``shared=True``, run ``run``'s.
pub(crate) fn run_scope(shared: bool, run: Option<String>) -> PyResult<RunScope> {
    match (shared, run) {
        (false, None) => Ok(RunScope::Inherit),
        (true, None) => Ok(RunScope::Shared),
        (false, Some(run)) => Ok(RunScope::Run(run)),
        (true, Some(run)) => Err(PyValueError::new_err(format!(
            "shared=True and run={run:?} contradict each other: a name is either global or one run's"
        ))),
    }
}

/// Publishes on a topic, to subscribers in this process (they receive the very object sent),
/// in other processes of this host (zero-copy shared memory), found with no broker.
#[pyclass(frozen, module = "nerve._nerve")]
pub(crate) struct Publisher {
    pub(crate) inner: nerve_topic::Publisher,
    pa: PyArrow,
}

impl Lender for Publisher {
    fn send_sample(&self, sample: nerve_topic::Sample) -> Result<(), nerve_topic::SendError<nerve_topic::Sample>> {
        self.inner.send_sample(sample)
    }
}

#[pymethods]
impl Publisher {
    #[new]
    #[pyo3(signature = (topic, *, domain=0, scope="network", max_message=None, latched=false, shared=false, run=None))]
    #[allow(clippy::too_many_arguments)] // the Python signature, keyword by keyword
    fn new(
        py: Python<'_>,
        topic: &str,
        domain: u32,
        scope: &str,
        max_message: Option<usize>,
        latched: bool,
        shared: bool,
        run: Option<String>,
    ) -> PyResult<Self> {
        let options = PublisherOptions {
            domain,
            scope: self::scope(scope)?,
            max_message: max_message.unwrap_or(nerve_topic::DEFAULT_MAX_MESSAGE),
            latched,
            run: run_scope(shared, run)?,
            origin: None,
        };
        let pa = PyArrow::import(py)?;
        let inner = py.detach(|| nerve_topic::Publisher::new(topic, options)).map_err(|e| topic_error(&e))?;
        Ok(Self { inner, pa })
    }

    /// The topic's name (without a leading ``/``).
    #[getter]
    fn topic(&self) -> &str {
        self.inner.topic()
    }

    /// Subscribers reached now (in this process, and one per linked subscriber elsewhere).
    #[getter]
    fn subscriber_count(&self) -> usize {
        self.inner.subscriber_count()
    }

    /// Whether the last message sent is handed to each subscriber that joins later.
    #[getter]
    fn latched(&self) -> bool {
        self.inner.latched()
    }

    /// Waits up to ``timeout`` seconds (forever with ``None``) until at least ``n``
    /// subscribers are reached; ``True`` once they are, ``False`` when the time ran out (as
    /// ``rclpy``'s ``wait_for_service``). Woken by each subscriber that joins, not by polling.
    #[pyo3(signature = (n=1, timeout=None))]
    fn wait_for_subscribers(&self, py: Python<'_>, n: usize, timeout: Option<f64>) -> PyResult<bool> {
        let p = &self.inner;
        wait_until(py, timeout, |chunk| p.wait_for_subscribers(n, chunk))
    }

    /// Sends ``data``: subscribers of this process get this very object; subscribers of other
    /// processes get it in shared memory (``bytes``, numpy arrays and other buffers of numbers
    /// are copied once; lists and tuples of ints and floats are made into an array without
    /// pyarrow; other objects go through ``pyarrow.array``). Nothing is converted or
    /// copied while no other process subscribes.
    #[pyo3(signature = (data, metadata=None))]
    fn send(&self, py: Python<'_>, data: &Bound<'_, PyAny>, metadata: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        let params = params(metadata)?;
        // Made ready for other processes before anyone gets it: what cannot be sent to them is
        // refused whole, not after this process's subscribers had it.
        let outgoing = if self.inner.encodes() {
            let place = format!("topic `{}`", self.inner.topic());
            Some(Outgoing::classify(py, &self.pa, data, None).map_err(|e| at(py, e, &place))?)
        } else {
            None
        };
        let object: Arc<dyn std::any::Any + Send + Sync> = Arc::new(data.clone().unbind());
        self.inner.send_local_object(&object, &params);
        let Some(outgoing) = outgoing else {
            return Ok(());
        };
        let p = &self.inner;
        let loan = match outgoing {
            Outgoing::Bytes(b) => {
                let bytes = b.bind(py).as_bytes();
                py.detach(|| {
                    p.loan(bytes.len(), &params).map(|mut l| {
                        l.data_mut().copy_from_slice(bytes);
                        l
                    })
                })
            }
            Outgoing::Primitive { data_type, items, buffer } => {
                let bytes = buffer.bytes();
                py.detach(|| {
                    p.loan_primitive(&data_type, items, bytes.len(), &params).map(|mut l| {
                        l.data_mut().copy_from_slice(bytes);
                        l
                    })
                })
            }
            Outgoing::Tensor { value_type, shape, buffer } => {
                let bytes = buffer.bytes();
                py.detach(|| {
                    p.loan_tensor(&value_type, &shape, bytes.len(), &params).map(|mut l| {
                        l.data_mut().copy_from_slice(bytes);
                        l
                    })
                })
            }
            Outgoing::Array(array, extension) => {
                py.detach(|| p.loan_array(&array.to_data(), extension.as_ref(), &params))
            }
        };
        let loan = loan.map_err(|e| topic_error(&e))?;
        py.detach(|| p.send_to_other_processes(loan));
        Ok(())
    }

    /// Lends ``data_len`` bytes of shared memory to fill in place; sent as a ``UInt8`` array
    /// when the ``with`` block ends (or on ``sample.send()``).
    #[pyo3(signature = (data_len, metadata=None))]
    fn loan(slf: &Bound<'_, Self>, data_len: usize, metadata: Option<&Bound<'_, PyDict>>) -> PyResult<Sample> {
        let params = params(metadata)?;
        let this = slf.get();
        let loan = slf.py().detach(|| this.inner.loan(data_len, &params)).map_err(|e| topic_error(&e))?;
        Ok(Sample::new(Target::of(slf), loan))
    }

    fn __repr__(&self) -> String {
        format!("Publisher(topic={:?})", self.inner.topic())
    }
}

/// Receives a topic's messages: by ``recv``, or handed to a callback on threads of nerve's own
/// (the core of ``nerve.Subscriber``).
#[pyclass(frozen, module = "nerve._nerve")]
pub(crate) struct Subscriber {
    topic: String,
    inner: Receiving,
    pa: Arc<PyArrow>,
    woken: WokenTogether,
}

/// How a subscriber's messages are taken.
enum Receiving {
    /// By `recv`.
    Recv(Box<nerve_topic::Subscriber>),
    /// By a callback, until `close` (then `None`).
    Callbacks(Slot<Callbacks>),
}

#[pymethods]
impl Subscriber {
    #[new]
    #[pyo3(signature = (
        topic, *, domain=0, scope="network", queue_size=10, keep_latest=false, callback=None, workers=0, shared=false,
        run=None
    ))]
    #[allow(clippy::too_many_arguments)] // the Python signature, keyword by keyword
    fn new(
        py: Python<'_>,
        topic: &str,
        domain: u32,
        scope: &str,
        queue_size: usize,
        keep_latest: bool,
        callback: Option<Py<PyAny>>,
        workers: usize,
        shared: bool,
        run: Option<String>,
    ) -> PyResult<Self> {
        let options = SubscriberOptions {
            domain,
            scope: self::scope(scope)?,
            queue_size,
            keep_latest,
            run: run_scope(shared, run)?,
        };
        let pa = Arc::new(PyArrow::import(py)?);
        let sub = py.detach(|| nerve_topic::Subscriber::new(topic, options)).map_err(|e| topic_error(&e))?;
        let topic = sub.topic().to_owned();
        let inner = match callback {
            None => Receiving::Recv(Box::new(sub)),
            Some(callback) => {
                let mode = if workers == 0 { CallbackMode::Serial } else { CallbackMode::Concurrent { workers } };
                let converting = pa.clone();
                // Runs on nerve's callback threads, woken by each message: no Python thread polls.
                let call = move |m: Message| {
                    Python::attach(|py| {
                        let called = message(py, &converting, &m, false).and_then(|d| callback.call1(py, (d,)));
                        if let Err(e) = called {
                            e.write_unraisable(py, Some(callback.bind(py)));
                        }
                    });
                };
                let callbacks = py.detach(|| sub.on_message(mode, call)).map_err(|e| topic_error(&e))?;
                Receiving::Callbacks(Slot::new(callbacks))
            }
        };
        Ok(Self { topic, inner, pa, woken: WokenTogether::default() })
    }

    /// The topic's name (without a leading ``/``).
    #[getter]
    fn topic(&self) -> &str {
        &self.topic
    }

    /// Publishers reaching this subscriber now (0 once its callbacks are closed).
    #[getter]
    fn publisher_count(&self) -> usize {
        self.with_subscriber(nerve_topic::Subscriber::publisher_count).unwrap_or(0)
    }

    /// Messages lost so far because the queue was full (the oldest go first).
    #[getter]
    fn dropped(&self) -> u64 {
        self.with_subscriber(nerve_topic::Subscriber::dropped).unwrap_or(0)
    }

    /// Waits up to ``timeout`` seconds (forever with ``None``, not at all with ``0``) for the
    /// next message; ``None`` on timeout.
    #[pyo3(signature = (timeout=None))]
    fn recv(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Option<Py<PyDict>>> {
        let Receiving::Recv(sub) = &self.inner else {
            return Err(PyRuntimeError::new_err(
                "this subscriber hands its messages to its callback; recv() is not available",
            ));
        };
        // As `Node.next`: a message already waiting at once; else readers woken with this one
        // first, then the imports ahead.
        deadline(timeout)?; // a bad timeout is refused even when something is waiting
        if let Some(m) = py.detach(|| sub.try_recv()).map_err(|e| topic_error(&e))? {
            return message(py, &self.pa, &m, true).map(Some);
        }
        self.woken.yield_first(py);
        self.pa.prepare(py)?;
        let got = interruptible(py, timeout, |chunk| {
            let got = py.detach(|| sub.recv(Some(chunk))).map_err(|e| topic_error(&e))?;
            self.woken.set(sub.take_slept());
            Ok(got.map_or(Waited::Nothing, Waited::Got))
        })?;
        got.map(|m| message(py, &self.pa, &m, true)).transpose()
    }

    /// Stops the callbacks and unsubscribes: waits for calls under way, except the caller's own
    /// (a callback may close its subscriber). Does nothing for a subscriber without callbacks.
    fn close(&self, py: Python<'_>) {
        if let Receiving::Callbacks(slot) = &self.inner {
            slot.close(py);
        }
    }

    fn __repr__(&self) -> String {
        format!("Subscriber(topic={:?})", self.topic)
    }
}

impl Subscriber {
    fn with_subscriber<T>(&self, f: impl FnOnce(&nerve_topic::Subscriber) -> T) -> Option<T> {
        match &self.inner {
            Receiving::Recv(sub) => Some(f(sub)),
            Receiving::Callbacks(slot) => slot.get().as_ref().map(|c| f(c.subscriber())),
        }
    }
}

/// A received message as a message dict; `ahead` uses the arrays imported ahead for a reader
/// that waits in `recv` (see [`PyArrow::prepare`]).
fn message(py: Python<'_>, pa: &PyArrow, m: &Message, ahead: bool) -> PyResult<Py<PyDict>> {
    let value = match &m.object {
        None if ahead => pa.received(py, &m.data, m.metadata.extension.as_deref())?,
        None => pa.to_py(py, &m.data, m.metadata.extension.as_deref())?,
        Some(o) => match o.downcast_ref::<Py<PyAny>>() {
            Some(obj) => obj.clone_ref(py),
            // Sent by Rust code of this process: not a Python object.
            None => py.None(),
        },
    };
    input_event(py, m.id.as_str(), &m.metadata, value)
}

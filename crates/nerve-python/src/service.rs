//! `nerve.Service` and `nerve.Client`: request/response by name, from any process or host.

use std::time::Duration;

use nerve_topic::service::{self as rust, Client as RustClient, HandlerResult, Request, Server, ServiceOptions};
use pyo3::exceptions::{PyTimeoutError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyDict, PyTuple};

use crate::arrow::PyArrow;
use crate::at_exit::Slot;
use crate::errors::{NerveError, topic_error};
use crate::node::{input_event, params};
use crate::outgoing::Outgoing;
use crate::topic::run_scope;
use crate::wait::wait_until;

pyo3::create_exception!(nerve, ServiceError, NerveError, "A service call failed: no server, a refusal, a dead server.");

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ServiceError", m.py().get_type::<ServiceError>())?;
    m.add_class::<Service>()?;
    m.add_class::<Client>()?;
    Ok(())
}

fn service_error(e: rust::ServiceError) -> PyErr {
    match e {
        rust::ServiceError::Timeout { .. } => PyTimeoutError::new_err(e.to_string()),
        rust::ServiceError::Setup(t) => topic_error(&t),
        other => ServiceError::new_err(other.to_string()),
    }
}

/// What a handler's (or an action's execute function's) answer carries: `data`, or
/// `(data, metadata)`.
pub(crate) fn message(
    py: Python<'_>,
    pa: &PyArrow,
    answer: &Bound<'_, PyAny>,
) -> PyResult<(arrow_data::ArrayData, nerve_topic::Parameters)> {
    let (data, metadata) = match answer.cast::<PyTuple>() {
        Ok(t) if t.len() == 2 => (t.get_item(0)?, Some(t.get_item(1)?)),
        _ => (answer.clone(), None),
    };
    let metadata = metadata
        .as_ref()
        .map(|m| m.cast::<PyDict>())
        .transpose()
        .map_err(|_| PyValueError::new_err("a reply is `data` or `(data, metadata)` with metadata a dict"))?;
    let params = params(metadata)?;
    Ok((Outgoing::classify(py, pa, &data, None)?.into_array_data(py)?, params))
}

/// Serves a service: ``handler(request)`` gets the request as a message dict (like a topic's)
/// and returns the reply's ``data`` or ``(data, metadata)``; an exception it raises is sent to
/// the caller as the reason of a ``ServiceError``. Up to ``workers`` requests are handled at once.
#[pyclass(frozen, module = "nerve._nerve")]
pub(crate) struct Service {
    name: String,
    inner: Slot<Server>,
}

#[pymethods]
impl Service {
    #[new]
    #[pyo3(signature = (name, handler, *, domain=0, workers=1, shared=false, run=None))]
    fn new(
        py: Python<'_>,
        name: &str,
        handler: Py<PyAny>,
        domain: u32,
        workers: usize,
        shared: bool,
        run: Option<String>,
    ) -> PyResult<Self> {
        let run = run_scope(shared, run)?;
        let pa = PyArrow::import(py)?;
        let serve = move |request: Request| -> HandlerResult {
            Python::attach(|py| {
                let answer = || -> PyResult<_> {
                    let value = pa.to_py(py, &request.data, request.metadata.extension.as_deref())?;
                    let event = input_event(py, &*request.service, &request.metadata, value)?;
                    message(py, &pa, &handler.bind(py).call1((event,))?)
                };
                // The caller sees what was raised, as Python prints it: `ValueError: …`.
                answer().map_err(|e| e.to_string().into())
            })
        };
        let options = ServiceOptions { domain, workers, run };
        let server = py.detach(|| Server::new(name, options, serve)).map_err(|e| topic_error(&e))?;
        Ok(Self { name: server.service().to_owned(), inner: Slot::new(server) })
    }

    /// The service's name (without a leading ``/``).
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Stops serving and waits for the handler calls under way (also done when the object is
    /// collected, and as the program exits).
    fn close(&self, py: Python<'_>) {
        self.inner.close(py);
    }

    fn __repr__(&self) -> String {
        format!("Service(name={:?})", self.name)
    }
}

/// Calls a service: ``call(data, metadata=None, timeout=10.0)`` returns the reply as a message
/// dict; ``call_async`` returns a ``concurrent.futures.Future`` of it (``asyncio.wrap_future``
/// awaits it; a program that ends with calls in flight waits for them, at most their
/// timeout). Raises ``TimeoutError`` after ``timeout`` seconds and ``ServiceError`` when no
/// server exists, the server refuses, or it dies before answering: a call never hangs.
#[pyclass(frozen, module = "nerve._nerve")]
pub(crate) struct Client {
    inner: std::sync::Arc<RustClient>,
    pa: std::sync::Arc<PyArrow>,
}

#[pymethods]
impl Client {
    #[new]
    #[pyo3(signature = (name, *, domain=0, shared=false, run=None))]
    fn new(py: Python<'_>, name: &str, domain: u32, shared: bool, run: Option<String>) -> PyResult<Self> {
        let pa = PyArrow::import(py)?;
        let options = ServiceOptions { domain, run: run_scope(shared, run)?, ..ServiceOptions::default() };
        let inner = py.detach(|| RustClient::new(name, options)).map_err(|e| topic_error(&e))?;
        Ok(Self { inner: std::sync::Arc::new(inner), pa: std::sync::Arc::new(pa) })
    }

    /// The service's name (without a leading ``/``).
    #[getter]
    fn name(&self) -> &str {
        self.inner.service()
    }

    /// Servers of this service reachable now.
    #[getter]
    fn server_count(&self) -> usize {
        self.inner.server_count()
    }

    /// Waits up to ``timeout`` seconds (forever with ``None``) until a server of this service
    /// is reachable; ``True`` once one is, ``False`` when the time ran out (as ``rclpy``'s
    /// ``wait_for_service`` and ``wait_for_server``). Woken when a server appears, not by polling.
    #[pyo3(signature = (timeout=None))]
    fn wait_for_server(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<bool> {
        let inner = &self.inner;
        wait_until(py, timeout, |chunk| inner.wait_for_server(chunk))
    }

    #[pyo3(signature = (data, metadata=None, timeout=10.0))]
    fn call(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        metadata: Option<&Bound<'_, PyDict>>,
        timeout: f64,
    ) -> PyResult<Py<PyDict>> {
        let (request, params, timeout) = self.request(py, data, metadata, timeout)?;
        let inner = &self.inner;
        let reply = py.detach(|| inner.call(&request, &params, timeout)).map_err(service_error)?;
        reply_event(py, &self.pa, inner.service(), &reply)
    }

    #[pyo3(signature = (data, metadata=None, timeout=10.0))]
    fn call_async(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        metadata: Option<&Bound<'_, PyDict>>,
        timeout: f64,
    ) -> PyResult<Py<PyAny>> {
        let (request, params, timeout) = self.request(py, data, metadata, timeout)?;
        let future = py.import("concurrent.futures")?.getattr("Future")?.call0()?.unbind();
        let (inner, pa, done) = (self.inner.clone(), self.pa.clone(), future.clone_ref(py));
        let call = PyCFunction::new_closure(py, Some(c"call"), None, move |args, _| {
            let py = args.py();
            let outcome = py.detach(|| inner.call(&request, &params, timeout));
            let settled = match outcome {
                Ok(reply) => reply_event(py, &pa, inner.service(), &reply)
                    .and_then(|event| done.call_method1(py, "set_result", (event,))),
                Err(e) => done.call_method1(py, "set_exception", (service_error(e).value(py),)),
            };
            if let Err(e) = settled {
                e.write_unraisable(py, None);
            }
        })?;
        // A thread of Python's `threading`, not a bare one: the interpreter waits for it before
        // it exits. The future's callbacks may let go of the GIL (asyncio's write to a socket);
        // a bare thread that takes it back from an interpreter finishing meanwhile is killed
        // there, which aborts the process.
        let thread = py.import("threading")?.getattr("Thread")?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("target", call)?;
        kwargs.set_item("name", format!("nerve-call-{}", self.inner.service()))?;
        thread.call((), Some(&kwargs))?.call_method0("start")?;
        Ok(future)
    }

    fn __repr__(&self) -> String {
        format!("Client(name={:?})", self.inner.service())
    }
}

impl Client {
    /// A call's request, and its timeout checked.
    fn request(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        metadata: Option<&Bound<'_, PyDict>>,
        timeout: f64,
    ) -> PyResult<(arrow_data::ArrayData, nerve_topic::Parameters, Duration)> {
        let (request, params) = outgoing(py, &self.pa, data, metadata)?;
        Ok((request, params, seconds(timeout)?))
    }
}

/// A message to send: `data` as Arrow, and `metadata` as parameters.
pub(crate) fn outgoing(
    py: Python<'_>,
    pa: &PyArrow,
    data: &Bound<'_, PyAny>,
    metadata: Option<&Bound<'_, PyDict>>,
) -> PyResult<(arrow_data::ArrayData, nerve_topic::Parameters)> {
    Ok((Outgoing::classify(py, pa, data, None)?.into_array_data(py)?, params(metadata)?))
}

/// A timeout given in seconds.
pub(crate) fn seconds(timeout: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(timeout)
        .map_err(|_| PyValueError::new_err("timeout must be a non-negative number of seconds"))
}

/// A received message (a reply, feedback, a result) as a message dict with `id` = `name`.
pub(crate) fn message_event(
    py: Python<'_>,
    pa: &PyArrow,
    name: &str,
    metadata: &nerve_topic::Metadata,
    data: &arrow_array::ArrayRef,
) -> PyResult<Py<PyDict>> {
    input_event(py, name, metadata, pa.to_py(py, data, metadata.extension.as_deref())?)
}

fn reply_event(py: Python<'_>, pa: &PyArrow, service: &str, reply: &rust::Reply) -> PyResult<Py<PyDict>> {
    message_event(py, pa, service, &reply.metadata, &reply.data)
}

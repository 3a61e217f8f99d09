//! `nerve.ActionServer` and `nerve.ActionClient`: long-running goals with feedback, a result
//! and cancel, from any process or host.

use std::sync::Arc;

use nerve_topic::Refusal;
use nerve_topic::action::{
    self as rust, ActionClient as RustClient, ActionOptions, ActionServer as RustServer, ExecuteResult, GoalRequest,
};
use pyo3::exceptions::{PyStopIteration, PyTimeoutError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::arrow::PyArrow;
use crate::at_exit::Slot;
use crate::errors::{NerveError, topic_error};
use crate::service::{message, message_event, outgoing, seconds};
use crate::topic::run_scope;
use crate::wait::{Waited, interruptible, wait_until};

pyo3::create_exception!(nerve, ActionError, NerveError, "A goal failed: no server, an abort, a dead server.");
pyo3::create_exception!(nerve, GoalRejectedError, ActionError, "The action's server rejected the goal.");

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ActionError", m.py().get_type::<ActionError>())?;
    m.add("GoalRejectedError", m.py().get_type::<GoalRejectedError>())?;
    m.add_class::<ActionServer>()?;
    m.add_class::<ServerGoal>()?;
    m.add_class::<ActionClient>()?;
    m.add_class::<GoalHandle>()?;
    Ok(())
}

fn action_error(e: rust::ActionError) -> PyErr {
    match e {
        rust::ActionError::Timeout { .. } => PyTimeoutError::new_err(e.to_string()),
        rust::ActionError::Setup(t) => topic_error(&t),
        rust::ActionError::Rejected { .. } => GoalRejectedError::new_err(e.to_string()),
        other => ActionError::new_err(other.to_string()),
    }
}

/// Serves an action: ``accept(request)`` (optional) sees each goal as a message dict and
/// rejects it by returning ``False`` or raising (the exception is the reason the client gets);
/// ``execute(goal)`` runs each accepted goal on one of ``workers`` threads, publishes feedback
/// with ``goal.publish_feedback``, watches ``goal.cancel_requested``, and returns the result's
/// ``data`` or ``(data, metadata)``. An exception it raises aborts the goal with that reason.
#[pyclass(frozen, module = "nerve._nerve")]
pub(crate) struct ActionServer {
    name: String,
    inner: Slot<RustServer>,
}

#[pymethods]
impl ActionServer {
    #[new]
    #[pyo3(signature = (name, execute, accept=None, workers=1, domain=0, *, shared=false, run=None))]
    #[allow(clippy::too_many_arguments)] // the Python signature, keyword by keyword
    fn new(
        py: Python<'_>,
        name: &str,
        execute: Py<PyAny>,
        accept: Option<Py<PyAny>>,
        workers: usize,
        domain: u32,
        shared: bool,
        run: Option<String>,
    ) -> PyResult<Self> {
        let scope = run_scope(shared, run)?;
        let pa = Arc::new(PyArrow::import(py)?);
        let deciding = pa.clone();
        let decide = move |request: &GoalRequest| -> Result<(), Refusal> {
            let Some(accept) = &accept else { return Ok(()) };
            Python::attach(|py| {
                let verdict = || -> PyResult<bool> {
                    let event = message_event(py, &deciding, &request.action, &request.metadata, &request.data)?;
                    let answer = accept.bind(py).call1((event,))?;
                    // `None` (no return statement) accepts; only an explicit `False` rejects.
                    Ok(answer.is_none() || answer.is_truthy()?)
                };
                match verdict() {
                    Ok(true) => Ok(()),
                    Ok(false) => Err("the server's accept function declined the goal".into()),
                    // The client sees what was raised, as Python prints it: `ValueError: …`.
                    Err(e) => Err(e.to_string().into()),
                }
            })
        };
        let run = move |goal: rust::ServerGoal| -> ExecuteResult {
            Python::attach(|py| {
                let answer = || -> PyResult<_> {
                    let request =
                        message_event(py, &pa, &goal.request.action, &goal.request.metadata, &goal.request.data)?;
                    let goal = Py::new(py, ServerGoal { inner: goal, request, pa: pa.clone() })?;
                    message(py, &pa, &execute.bind(py).call1((goal,))?)
                };
                answer().map_err(|e| e.to_string().into())
            })
        };
        let options = ActionOptions { domain, workers, run: scope };
        let server = py.detach(|| RustServer::new(name, options, decide, run)).map_err(|e| topic_error(&e))?;
        Ok(Self { name: server.action().to_owned(), inner: Slot::new(server) })
    }

    /// The action's name (without a leading ``/``).
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Stops serving, asks the running goals to cancel and waits for them to end (also done
    /// when collected, and as the program exits).
    fn close(&self, py: Python<'_>) {
        self.inner.close(py);
    }

    fn __repr__(&self) -> String {
        format!("ActionServer(name={:?})", self.name)
    }
}

/// A goal being executed, as ``execute(goal)`` gets it: ``request`` (a message dict),
/// ``publish_feedback(data, metadata=None)``, ``cancel_requested`` and ``wait_cancel(timeout)``.
#[pyclass(frozen, module = "nerve._nerve")]
pub(crate) struct ServerGoal {
    inner: rust::ServerGoal,
    request: Py<PyDict>,
    pa: Arc<PyArrow>,
}

#[pymethods]
impl ServerGoal {
    /// The goal's id (a UUID).
    #[getter]
    fn id(&self) -> &str {
        self.inner.id()
    }

    /// The goal as the client sent it: a message dict (``value``, ``metadata``, ``id``).
    #[getter]
    fn request(&self, py: Python<'_>) -> Py<PyDict> {
        self.request.clone_ref(py)
    }

    /// Whether a client asked to cancel the goal.
    #[getter]
    fn cancel_requested(&self) -> bool {
        self.inner.is_cancel_requested()
    }

    /// Waits up to ``timeout`` seconds for a cancel request; whether one came.
    fn wait_cancel(&self, py: Python<'_>, timeout: f64) -> PyResult<bool> {
        let timeout = seconds(timeout)?;
        let inner = &self.inner;
        Ok(py.detach(|| inner.wait_cancel(timeout)))
    }

    /// Sends feedback to the client; never waits for a slow client.
    #[pyo3(signature = (data, metadata=None))]
    fn publish_feedback(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        metadata: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        let (data, params) = outgoing(py, &self.pa, data, metadata)?;
        let inner = &self.inner;
        py.detach(|| inner.publish_feedback(&data, &params)).map_err(action_error)
    }

    fn __repr__(&self) -> String {
        format!("ServerGoal(action={:?}, id={:?})", &*self.inner.request.action, self.inner.id())
    }
}

/// Sends goals to an action: ``send_goal(data, metadata=None, timeout=10.0)`` returns a
/// ``GoalHandle`` once a server accepts the goal, and raises ``GoalRejectedError`` with the
/// server's reason, ``ActionError`` when no server exists or it dies, ``TimeoutError``.
#[pyclass(frozen, module = "nerve._nerve")]
pub(crate) struct ActionClient {
    inner: RustClient,
    pa: Arc<PyArrow>,
}

#[pymethods]
impl ActionClient {
    #[new]
    #[pyo3(signature = (name, domain=0, *, shared=false, run=None))]
    fn new(py: Python<'_>, name: &str, domain: u32, shared: bool, run: Option<String>) -> PyResult<Self> {
        let pa = Arc::new(PyArrow::import(py)?);
        let options = ActionOptions { domain, run: run_scope(shared, run)?, ..ActionOptions::default() };
        let inner = py.detach(|| RustClient::new(name, options)).map_err(|e| topic_error(&e))?;
        Ok(Self { inner, pa })
    }

    /// The action's name (without a leading ``/``).
    #[getter]
    fn name(&self) -> &str {
        self.inner.action()
    }

    /// Servers of this action reachable now.
    #[getter]
    fn server_count(&self) -> usize {
        self.inner.server_count()
    }

    /// Waits up to ``timeout`` seconds (forever with ``None``) until a server of this action
    /// is reachable; ``True`` once one is, ``False`` when the time ran out (as ``rclpy``'s
    /// ``wait_for_service`` and ``wait_for_server``). Woken when a server appears, not by polling.
    #[pyo3(signature = (timeout=None))]
    fn wait_for_server(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<bool> {
        let inner = &self.inner;
        wait_until(py, timeout, |chunk| inner.wait_for_server(chunk))
    }

    #[pyo3(signature = (data, metadata=None, timeout=10.0))]
    fn send_goal(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        metadata: Option<&Bound<'_, PyDict>>,
        timeout: f64,
    ) -> PyResult<GoalHandle> {
        let (data, params) = outgoing(py, &self.pa, data, metadata)?;
        let timeout = seconds(timeout)?;
        let inner = &self.inner;
        let handle = py.detach(|| inner.send_goal(&data, &params, timeout)).map_err(action_error)?;
        Ok(GoalHandle { inner: handle, pa: self.pa.clone() })
    }

    fn __repr__(&self) -> String {
        format!("ActionClient(name={:?})", self.inner.action())
    }
}

/// An accepted goal: ``status``, ``feedback(timeout=None)`` (or iterate over the feedback until
/// the goal ends), ``result(timeout=None)`` and ``cancel()``.
#[pyclass(frozen, module = "nerve._nerve")]
pub(crate) struct GoalHandle {
    inner: rust::GoalHandle,
    pa: Arc<PyArrow>,
}

#[pymethods]
impl GoalHandle {
    /// The goal's id (a UUID).
    #[getter]
    fn id(&self) -> &str {
        self.inner.id()
    }

    /// Always ``True``: a rejected goal raises ``GoalRejectedError`` instead of giving a handle.
    #[getter]
    fn accepted(&self) -> bool {
        true
    }

    /// ``accepted``, ``executing``, ``canceling``, ``succeeded``, ``canceled``, ``aborted`` or
    /// ``failed``.
    #[getter]
    fn status(&self) -> &'static str {
        self.inner.status().name()
    }

    /// Why the goal was aborted or failed, else ``None``.
    #[getter]
    fn reason(&self) -> Option<String> {
        self.inner.status().reason().map(str::to_owned)
    }

    /// Feedback messages lost because this handle's reader lagged.
    #[getter]
    fn feedback_dropped(&self) -> u64 {
        self.inner.feedback_dropped()
    }

    /// The next feedback message (a message dict), waiting up to ``timeout`` seconds (forever
    /// with ``None``, not at all with ``0``); ``None`` on timeout or once the goal has ended
    /// and its feedback is read.
    #[pyo3(signature = (timeout=None))]
    fn feedback(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Option<Py<PyDict>>> {
        let inner = &self.inner;
        let next = interruptible(py, timeout, |chunk| {
            Ok(match py.detach(|| inner.feedback(chunk)) {
                Some(feedback) => Waited::Got(feedback),
                None if inner.status().is_terminal() => Waited::Ended,
                None => Waited::Nothing,
            })
        })?;
        next.map(|f| message_event(py, &self.pa, inner.action(), &f.metadata, &f.data)).transpose()
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        self.feedback(py, None)?.ok_or_else(|| PyStopIteration::new_err(()))
    }

    /// Waits up to ``timeout`` seconds (forever with ``None``) for the goal to end; its result
    /// as a message dict if it succeeded or was canceled (see ``status``). Raises
    /// ``ActionError`` if it was aborted or failed, ``TimeoutError`` if it has not ended.
    #[pyo3(signature = (timeout=None))]
    fn result(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Py<PyDict>> {
        let inner = &self.inner;
        let ended = interruptible(py, timeout, |chunk| {
            Ok(match py.detach(|| inner.result(chunk)) {
                Err(rust::ActionError::Timeout { .. }) => Waited::Nothing,
                outcome => Waited::Got(outcome),
            })
        })?;
        match ended {
            Some(Ok(result)) => message_event(py, &self.pa, inner.action(), &result.metadata, &result.data),
            Some(Err(e)) => Err(action_error(e)),
            None => Err(PyTimeoutError::new_err(format!(
                "goal {} of action `{}` did not end within {} s",
                inner.id(),
                inner.action(),
                timeout.unwrap_or_default()
            ))),
        }
    }

    /// Asks the server to cancel the goal: ``True`` if it took the request (the goal then ends
    /// ``canceled``), ``False`` if the goal had already ended.
    fn cancel(&self, py: Python<'_>) -> PyResult<bool> {
        let inner = &self.inner;
        py.detach(|| inner.cancel()).map_err(action_error)
    }

    fn __repr__(&self) -> String {
        format!("GoalHandle(action={:?}, id={:?}, status={:?})", self.inner.action(), self.inner.id(), self.status())
    }
}

//! `nerve.Node`: the dora-compatible Python node API.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use nerve_node::{Event, EventStream, InputId, Level, Message, Metadata, Next, Parameters};
use nerve_shm::sync::lock;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::arrow::PyArrow;
use crate::convert;
use crate::errors::{at, to_py};
use crate::outgoing::Outgoing;
use crate::params;
use crate::sample::{Lender, Sample, Target};
use crate::wait::{Waited, WokenTogether, deadline, interruptible};

/// A dataflow node.
///
/// ``Node()`` joins the dataflow that started this process; ``Node("id")`` joins a running
/// dataflow as its ``path: dynamic`` node ``id``. Construction returns once every node of the
/// dataflow is ready, so all start together.
#[pyclass(frozen, weakref, module = "nerve._nerve")]
pub(crate) struct Node {
    pub(crate) node: nerve_node::Node,
    events: Mutex<EventStream>,
    pa: PyArrow,
    woken: WokenTogether,
    ids: IdStrings,
    /// The callbacks of the timers made by `create_timer`, by the id of their ticks.
    timers: Mutex<Vec<(InputId, Py<PyAny>)>>,
    /// Whether `timers` holds any: spares a lock per event to the nodes without.
    has_timers: AtomicBool,
}

impl Lender for Node {
    fn send_sample(&self, sample: nerve_topic::Sample) -> Result<(), nerve_topic::SendError<nerve_topic::Sample>> {
        self.node.send_sample(sample)
    }
}

#[pymethods]
impl Node {
    #[new]
    #[pyo3(signature = (node_id=None))]
    fn new(py: Python<'_>, node_id: Option<String>) -> PyResult<Self> {
        let pa = PyArrow::import(py)?;
        forward_logging(py)?;
        let (node, events) = py
            .detach(|| match &node_id {
                Some(id) => nerve_node::Node::init(id),
                None => nerve_node::Node::init_from_env(),
            })
            .map_err(|e| to_py(&e))?;
        Ok(Self {
            node,
            events: Mutex::new(events),
            pa,
            woken: WokenTogether::default(),
            ids: IdStrings::default(),
            timers: Mutex::default(),
            has_timers: AtomicBool::new(false),
        })
    }

    /// The node's id.
    #[getter]
    fn id(&self) -> &str {
        self.node.id()
    }

    /// The id of the run this node belongs to (dora-rs's name for it).
    fn dataflow_id(&self) -> &str {
        self.node.run_id()
    }

    /// Times the node's restart policy started it again before this process: 0 for its first.
    fn restart_count(&self) -> u32 {
        self.node.restart_count()
    }

    /// Whether this process is a restart of the node (``restart_count() > 0``): a node that
    /// keeps state on disk may pick up where its previous process stopped.
    fn is_restart(&self) -> bool {
        self.node.restart_count() > 0
    }

    /// Waits for the next event (at most ``timeout`` seconds); ``None`` on timeout or once the
    /// stream has ended. The ticks of timers made by :meth:`create_timer` run their callbacks
    /// meanwhile.
    #[pyo3(signature = (timeout=None))]
    fn next(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Option<Py<PyDict>>> {
        let until = deadline(timeout)?;
        loop {
            let left = until.map(|d| d.saturating_duration_since(Instant::now()).as_secs_f64());
            let Some(e) = self.next_event(py, left)? else { return Ok(None) };
            if let Some(e) = self.tick(py, e)? {
                return self.event(py, e).map(Some);
            }
        }
    }

    /// The next event if one is waiting, else ``None`` (never blocks).
    fn try_recv(&self, py: Python<'_>) -> PyResult<Option<Py<PyDict>>> {
        loop {
            let Next::Event(e) = self.try_next(py) else { return Ok(None) };
            if let Some(e) = self.tick(py, e)? {
                return self.event(py, e).map(Some);
            }
        }
    }

    /// Calls ``callback()`` every ``period`` seconds on the node's clock (the run's simulated
    /// time under ``nerve run --sim-time``). Callbacks run in the thread that reads the node's
    /// events, while it waits for them (``for event in node``, :meth:`next`): their ticks are
    /// not events. A tick missed while the node was busy is skipped, not made up; what the
    /// callback raises comes out of the wait.
    fn create_timer(&self, py: Python<'_>, period: f64, callback: Py<PyAny>) -> PyResult<()> {
        if !(period.is_finite() && period > 0.0) {
            return Err(PyValueError::new_err(format!("period must be a positive number of seconds, got {period}")));
        }
        if !callback.bind(py).is_callable() {
            return Err(PyTypeError::new_err("callback must be callable, as callback()"));
        }
        // `/` is in no input id of a dataflow: the ticks cannot be taken for an input's.
        let id = format!("timer/{}", lock(&self.timers).len());
        let period = Duration::from_secs_f64(period);
        let id = py.detach(|| self.lock_events().add_timer(&id, period)).map_err(|e| to_py(&e))?;
        lock(&self.timers).push((id, callback));
        self.has_timers.store(true, Ordering::Release);
        Ok(())
    }

    /// Logs ``message`` at ``level`` (``"debug"``, ``"info"``, ``"warning"``, ``"error"``, or a
    /// ``logging`` level such as ``logging.INFO``) through nerve's log stream, which the
    /// node's log file and ``nerve logs`` show; ``info`` and up unless ``NERVE_LOG`` says
    /// otherwise.
    ///
    /// ``target`` says where in the code (a logger's name), ``fields`` adds structured context;
    /// both reach the readers of the run's logs (``dora/logs``, ``send_logs_as``).
    #[pyo3(signature = (level, message, target=None, fields=None))]
    fn log(
        &self,
        level: &Bound<'_, PyAny>,
        message: &str,
        target: Option<&str>,
        fields: Option<BTreeMap<String, String>>,
    ) -> PyResult<()> {
        self.node.log_with(log_level(level)?, message, target, &fields.unwrap_or_default());
        Ok(())
    }

    /// ``node.log("error", message)``.
    fn log_error(&self, message: &str) {
        self.node.log(Level::ERROR, message);
    }

    /// ``node.log("warn", message)``.
    fn log_warn(&self, message: &str) {
        self.node.log(Level::WARN, message);
    }

    /// ``node.log("info", message)``.
    fn log_info(&self, message: &str) {
        self.node.log(Level::INFO, message);
    }

    /// ``node.log("debug", message)``.
    fn log_debug(&self, message: &str) {
        self.node.log(Level::DEBUG, message);
    }

    /// ``node.log("trace", message)``.
    fn log_trace(&self, message: &str) {
        self.node.log(Level::TRACE, message);
    }

    /// A ``logging.Logger`` (``nerve.node.<id>``) whose records go to :meth:`log`.
    #[getter]
    fn logger<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        slf.py().import("nerve._log")?.call_method1("node_logger", (slf,))
    }

    /// Every event waiting right now, oldest first.
    fn drain(&self, py: Python<'_>) -> PyResult<Py<PyList>> {
        let list = PyList::empty(py);
        while let Some(e) = self.try_recv(py)? {
            list.append(e)?;
        }
        Ok(list.unbind())
    }

    /// Awaitable form of :meth:`next`, for asyncio programs.
    #[pyo3(signature = (timeout=None))]
    fn recv_async<'py>(slf: &Bound<'py, Self>, timeout: Option<f64>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let event_loop = py.import("asyncio")?.call_method0("get_running_loop")?;
        let next = slf.getattr("next")?;
        event_loop.call_method1("run_in_executor", (py.None(), next, timeout))
    }

    fn __iter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyDict>>> {
        self.next(py, None)
    }

    /// ``data`` as the ``pyarrow`` array a reader of ``output_id`` receives, made in this
    /// process, without shared memory: how nerve's operator host hands a message from one
    /// operator of the node to another. A ``pyarrow`` array is handed over as it is (no copy);
    /// other data is converted as :meth:`send_output` converts it.
    #[pyo3(name = "_handover")]
    fn handover(&self, py: Python<'_>, output_id: &str, data: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if self.pa.is_array(py, data)? {
            return Ok(data.clone().unbind());
        }
        let outgoing = Outgoing::classify(py, &self.pa, data, self.node.declared_type(output_id))
            .map_err(|e| at(py, e, &format!("output `{output_id}`")))?;
        let (array, extension) = outgoing.into_array(py)?;
        self.pa.import_as(py, &array, extension.as_ref())
    }

    /// Sends ``data`` on output ``output_id``.
    ///
    /// ``data`` may be ``bytes``, any buffer (a numpy array of numbers, a memoryview…), any
    /// ``pyarrow`` array, or a list or tuple of ints and floats (made into the array
    /// ``pyarrow.array`` would make, without calling it); other sequences go through
    /// ``pyarrow.array``, an empty one giving an empty array of the output's declared type.
    /// A numpy array of more than one dimension arrives with its shape, as Arrow's fixed-shape
    /// tensor (``arrow.fixed_shape_tensor``). A bare ``str``, ``dict``, number or ``None``
    /// raises ``TypeError``. The bytes are copied once, into shared memory; readers see them
    /// without a copy.
    #[pyo3(signature = (output_id, data, metadata=None))]
    fn send_output(
        &self,
        py: Python<'_>,
        output_id: &str,
        data: &Bound<'_, PyAny>,
        metadata: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        let params = params(metadata)?;
        let outgoing = Outgoing::classify(py, &self.pa, data, self.node.declared_type(output_id))
            .map_err(|e| at(py, e, &format!("output `{output_id}`")))?;
        let result = match outgoing {
            Outgoing::Bytes(b) => {
                let bytes = b.bind(py).as_bytes();
                py.detach(|| self.node.send_output_bytes(output_id, &params, bytes))
            }
            Outgoing::Primitive { data_type, items, buffer } => {
                let bytes = buffer.bytes();
                py.detach(|| {
                    self.node.send_primitive(output_id, &params, &data_type, items, bytes.len(), |dst| {
                        dst.copy_from_slice(bytes);
                    })
                })
            }
            Outgoing::Tensor { value_type, shape, buffer } => {
                let bytes = buffer.bytes();
                py.detach(|| {
                    self.node.send_tensor(output_id, &params, &value_type, &shape, bytes.len(), |dst| {
                        dst.copy_from_slice(bytes);
                    })
                })
            }
            Outgoing::Array(array, extension) => {
                py.detach(|| self.node.send_extension(output_id, &params, array.as_ref(), extension.as_ref()))
            }
        };
        result.map_err(|e| to_py(&e))
    }

    /// Lends ``data_len`` bytes of shared memory to fill in place; sent as a ``UInt8`` array
    /// when the ``with`` block ends (or on ``sample.send()``).
    ///
    /// ``numpy.frombuffer(sample, dtype=...)`` gives a writable array over the very memory
    /// readers will see: a large message is never copied.
    #[pyo3(signature = (output_id, data_len, metadata=None))]
    fn send_output_raw(
        slf: &Bound<'_, Self>,
        output_id: &str,
        data_len: usize,
        metadata: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Sample> {
        let params = params(metadata)?;
        let node = slf.get();
        let sample = slf.py().detach(|| node.node.loan(output_id, &params, data_len)).map_err(|e| to_py(&e))?;
        Ok(Sample::new(Target::of(slf), sample))
    }

    /// Tells readers now that these outputs are finished (they get ``INPUT_CLOSED``).
    fn close_outputs(&self, outputs: Vec<String>) -> PyResult<()> {
        let refs: Vec<&str> = outputs.iter().map(String::as_str).collect();
        self.node.close_outputs(&refs).map_err(|e| to_py(&e))
    }

    /// The value of parameter ``key``; ``ParameterError`` when the node has no such parameter.
    fn get_param<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        let value = self.node.params().require(key).map_err(|e| params::param_error(&e))?;
        params::to_py(py, &value)
    }

    /// Sets parameter ``key`` once every on-change callback accepts ``value``, and returns the value
    /// as stored (an int on a float parameter becomes a float). ``ParameterError`` on an unknown
    /// key, a value of another type, or a callback's refusal (its reason is the message).
    fn set_param<'py>(&self, py: Python<'py>, key: &str, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let value = params::from_py(key, value)?;
        let stored = self.node.params().set(key, value).map_err(|e| params::param_error(&e))?;
        params::to_py(py, &stored)
    }

    /// Declares parameter ``key`` with a default, and returns its value: the dataflow's when it
    /// declares the key with that type, else ``default``.
    fn declare_param<'py>(
        &self,
        py: Python<'py>,
        key: &str,
        default: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let default = params::from_py(key, default)?;
        let value = self.node.params().declare(key, default).map_err(|e| params::param_error(&e))?;
        params::to_py(py, &value)
    }

    /// Every parameter and its value, as a dict.
    #[pyo3(name = "params")]
    fn params_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        params::to_dict(py, &self.node.params())
    }

    /// Adds ``callback(key, value)``, run before any change is stored (from ``set_param`` or
    /// ``nerve param set``): ``None`` or ``True`` accepts, ``False`` or a ``str`` reason refuses,
    /// and an exception refuses with its text as the reason.
    fn on_param_change(&self, callback: Py<PyAny>) {
        params::on_change(&self.node.params(), callback);
    }

    /// The whole dataflow, as a dict.
    fn dataflow_descriptor<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, self.node.dataflow_descriptor())
    }

    /// This node's entry of the dataflow, as a dict.
    fn node_config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, self.node.node_config())
    }

    /// Now, in nanoseconds: wall time since the Unix epoch (as ``time.time_ns()``), or the
    /// run's simulated time under ``nerve run --sim-time``. Timers follow the same clock.
    fn now_ns(&self) -> u64 {
        self.node.clock().now_ns()
    }

    /// Whether no event is waiting right now (dora-rs's ``is_empty``): ``False`` once a message,
    /// a timer's tick or word from the runtime waits to be handled.
    fn is_empty(&self, py: Python<'_>) -> bool {
        // As `try_next`: a thread waiting on the stream is waited for without the GIL.
        match self.events.try_lock() {
            Ok(events) => events.is_empty(),
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner().is_empty(),
            Err(TryLockError::WouldBlock) => py.detach(|| self.lock_events().is_empty()),
        }
    }

    /// Now on the clock of ``event["metadata"]["timestamp"]`` (``CLOCK_MONOTONIC``, in
    /// nanoseconds): ``node.timestamp() - event["metadata"]["timestamp"]`` is how long ago the
    /// message was sent. dora-rs's ``timestamp()`` answers a ``datetime`` instead.
    fn timestamp(&self) -> u64 {
        nerve_node::monotonic_ns()
    }

    /// Now, in seconds (a float), on the same clock as :meth:`now_ns`.
    fn now(&self) -> f64 {
        // A float's 53 bits keep sub-microsecond precision for today's epoch times.
        self.node.clock().now_ns() as f64 / 1e9
    }

    /// Whether the run keeps simulated time (``nerve run --sim-time``).
    #[getter]
    fn sim_time(&self) -> bool {
        self.node.clock().is_simulated()
    }

    /// Sets the run's simulated time, in nanoseconds: every node's clock and timers follow.
    /// Raises ``NerveError`` in a run that keeps real time.
    fn set_sim_time(&self, ns: u64) -> PyResult<()> {
        self.node.clock().set_sim_time(ns).map_err(|e| to_py(&e))
    }

    /// How many received arrays had been imported into ``pyarrow`` before their message
    /// arrived, sparing the import on the latency path (see docs/performance.md).
    #[getter]
    fn arrays_imported_ahead(&self, py: Python<'_>) -> u64 {
        self.pa.imported_ahead(py)
    }

    /// How many received arrays this node sent on unchanged (a relay, an echo) with the data
    /// of the message they came in, sparing their export from ``pyarrow`` (see
    /// docs/performance.md).
    #[getter]
    fn arrays_sent_on(&self, py: Python<'_>) -> u64 {
        self.pa.sent_on(py)
    }

    fn __repr__(&self) -> String {
        format!("Node(id={:?})", self.node.id())
    }
}

impl Node {
    /// Waits for the next event, timer ticks included.
    fn next_event(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Option<Event>> {
        // An event already waiting (messages of several inputs that came together) is handed
        // over at once: the yield and the imports ahead below are for the idle time before the
        // next message, and before this one they would only delay it.
        if let Next::Event(e) = self.try_next(py) {
            return Ok(Some(e));
        }
        // Done now, with warm caches, so that a message at a familiar place finds its array
        // ready when it wakes this node (see `prebuilt`); but after the readers woken with this
        // one had their turn.
        self.woken.yield_first(py);
        self.pa.prepare(py)?;
        let event = interruptible(py, timeout, |chunk| {
            let next = py.detach(|| {
                let mut events = self.lock_events();
                let next = events.next_event(Some(chunk));
                self.woken.set(events.take_slept());
                next
            });
            Ok(match next {
                Next::Event(e) => Waited::Got(e),
                Next::End => Waited::Ended,
                Next::Timeout => Waited::Nothing,
            })
        })?;
        Ok(event)
    }

    /// Runs the callback of a timer made by `create_timer` for one of its ticks; any other
    /// event back, to be handed out.
    fn tick(&self, py: Python<'_>, e: Event) -> PyResult<Option<Event>> {
        if !self.has_timers.load(Ordering::Acquire) {
            return Ok(Some(e));
        }
        if let Event::Input(Message { id, .. }) = &e {
            let callback = lock(&self.timers).iter().find(|(t, _)| t == id).map(|(_, c)| c.clone_ref(py));
            if let Some(callback) = callback {
                callback.call0(py)?;
                return Ok(None);
            }
        }
        Ok(Some(e))
    }

    fn lock_events(&self) -> MutexGuard<'_, EventStream> {
        lock(&self.events)
    }

    /// The next event if one is waiting, without waiting. The look keeps the GIL when no other
    /// thread is waiting on the stream: it never blocks, and letting go of the GIL and taking it
    /// back cost more than the look itself, on every message of a busy stream. A thread waiting
    /// on the stream holds it for up to [`crate::wait`]'s short waits; the look then waits its
    /// turn with the GIL released, as every wait here does.
    fn try_next(&self, py: Python<'_>) -> Next {
        match self.events.try_lock() {
            Ok(mut events) => events.try_recv(),
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner().try_recv(),
            Err(TryLockError::WouldBlock) => py.detach(|| self.lock_events().try_recv()),
        }
    }

    fn event(&self, py: Python<'_>, e: Event) -> PyResult<Py<PyDict>> {
        // An input's dict is made by `input_event`; no other dict is made first on its way.
        let (kind, id, error) = match e {
            Event::Input(Message { id, metadata, data, .. }) => {
                #[cfg(feature = "profile-stages")]
                return crate::profile::input_event(py, self.ids.get(py, &id), &metadata, || {
                    self.pa.received(py, &data, metadata.extension.as_deref())
                });
                #[cfg(not(feature = "profile-stages"))]
                {
                    let value = self.pa.received(py, &data, metadata.extension.as_deref())?;
                    return input_event(py, self.ids.get(py, &id), &metadata, value);
                }
            }
            Event::InputClosed { id } => (intern!(py, "INPUT_CLOSED"), Some(self.ids.get(py, &id)), None),
            Event::InputRecovered { id } => (intern!(py, "INPUT_RECOVERED"), Some(self.ids.get(py, &id)), None),
            Event::Stop => (intern!(py, "STOP"), None, None),
            Event::Error(msg) => (intern!(py, "ERROR"), None, Some(msg)),
        };
        let d = PyDict::new(py);
        d.set_item(intern!(py, "type"), kind)?;
        if let Some(id) = id {
            d.set_item(intern!(py, "id"), id)?;
        }
        if let Some(msg) = error {
            d.set_item(intern!(py, "error"), msg)?;
        }
        Ok(d.unbind())
    }
}

/// The Python strings of a node's input ids, made once each: an event's id is then the same
/// `str` object every time, not a new one per message. A node's inputs are fixed when it
/// starts, so the list stays as short as its inputs.
#[derive(Default)]
struct IdStrings(Mutex<Vec<(InputId, Py<PyString>)>>);

impl IdStrings {
    fn get<'py>(&self, py: Python<'py>, id: &InputId) -> Bound<'py, PyString> {
        // No Python runs while the lock is held, so holding the GIL while taking it is safe.
        let mut ids = lock(&self.0);
        if let Some((_, s)) = ids.iter().find(|(known, _)| known == id) {
            return s.bind(py).clone();
        }
        let s = PyString::intern(py, id);
        ids.push((id.clone(), s.clone().unbind()));
        s
    }
}

/// The dict of an ``INPUT`` event (a node's input, or a topic's message).
pub(crate) fn input_event<'py>(
    py: Python<'py>,
    id: impl IntoPyObject<'py>,
    metadata: &Metadata,
    value: Py<PyAny>,
) -> PyResult<Py<PyDict>> {
    let d = PyDict::new(py);
    d.set_item(intern!(py, "type"), intern!(py, "INPUT"))?;
    d.set_item(intern!(py, "id"), id)?;
    d.set_item(intern!(py, "value"), value)?;
    let meta = convert::map_to_dict(py, &metadata.parameters)?;
    meta.set_item(intern!(py, "timestamp"), metadata.timestamp)?;
    d.set_item(intern!(py, "metadata"), meta)?;
    Ok(d.unbind())
}

pub(crate) fn params(metadata: Option<&Bound<'_, PyDict>>) -> PyResult<Parameters> {
    metadata.map_or_else(|| Ok(Parameters::new()), convert::dict_to_map)
}

/// Under `nerve run`, Python `logging` records reach the run's log as records of the node, with
/// their level and logger: the node's `min_log_level` filters them, and the readers of the
/// run's logs receive them. A node started by hand keeps the logging setup of its own program.
fn forward_logging(py: Python<'_>) -> PyResult<()> {
    if !nerve_node::started_by_nerve() {
        return Ok(());
    }
    py.import("nerve._log")?.call_method0("forward_root")?;
    Ok(())
}

/// One Python `logging` record, as a record of the node this process runs.
#[pyfunction]
#[pyo3(signature = (level, message, target=None))]
pub(crate) fn log_record(level: &Bound<'_, PyAny>, message: &str, target: Option<&str>) -> PyResult<()> {
    nerve_node::log_as_this_process(log_level(level)?, message, target, &BTreeMap::new());
    Ok(())
}

/// A log level given as ``logging``'s number (``logging.INFO``, 20) or its name (``"info"``,
/// ``"WARNING"``), as `tracing`'s; ``CRITICAL`` is `ERROR`, below ``DEBUG`` is `TRACE`.
fn log_level(level: &Bound<'_, PyAny>) -> PyResult<Level> {
    if let Ok(n) = level.extract::<i64>() {
        return Ok(match n {
            40.. => Level::ERROR,
            30..=39 => Level::WARN,
            20..=29 => Level::INFO,
            10..=19 => Level::DEBUG,
            _ => Level::TRACE,
        });
    }
    let name: String = level.extract().map_err(|_| PyTypeError::new_err("level must be a str or an int"))?;
    match name.to_ascii_lowercase().as_str() {
        "critical" | "error" => Ok(Level::ERROR),
        "warning" | "warn" => Ok(Level::WARN),
        "info" => Ok(Level::INFO),
        "debug" => Ok(Level::DEBUG),
        "trace" => Ok(Level::TRACE),
        _ => Err(PyValueError::new_err(format!(
            "unknown log level `{name}`: one of debug, info, warning, error, critical (or a logging level number)"
        ))),
    }
}

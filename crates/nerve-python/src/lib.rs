//! The `nerve._nerve` extension module: the Python node API and the `nerve` command.
//!
//! Received values are `pyarrow` arrays imported through the Arrow C data interface from
//! buffers that point into shared memory: no byte is copied, and the shared block returns to
//! its pool when Python drops the last reference to the array.

mod action;
mod arrow;
mod at_exit;
mod convert;
mod errors;
mod msg;
mod msg_value;
mod node;
mod outgoing;
mod params;
mod prebuilt;
#[cfg(feature = "profile-stages")]
mod profile;
mod sample;
mod service;
mod tf;
mod topic;
mod wait;

use pyo3::prelude::*;

/// Runs the `nerve` command line with `argv` (program name first); returns its exit code.
#[pyfunction]
fn run_cli(py: Python<'_>, argv: Vec<String>) -> i32 {
    // The run may last for hours: other Python threads (if any) keep running meanwhile.
    let code = py.detach(|| nerve_cli::main(argv));
    // The CLI handles Ctrl-C itself (a graceful stop); Python's own handler saw the same
    // signal and must not turn it into a KeyboardInterrupt afterwards.
    if let Err(e) = py.check_signals()
        && !e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py)
    {
        e.restore(py);
    }
    code
}

/// `CLOCK_MONOTONIC` in nanoseconds, the clock of every message's `timestamp`.
#[pyfunction]
fn monotonic_ns() -> u64 {
    nerve_node::monotonic_ns()
}

#[pymodule]
fn _nerve(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Without it, what nerve logs (a link refused, a message skipped) would reach no one.
    nerve_cli::logging::init(nerve_cli::logging::LIBRARY_DEFAULT);
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    at_exit::register(m)?;
    m.add_class::<node::Node>()?;
    m.add_class::<sample::Sample>()?;
    m.add_class::<sample::SampleBuffer>()?;
    m.add_class::<topic::Publisher>()?;
    m.add_class::<topic::Subscriber>()?;
    service::register(m)?;
    tf::register(m)?;
    action::register(m)?;
    msg::register(m)?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    m.add_function(wrap_pyfunction!(monotonic_ns, m)?)?;
    m.add_function(wrap_pyfunction!(node::log_record, m)?)?;
    errors::register(m)?;
    Ok(())
}

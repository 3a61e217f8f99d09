//! The run's Unix socket: each node's control connection, and tools' one-request connections
//! (`nerve list`, `nerve stop`, `nerve param`), each served on a thread of its own and turned
//! into events for the event loop.

use std::io::BufReader;
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::time::Duration;

use nerve_message::frame;
use nerve_message::graph_edit::GraphEdit;
use nerve_message::node_to_runtime::NodeRequest;
use nerve_message::param::{ParamError, ParamOp};
use nerve_message::runtime_to_node::RuntimeMessage;

use crate::event::Ev;
use crate::params::ANSWER_TIMEOUT;

pub(super) fn spawn_acceptor(listener: UnixListener, tx: Sender<Ev>, done: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            if done.load(Ordering::SeqCst) {
                return;
            }
            let Ok(stream) = stream else { continue };
            let tx = tx.clone();
            std::thread::spawn(move || serve_connection(stream, &tx));
        }
    });
}

fn serve_connection(stream: UnixStream, tx: &Sender<Ev>) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    // A peer that connects and says nothing must not hold a thread forever.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let first = frame::read::<NodeRequest>(&mut reader);
    let _ = stream.set_read_timeout(None);
    let (node_id, nerve_version, pid) = match first {
        Ok(NodeRequest::Register { node_id, nerve_version, pid }) => (node_id, nerve_version, pid),
        Ok(request @ (NodeRequest::Inspect | NodeRequest::StopRun)) => {
            answer_tool(stream, tx, request == NodeRequest::StopRun);
            return;
        }
        Ok(NodeRequest::Param { node, op }) => {
            answer_param(stream, tx, node, op);
            return;
        }
        Ok(NodeRequest::Edit(edit)) => {
            answer_edit(stream, tx, edit);
            return;
        }
        _ => {
            tracing::warn!("ignoring a control connection that did not start with a registration");
            return;
        }
    };
    let (accept_tx, accept_rx) = mpsc::channel();
    if tx.send(Ev::Register { stream, node_id, version: nerve_version, pid, accept: accept_tx }).is_err() {
        return;
    }
    let Ok(Some((index, generation))) = accept_rx.recv() else {
        return;
    };
    while let Ok(req) = frame::read::<NodeRequest>(&mut reader) {
        if tx.send(Ev::Request(index, generation, req)).is_err() {
            return;
        }
    }
    let _ = tx.send(Ev::Disconnected(index, generation));
}

/// Sends a tool the run's status (after asking the run to stop, for `stop`).
fn answer_tool(mut stream: UnixStream, tx: &Sender<Ev>, stop: bool) {
    let (reply, status) = mpsc::channel();
    if tx.send(Ev::Tool { stop, reply }).is_err() {
        return;
    }
    if let Ok(status) = status.recv_timeout(Duration::from_secs(5)) {
        let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
        let _ = frame::write(&mut stream, &RuntimeMessage::Status(Box::new(status)));
    }
}

/// Sends a tool a node's answer to its parameter request, or why there is none.
fn answer_param(mut stream: UnixStream, tx: &Sender<Ev>, node: String, op: ParamOp) {
    let (reply, answer) = mpsc::channel();
    if tx.send(Ev::Param { node: node.clone(), op, reply }).is_err() {
        return;
    }
    // The event loop fails a request its node leaves unanswered at ANSWER_TIMEOUT; the margin
    // only covers a loop that is itself slow.
    let waited = ANSWER_TIMEOUT + Duration::from_secs(1);
    let answer = answer.recv_timeout(waited).unwrap_or_else(|_| {
        Err(ParamError::NoAnswer { node, waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX) })
    });
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    if let Err(e) = frame::write(&mut stream, &RuntimeMessage::Param { answer }) {
        tracing::debug!(error = %e, "the tool that asked for a parameter is gone");
    }
}

/// Makes a tool's change to the running graph and tells it what was done, or why not.
fn answer_edit(mut stream: UnixStream, tx: &Sender<Ev>, edit: GraphEdit) {
    let (reply, answer) = mpsc::channel();
    if tx.send(Ev::Edit { edit, by_control: false, reply }).is_err() {
        return;
    }
    // The event loop answers at once: an added node's process is started, not waited for.
    let answer = answer
        .recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|_| Err("the run did not answer within 10 s".to_owned()));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    if let Err(e) = frame::write(&mut stream, &RuntimeMessage::Edited { answer }) {
        tracing::debug!(error = %e, "the tool that changed the graph is gone");
    }
}

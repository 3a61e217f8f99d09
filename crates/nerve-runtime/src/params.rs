//! Tools' parameter requests on their way to a node and back.
//!
//! The node holds its parameters and runs its callbacks, so every request goes to its process.
//! The event loop only forwards a request and files who waits for the answer: it never waits
//! for a node itself. A node that does not answer in time, or goes away, fails its requests.

use std::collections::HashMap;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use nerve_message::param::{ParamAnswer, ParamError};

/// How long a node gets to answer (its callbacks included).
pub(crate) const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// A forwarded request waiting for its node.
struct Pending {
    node: usize,
    reply: Sender<ParamAnswer>,
    deadline: Instant,
}

/// The requests forwarded to nodes and not answered yet, by request id.
#[derive(Default)]
pub(crate) struct ParamRelay {
    next_id: u64,
    pending: HashMap<u64, Pending>,
}

impl ParamRelay {
    /// Files a request about to be sent to node `node`; returns its id.
    pub(crate) fn open(&mut self, node: usize, reply: Sender<ParamAnswer>) -> u64 {
        self.next_id += 1;
        self.pending.insert(self.next_id, Pending { node, reply, deadline: Instant::now() + ANSWER_TIMEOUT });
        self.next_id
    }

    /// Hands node `node`'s answer to request `id` to the tool waiting for it.
    pub(crate) fn answer(&mut self, node: usize, id: u64, answer: ParamAnswer) {
        match self.pending.remove(&id) {
            Some(p) if p.node == node => {
                // The tool may have hung up meanwhile; the answer then has nobody to go to.
                let _ = p.reply.send(answer);
            }
            Some(p) => {
                tracing::warn!(id, node, "a node answered another node's parameter request; ignored");
                self.pending.insert(id, p);
            }
            None => tracing::debug!(id, "parameter answer after its deadline; dropped"),
        }
    }

    /// When the oldest request's node runs out of time, if any request waits.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.pending.values().map(|p| p.deadline).min()
    }

    /// Fails the requests whose node did not answer in time; `id_of` names a node.
    pub(crate) fn expire(&mut self, now: Instant, id_of: impl Fn(usize) -> String) {
        self.fail_where(
            |p| p.deadline <= now,
            |p| ParamError::NoAnswer {
                node: id_of(p.node),
                waited_ms: u64::try_from(ANSWER_TIMEOUT.as_millis()).unwrap_or(u64::MAX),
            },
        );
    }

    /// Node `node` (id `id`) lost its process: its requests fail now rather than at the deadline.
    pub(crate) fn node_gone(&mut self, node: usize, id: &str, state: &str) {
        self.fail_where(
            |p| p.node == node,
            |_| ParamError::NotRunning { node: id.to_owned(), state: state.to_owned() },
        );
    }

    fn fail_where(&mut self, which: impl Fn(&Pending) -> bool, error: impl Fn(&Pending) -> ParamError) {
        let ids: Vec<u64> = self.pending.iter().filter(|(_, p)| which(p)).map(|(id, _)| *id).collect();
        for id in ids {
            if let Some(p) = self.pending.remove(&id) {
                let _ = p.reply.send(Err(error(&p)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    #[test]
    fn answers_reach_their_tool_and_the_rest_fail() {
        let mut relay = ParamRelay::default();
        let (tx, rx) = mpsc::channel();
        let a = relay.open(0, tx.clone());
        let b = relay.open(1, tx.clone());
        let c = relay.open(1, tx);
        relay.answer(1, a, Ok(Default::default())); // not node 1's request: kept
        relay.answer(0, a, Ok(Default::default()));
        assert_eq!(rx.try_recv(), Ok(Ok(Default::default())));
        relay.node_gone(1, "b", "finished");
        let gone = |answer| matches!(answer, Ok(Err(ParamError::NotRunning { .. })));
        assert!(gone(rx.try_recv()) && gone(rx.try_recv()));
        relay.answer(1, b, Ok(Default::default())); // too late: dropped
        relay.answer(1, c, Ok(Default::default()));
        assert!(rx.try_recv().is_err());
        assert_eq!(relay.next_deadline(), None, "nothing pending: the event loop has no reason to wake");
        let (tx, rx) = mpsc::channel();
        let opened = Instant::now();
        relay.open(2, tx);
        let due = relay.next_deadline().expect("a pending request has a deadline");
        assert!(due >= opened + ANSWER_TIMEOUT && due <= Instant::now() + ANSWER_TIMEOUT);
        relay.expire(due, |_| "slow".to_owned());
        assert!(matches!(rx.try_recv(), Ok(Err(ParamError::NoAnswer { .. }))));
        assert_eq!(relay.next_deadline(), None);
    }
}

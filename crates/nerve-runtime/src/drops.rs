//! Messages lost by `drop_oldest` inputs, made visible: a warning in the run's log at most once
//! per interval per input, and a total per input when the run ends.

use std::sync::Arc;
use std::time::{Duration, Instant};

use nerve_message::channel_table::{InputChannel, Policy};
use nerve_shm::inbox::Inbox;
use nerve_spec::Dataflow;

use crate::plan::Plan;

/// Shortest time between two warnings about one input.
const REPORT_EVERY: Duration = Duration::from_secs(5);

/// One drop-oldest input being watched.
struct Watched {
    node: usize,
    node_id: String,
    input: String,
    queue: usize,
    capacity: usize,
    reported: u64,
}

/// The drop-oldest inputs of a run and what was said about them.
pub(crate) struct DropWatch {
    inputs: Vec<Watched>,
    next: Instant,
}

impl DropWatch {
    pub(crate) fn new(plan: &Plan, df: &Dataflow) -> Self {
        let mut inputs = Vec::new();
        for (node, channels) in plan.inputs.iter().enumerate() {
            for c in channels {
                if let InputChannel::Shm { id, queue, .. } = c
                    && let Some(shape) = plan.inboxes[node].get(*queue)
                    && shape.policy == Policy::DropOldest
                {
                    inputs.push(Watched {
                        node,
                        node_id: df.nodes[node].id.clone(),
                        input: id.clone(),
                        queue: *queue,
                        capacity: shape.capacity,
                        reported: 0,
                    });
                }
            }
        }
        Self { inputs, next: Instant::now() + REPORT_EVERY }
    }

    /// When [`DropWatch::check`] next has something to look at (never, without drop-oldest inputs).
    pub(crate) fn next_check(&self) -> Option<Instant> {
        (!self.inputs.is_empty()).then_some(self.next)
    }

    /// Warns about inputs that dropped messages since the last warning, if it is time.
    pub(crate) fn check(&mut self, inboxes: &[Arc<Inbox>]) {
        let now = Instant::now();
        if now < self.next || self.inputs.is_empty() {
            return;
        }
        self.next = now + REPORT_EVERY;
        for w in &mut self.inputs {
            let dropped = inboxes[w.node].ring(w.queue).dropped();
            if dropped > w.reported {
                tracing::warn!(
                    node = %w.node_id,
                    input = %w.input,
                    "{} messages dropped in the last {}s: the queue of {} was full (drop_oldest); a slower reader than its producer",
                    dropped - w.reported,
                    REPORT_EVERY.as_secs(),
                    w.capacity,
                );
                w.reported = dropped;
            }
        }
    }

    /// Every input that dropped messages during the run: (node, input, messages).
    pub(crate) fn totals(&self, inboxes: &[Arc<Inbox>]) -> Vec<(String, String, u64)> {
        self.inputs
            .iter()
            .map(|w| (w.node_id.clone(), w.input.clone(), inboxes[w.node].ring(w.queue).dropped()))
            .filter(|(_, _, n)| *n > 0)
            .collect()
    }
}

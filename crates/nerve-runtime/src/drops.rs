//! Messages lost by `drop_oldest` inputs, totalled per input when the run ends.
//!
//! A run says nothing while such an input drops: the dataflow chose to lose the oldest messages
//! there (nerve's own default never drops), so a warning would only repeat that choice. The
//! count is live in `nerve list` and `nerve node info`, and the total is reported once, here.

use std::sync::Arc;

use nerve_message::channel_table::{InputChannel, Policy};
use nerve_shm::inbox::Inbox;
use nerve_spec::Dataflow;

use crate::plan::Plan;

/// Every `drop_oldest` input that dropped messages during the run: (node, input, messages).
pub(crate) fn totals(plan: &Plan, df: &Dataflow, inboxes: &[Arc<Inbox>]) -> Vec<(String, String, u64)> {
    let mut dropped = Vec::new();
    for (node, channels) in plan.inputs.iter().enumerate() {
        for c in channels {
            if let InputChannel::Shm { id, queue, .. } = c
                && plan.inboxes[node].get(*queue).is_some_and(|shape| shape.policy == Policy::DropOldest)
            {
                let n = inboxes[node].ring(*queue).dropped();
                if n > 0 {
                    dropped.push((df.nodes[node].id.clone(), id.clone(), n));
                }
            }
        }
    }
    dropped
}

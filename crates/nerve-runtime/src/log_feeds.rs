//! The log entries nodes of the run read, published on the run's topics
//! ([`nerve_message::log_record`]): each `dora/logs` input has its own feed (its level, its
//! node, never the reader's own entries), and each output that carries a node's log
//! (`send_logs_as`: its records as dora-rs's JSON; `send_stdout_as`: its printed lines) one
//! that every reader of the output reads.

use std::sync::Arc;
use std::time::{Duration, Instant};

use nerve_message::log_record;
use nerve_spec::logs::LogLevel;
use nerve_spec::{Dataflow, InputSource};
use nerve_topic::arrow_array::{ArrayRef, StringArray};
use nerve_topic::{Parameters, Publisher, PublisherOptions, RunScope, Scope};

use crate::error::RuntimeError;
use crate::logs::{LogEntry, Stream};

/// Which entries a feed carries.
#[derive(Debug)]
enum Filter {
    /// A `dora/logs` input of node `reader`.
    Input { reader: String, level: LogLevel, node: Option<String> },
    /// `send_logs_as` of `node`.
    Records { node: String },
    /// `send_stdout_as` of `node`.
    Printed { node: String },
}

impl Filter {
    fn wants(&self, entry: &LogEntry) -> bool {
        match self {
            Self::Input { reader, level, node } => {
                entry.node != *reader && entry.level >= *level && node.as_ref().is_none_or(|n| *n == entry.node)
            }
            Self::Records { node } => entry.node == *node && entry.is_record(),
            Self::Printed { node } => entry.node == *node && !entry.is_record() && entry.stream != Stream::Nerve,
        }
    }
}

/// One feed: what it carries, the nodes that read it, and its topic.
struct Feed {
    filter: Filter,
    readers: Vec<String>,
    publisher: Publisher,
}

/// The run's log feeds.
pub struct LogFeeds {
    dataflow_id: String,
    feeds: Vec<Feed>,
}

impl LogFeeds {
    /// The feeds of `df`'s log inputs and log outputs, in run `run`'s scope; `None` when no node
    /// reads any log.
    ///
    /// # Errors
    /// [`RuntimeError::LogFeed`] when a feed's topic cannot be published.
    pub fn new(df: &Dataflow, run: &str, dataflow_id: &str) -> Result<Option<Arc<Self>>, RuntimeError> {
        let mut wanted = Vec::new();
        for node in &df.nodes {
            for input in &node.inputs {
                if let InputSource::Logs { level, node: from } = &input.source {
                    let filter = Filter::Input { reader: node.id.clone(), level: *level, node: from.clone() };
                    wanted.push((filter, vec![node.id.clone()], log_record::input_feed(&node.id, &input.id)));
                }
            }
            let outputs = [(&node.logs.send_logs_as, true), (&node.logs.send_stdout_as, false)];
            for (output, records) in outputs {
                let Some(output) = output else { continue };
                let node_id = node.id.clone();
                let filter =
                    if records { Filter::Records { node: node_id } } else { Filter::Printed { node: node_id } };
                let mut readers: Vec<String> =
                    df.readers_of(&node.id, output).into_iter().map(|(reader, _)| reader).collect();
                readers.dedup();
                wanted.push((filter, readers, log_record::output_feed(&node.id, output)));
            }
        }
        if wanted.is_empty() {
            return Ok(None);
        }
        let options = PublisherOptions { scope: Scope::Host, run: RunScope::Run(run.to_owned()), ..Default::default() };
        let feeds = wanted
            .into_iter()
            .map(|(filter, readers, topic)| {
                Publisher::new(&topic, options.clone())
                    .map(|publisher| Feed { filter, readers, publisher })
                    .map_err(|source| RuntimeError::LogFeed { topic, source })
            })
            .collect::<Result<_, _>>()?;
        Ok(Some(Arc::new(Self { dataflow_id: dataflow_id.to_owned(), feeds })))
    }

    /// Waits up to `timeout` until every feed reaches its readers among the nodes `ready` (each
    /// subscribes as it starts), so that nothing logged after the start is missed; a feed
    /// still short of them by then is reported, and the run goes on.
    pub fn wait_for_readers(&self, ready: &[&str], timeout: Duration) {
        let deadline = Instant::now() + timeout;
        for feed in &self.feeds {
            let expected = feed.readers.iter().filter(|r| ready.contains(&r.as_str())).count();
            let left = deadline.saturating_duration_since(Instant::now());
            if !feed.publisher.wait_for_subscribers(expected, left) {
                tracing::warn!(
                    topic = feed.publisher.topic(),
                    expected,
                    "a node reading logs did not subscribe in time"
                );
            }
        }
    }

    /// Publishes `entry` on every feed that wants it: one string, a record as JSON, a printed
    /// line as it was printed.
    pub fn publish(&self, entry: &LogEntry) {
        let mut json = None;
        for Feed { filter, publisher, .. } in &self.feeds {
            if !filter.wants(entry) {
                continue;
            }
            let text = match filter {
                Filter::Printed { .. } => entry.message.clone(),
                _ => json.get_or_insert_with(|| entry.to_json(&self.dataflow_id)).clone(),
            };
            let value: ArrayRef = Arc::new(StringArray::from(vec![text]));
            // Not a warning: that would be a log entry of its own, for the same feed.
            if let Err(e) = publisher.send(&value, &Parameters::default()) {
                tracing::debug!(error = %e, topic = publisher.topic(), "cannot publish a log entry");
            }
        }
    }
}

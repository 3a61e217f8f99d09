//! The tools' side: `nerve check`, `nerve start`, and the cluster half of `nerve list`,
//! `nerve stop` and `nerve logs` ask the coordinator through a [`Cluster`].

use std::time::Duration;

use nerve_message::graph_edit::GraphEdit;
use nerve_runtime::param::{ParamAnswer, ParamOp};
use nerve_spec::Dataflow;
use zenoh::Wait;

use crate::error::ClusterError;
use crate::keys;
use crate::net::{NetOptions, Role};
use crate::protocol::{self, ClusterStatus, CoordinatorRequest, DataflowStatus, LogChunk, StartOptions, Started};

/// How long the coordinator may take over answers that need no work (a list asks every
/// machine).
const ANSWER: Duration = Duration::from_secs(15);

/// A connection to the coordinator.
pub struct Cluster {
    session: zenoh::Session,
    endpoint: String,
    /// The process's session, open while this lives.
    _network: std::sync::Arc<nerve_topic::session::Network>,
}

impl Cluster {
    /// Connects to the coordinator that `net` names.
    ///
    /// # Errors
    /// [`ClusterError::NoCoordinator`] when nothing answers there.
    pub fn connect(net: &NetOptions) -> Result<Self, ClusterError> {
        let endpoint = net.coordinator_endpoint()?;
        let (network, _) = net.open(Role::Tool)?;
        Ok(Self { session: network.session().clone(), endpoint, _network: network })
    }

    /// The coordinator's endpoint.
    #[must_use]
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn ask<A: serde::de::DeserializeOwned>(
        &self,
        request: &CoordinatorRequest,
        timeout: Duration,
    ) -> Result<A, ClusterError> {
        protocol::ask(
            &self.session,
            keys::COORDINATOR,
            &format!("the coordinator at {}", self.endpoint),
            request,
            timeout,
        )
    }

    /// The coordinator and its daemons.
    ///
    /// # Errors
    /// When the coordinator does not answer.
    pub fn check(&self) -> Result<ClusterStatus, ClusterError> {
        self.ask(&CoordinatorRequest::Check, ANSWER)
    }

    /// Runs `dataflow` on the cluster under id `uuid` (see [`new_dataflow_id`]); returns once
    /// every node on every machine started.
    ///
    /// # Errors
    /// Why it could not start: a machine without a daemon, a node that failed to start, a
    /// machine that did not answer.
    pub fn start(
        &self,
        dataflow: Dataflow,
        name: Option<String>,
        uuid: String,
        options: StartOptions,
    ) -> Result<Started, ClusterError> {
        let timeout = Duration::from_millis(options.ready_timeout_ms) + Duration::from_secs(40);
        let request = CoordinatorRequest::Start {
            dataflow: Box::new(dataflow),
            name,
            host: nerve_topic::network::host_id(),
            uuid,
            options,
        };
        self.ask(&request, timeout)
    }

    /// Stops a dataflow (its name, or its uuid or a prefix of it).
    ///
    /// # Errors
    /// An unknown dataflow.
    pub fn stop(&self, dataflow: &str) -> Result<DataflowStatus, ClusterError> {
        self.ask(&CoordinatorRequest::Stop { dataflow: dataflow.to_owned() }, ANSWER)
    }

    /// Every dataflow the coordinator knows, running or ended.
    ///
    /// # Errors
    /// When the coordinator does not answer.
    pub fn list(&self) -> Result<Vec<DataflowStatus>, ClusterError> {
        self.ask(&CoordinatorRequest::List, ANSWER)
    }

    /// A node's output from `offset` on, read on its machine.
    ///
    /// # Errors
    /// An unknown dataflow or node, or a machine that does not answer.
    pub fn logs(&self, dataflow: &str, node: &str, offset: u64) -> Result<LogChunk, ClusterError> {
        self.ask(&CoordinatorRequest::Logs { dataflow: dataflow.to_owned(), node: node.to_owned(), offset }, ANSWER)
    }

    /// Reads or sets the parameters of node `node` of a running dataflow (`dataflow`, when
    /// several have such a node), on the node's machine; `None` when no running dataflow of the
    /// cluster has it.
    ///
    /// # Errors
    /// Several dataflows have the node, or its machine does not answer.
    pub fn param(&self, dataflow: Option<&str>, node: &str, op: ParamOp) -> Result<Option<ParamAnswer>, ClusterError> {
        let request = CoordinatorRequest::Param { dataflow: dataflow.map(str::to_owned), node: node.to_owned(), op };
        self.ask(&request, ANSWER)
    }

    /// Changes the graph of running dataflow `uuid` on the machine concerned; returns what was
    /// done.
    ///
    /// # Errors
    /// [`ClusterError::Refused`] with why not, or the machine does not answer.
    pub fn edit(&self, uuid: &str, edit: GraphEdit) -> Result<String, ClusterError> {
        self.ask(&CoordinatorRequest::Edit { dataflow: uuid.to_owned(), edit }, ANSWER)
    }

    /// Stops every dataflow, every daemon and the coordinator.
    ///
    /// # Errors
    /// When the coordinator does not answer.
    pub fn destroy(&self) -> Result<(), ClusterError> {
        self.ask(&CoordinatorRequest::Destroy, ANSWER)
    }

    /// Hands every line the nodes of dataflow `uuid` write, on any machine, to `line` (node id,
    /// text), for as long as the returned subscriber lives.
    ///
    /// # Errors
    /// When the subscription cannot be declared.
    pub fn follow_logs(
        &self,
        uuid: &str,
        line: impl Fn(&str, &str) + Send + Sync + 'static,
    ) -> Result<zenoh::pubsub::Subscriber<()>, ClusterError> {
        Ok(self
            .session
            .declare_subscriber(keys::log(uuid, "*"))
            .callback(move |sample| {
                let node = keys::node_of_log(sample.key_expr().as_str()).unwrap_or("?");
                line(node, &String::from_utf8_lossy(&sample.payload().to_bytes()));
            })
            .wait()?)
    }
}

/// A fresh dataflow id.
#[must_use]
pub fn new_dataflow_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

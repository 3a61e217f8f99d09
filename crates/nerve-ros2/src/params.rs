//! nerve nodes' parameters behind ROS 2's parameter services.
//!
//! Each node of a dataflow running on this host is a ROS 2 node of the same name (`-` and other
//! characters ROS 2 refuses become `_`; namespaced by its run when two runs have a node of that
//! name) with the six `rcl_interfaces` services a ROS 2 node offers. They read and set the nerve
//! node's parameters live, as `nerve param` does: `ros2 param get /controller speed` asks the
//! node, and a value its on-change callback refuses makes the ROS 2 set fail with the callback's
//! reason.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::pin::Pin;
use std::time::Duration;

use futures::channel::oneshot;
use futures::{Stream, StreamExt};
use nerve_runtime::inspect::{self, RunStatus};
use nerve_runtime::param::{ParamOp, ParamValue};
use ros2_client::parameters::{ParameterDescriptor, raw};
use ros2_client::qos::History;
use ros2_client::rcl_interfaces::{
    DescribeParametersRequest, DescribeParametersResponse, GetParameterTypesRequest, GetParameterTypesResponse,
    GetParametersRequest, GetParametersResponse, ListParametersRequest, ListParametersResponse, ListParametersResult,
    SetParametersAtomicallyResponse, SetParametersRequest, SetParametersResponse,
};
use ros2_client::{
    Context, Message, Name, Node, NodeName, NodeOptions, ParameterValue, QosProfile, RmwRequestId, Server,
    ServiceMapping, ServiceTypeName,
};
use rustdds::DomainParticipant;
use tracing::warn;

use crate::error::Ros2Error;
use crate::stop::{Stop, StopOnDrop, stop_on_drop};

/// How often the running dataflows are looked at for nodes that started or ended.
const REDISCOVER: Duration = Duration::from_millis(500);

/// The parameter services of every running nerve node; they stop when this is dropped.
pub struct ParameterServices {
    _stop: StopOnDrop,
}

impl ParameterServices {
    /// Offers the parameters of the nodes running on this host, now and as dataflows start and
    /// end, as ROS 2 nodes in `participant`'s domain.
    ///
    /// # Errors
    /// [`Ros2Error`]: the ROS 2 context cannot be made, or the thread that follows the running
    /// dataflows cannot start.
    pub fn start(participant: &DomainParticipant) -> Result<Self, Ros2Error> {
        let context = Context::from_domain_participant(participant.clone())
            .map_err(|e| Ros2Error::Node { name: "the parameter services".to_owned(), why: format!("{e:?}") })?;
        let (stop, flag) = stop_on_drop();
        std::thread::Builder::new()
            .name("ros2 parameters".to_owned())
            .spawn(move || keep_in_step(&context, &flag))
            .map_err(|e| Ros2Error::Config(format!("cannot start the parameter services' thread: {e}")))?;
        Ok(Self { _stop: stop })
    }
}

/// A nerve node: its run's id and its id.
type Target = (String, String);

/// Serves a ROS 2 node for each running nerve node until `stop`; a node's services end with it.
fn keep_in_step(context: &Context, stop: &Stop) {
    // Dropping an entry's sender ends its thread, which drops the ROS 2 node.
    let mut served: HashMap<Target, (String, oneshot::Sender<()>)> = HashMap::new();
    let mut refused = BTreeSet::new();
    while !stop.requested() {
        let wanted = ros_names(&inspect::running());
        served.retain(|target, (name, _)| wanted.get(target) == Some(name));
        for (target, name) in wanted {
            if served.contains_key(&target) || refused.contains(&name) {
                continue;
            }
            match serve(context, &target, &name) {
                Ok(stop_serving) => {
                    served.insert(target, (name, stop_serving));
                }
                Err(e) => {
                    warn!("the parameters of node `{}` are not offered to ROS 2 as {name}: {e}", target.1);
                    refused.insert(name);
                }
            }
        }
        std::thread::sleep(REDISCOVER);
    }
}

/// The ROS 2 name of each running node that has a process, other than the dataflows' `ros2:`
/// nodes (ROS 2 nodes of their own): `/<node>`, or `/<run>/<node>` when two runs have a node
/// of that id.
fn ros_names(runs: &[RunStatus]) -> HashMap<Target, String> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for node in runs.iter().flat_map(|r| &r.nodes) {
        *count.entry(node.id.as_str()).or_default() += 1;
    }
    let mut names = HashMap::new();
    for run in runs {
        for node in run.nodes.iter().filter(|n| n.pid.is_some() && n.config.get("ros2").is_none()) {
            let base = ros_name(&node.id);
            let name = if count[node.id.as_str()] > 1 {
                format!("/{}/{base}", ros_name(run.name.as_deref().unwrap_or(&run.run_id)))
            } else {
                format!("/{base}")
            };
            names.insert((run.run_id.clone(), node.id.clone()), name);
        }
    }
    names
}

/// `id` as a ROS 2 name segment: letters, digits and `_`, not starting with a digit.
fn ros_name(id: &str) -> String {
    let name: String = id.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    if name.starts_with(|c: char| c.is_ascii_digit()) { format!("_{name}") } else { name }
}

/// The six parameter services of one node.
struct Servers {
    get: Server<GetParametersRequest, GetParametersResponse>,
    types: Server<GetParameterTypesRequest, GetParameterTypesResponse>,
    set: Server<SetParametersRequest, SetParametersResponse>,
    set_atomically: Server<SetParametersRequest, SetParametersAtomicallyResponse>,
    list: Server<ListParametersRequest, ListParametersResponse>,
    describe: Server<DescribeParametersRequest, DescribeParametersResponse>,
}

/// A request to one of them, with the id its answer names.
enum Request {
    Get(RmwRequestId, GetParametersRequest),
    Types(RmwRequestId, GetParameterTypesRequest),
    Set(RmwRequestId, SetParametersRequest),
    SetAtomically(RmwRequestId, SetParametersRequest),
    List(RmwRequestId, ListParametersRequest),
    Describe(RmwRequestId, DescribeParametersRequest),
}

type Requests<'a> = Pin<Box<dyn Stream<Item = Result<Request, String>> + 'a>>;

/// Starts the ROS 2 node `name` (`/ns/node`) answering for `target`; it runs until the
/// returned sender is dropped.
fn serve(context: &Context, target: &Target, name: &str) -> Result<oneshot::Sender<()>, String> {
    let (namespace, base) = name.rsplit_once('/').unwrap_or(("", name));
    let node_name =
        NodeName::new(if namespace.is_empty() { "/" } else { namespace }, base).map_err(|e| format!("{e:?}"))?;
    let options = NodeOptions::new().enable_rosout(false).start_parameter_services(false);
    let mut node = context.new_node(node_name, options).map_err(|e| format!("{e:?}"))?;
    let servers = Servers {
        get: server(&mut node, name, "get_parameters", "GetParameters")?,
        types: server(&mut node, name, "get_parameter_types", "GetParameterTypes")?,
        set: server(&mut node, name, "set_parameters", "SetParameters")?,
        set_atomically: server(&mut node, name, "set_parameters_atomically", "SetParametersAtomically")?,
        list: server(&mut node, name, "list_parameters", "ListParameters")?,
        describe: server(&mut node, name, "describe_parameters", "DescribeParameters")?,
    };
    let (stop_serving, stopped) = oneshot::channel();
    let target = target.clone();
    std::thread::Builder::new()
        .name(format!("ros2 params {name}"))
        .spawn(move || {
            // The ROS 2 node lives as long as its services.
            let _node = node;
            servers.run(&target, stopped);
        })
        .map_err(|e| e.to_string())?;
    Ok(stop_serving)
}

/// The service `<node>/<service>` of type `rcl_interfaces/srv/<type_name>`.
fn server<Q, A>(node: &mut Node, node_name: &str, service: &str, type_name: &str) -> Result<Server<Q, A>, String>
where
    Q: Message + Clone + 'static,
    A: Message + 'static,
{
    // ROS 2's service QoS: reliable, volatile, the last 10.
    let qos = QosProfile::publisher_default().history(History::KeepLast { depth: 10 });
    let name = Name::new(node_name, service).map_err(|e| format!("{e:?}"))?;
    node.create_server(
        ServiceMapping::Enhanced,
        &name,
        &ServiceTypeName::new("rcl_interfaces", type_name),
        qos.clone(),
        qos,
    )
    .map_err(|e| format!("{service}: {e:?}"))
}

impl Servers {
    /// Answers requests, one at a time, until `stopped`.
    fn run(&self, target: &Target, stopped: oneshot::Receiver<()>) {
        fn each<'a, Q: 'a>(
            stream: impl Stream<Item = ros2_client::ReadResult<(RmwRequestId, Q)>> + 'a,
            request: fn(RmwRequestId, Q) -> Request,
        ) -> Requests<'a> {
            Box::pin(stream.map(move |r| r.map(|(id, q)| request(id, q)).map_err(|e| format!("{e:?}"))))
        }
        let requests = futures::stream::select_all([
            each(self.get.receive_request_stream(), Request::Get),
            each(self.types.receive_request_stream(), Request::Types),
            each(self.set.receive_request_stream(), Request::Set),
            each(self.set_atomically.receive_request_stream(), Request::SetAtomically),
            each(self.list.receive_request_stream(), Request::List),
            each(self.describe.receive_request_stream(), Request::Describe),
        ]);
        for request in futures::executor::block_on_stream(requests.take_until(stopped)) {
            let sent = match request {
                Ok(request) => self.answer(target, request),
                Err(e) => Err(format!("a request that does not decode was dropped: {e}")),
            };
            if let Err(why) = sent {
                warn!("parameters of node `{}`: {why}", target.1);
            }
        }
    }

    fn answer(&self, target: &Target, request: Request) -> Result<(), String> {
        let node = Params(target);
        let sent = match request {
            Request::Get(id, q) => {
                let all = node.all();
                let values = q.names.iter().map(|n| value_of(&all, n)).collect();
                self.get.send_response(id, GetParametersResponse { values })
            }
            Request::Types(id, q) => {
                let all = node.all();
                let values = q.names.iter().map(|n| value_of(&all, n).ptype).collect();
                self.types.send_response(id, GetParameterTypesResponse { values })
            }
            Request::Set(id, q) => {
                let results = q.parameter.into_iter().map(|p| node.set(p).into()).collect();
                self.set.send_response(id, SetParametersResponse { results })
            }
            Request::SetAtomically(id, q) => {
                let result = node.set_all(q.parameter).into();
                self.set_atomically.send_response(id, SetParametersAtomicallyResponse { result })
            }
            Request::List(id, q) => {
                let names = node.all().map(|all| all.into_keys().collect()).unwrap_or_default();
                let result = listed(names, &q.prefixes, q.depth);
                self.list.send_response(id, ListParametersResponse { result })
            }
            Request::Describe(id, q) => {
                let all = node.all();
                let values = q
                    .names
                    .iter()
                    .map(|n| match all.as_ref().ok().and_then(|all| all.get(n)) {
                        Some(v) => ParameterDescriptor::from_value(n, &to_ros(v)),
                        None => ParameterDescriptor::unknown(n),
                    })
                    .map(Into::into)
                    .collect();
                self.describe.send_response(id, DescribeParametersResponse { values })
            }
        };
        sent.map_err(|e| format!("the answer was not sent: {e:?}"))
    }
}

/// One nerve node's parameters, asked through its run.
struct Params<'a>(&'a Target);

impl Params<'_> {
    /// Every parameter of the node, or why they cannot be read.
    fn all(&self) -> Result<BTreeMap<String, ParamValue>, String> {
        let (run, node) = self.0;
        inspect::param_of_run(run, node, ParamOp::List).map_err(|e| e.to_string())?.map_err(|e| e.to_string())
    }

    /// Sets one parameter; the node's reason when it refuses.
    fn set(&self, parameter: raw::Parameter) -> Result<(), String> {
        let value = from_ros(ParameterValue::from(parameter.value))?;
        let (run, node) = self.0;
        let op = ParamOp::Set { key: parameter.name, value };
        inspect::param_of_run(run, node, op).map_err(|e| e.to_string())?.map(drop).map_err(|e| e.to_string())
    }

    /// Sets every parameter or none: nerve sets one at a time, so when one is refused those
    /// already set get their earlier values back.
    fn set_all(&self, parameters: Vec<raw::Parameter>) -> Result<(), String> {
        let before = self.all()?;
        let mut done: Vec<String> = Vec::new();
        for parameter in parameters {
            let name = parameter.name.clone();
            if let Err(why) = self.set(parameter) {
                for key in done {
                    let restored =
                        before.get(&key).map(|v| raw::Parameter { name: key.clone(), value: to_ros(v).into() });
                    if let Some(Err(e)) = restored.map(|p| self.set(p)) {
                        warn!("parameters of node `{}`: {key} could not be set back: {e}", self.0.1);
                    }
                }
                return Err(format!("{name}: {why}"));
            }
            done.push(name);
        }
        Ok(())
    }
}

/// A parameter's value as ROS 2 reads it: not set when the node has no such parameter (or
/// cannot be asked).
fn value_of(all: &Result<BTreeMap<String, ParamValue>, String>, name: &str) -> raw::ParameterValue {
    let value = all.as_ref().ok().and_then(|all| all.get(name)).map_or(ParameterValue::NotSet, to_ros);
    value.into()
}

fn to_ros(value: &ParamValue) -> ParameterValue {
    match value.clone() {
        ParamValue::Bool(b) => ParameterValue::Boolean(b),
        ParamValue::Int(i) => ParameterValue::Integer(i),
        ParamValue::Float(f) => ParameterValue::Double(f),
        ParamValue::String(s) => ParameterValue::String(s),
        ParamValue::BoolList(l) => ParameterValue::BooleanArray(l),
        ParamValue::IntList(l) => ParameterValue::IntegerArray(l),
        ParamValue::FloatList(l) => ParameterValue::DoubleArray(l),
        ParamValue::StringList(l) => ParameterValue::StringArray(l),
    }
}

/// A ROS 2 value as nerve's; nerve has no byte arrays and never unsets a parameter.
fn from_ros(value: ParameterValue) -> Result<ParamValue, String> {
    Ok(match value {
        ParameterValue::Boolean(b) => ParamValue::Bool(b),
        ParameterValue::Integer(i) => ParamValue::Int(i),
        ParameterValue::Double(f) => ParamValue::Float(f),
        ParameterValue::String(s) => ParamValue::String(s),
        ParameterValue::BooleanArray(l) => ParamValue::BoolList(l),
        ParameterValue::IntegerArray(l) => ParamValue::IntList(l),
        ParameterValue::DoubleArray(l) => ParamValue::FloatList(l),
        ParameterValue::StringArray(l) => ParamValue::StringList(l),
        ParameterValue::ByteArray(_) => return Err("nerve parameters have no byte arrays: use a list of int".into()),
        ParameterValue::NotSet => return Err("a nerve parameter cannot be undeclared".into()),
    })
}

/// `list_parameters`' answer, as rclcpp gives it: the names under one of `prefixes` (all when
/// none is given) at most `depth` groups deep (any depth when 0), and the groups they are in.
fn listed(names: Vec<String>, prefixes: &[String], depth: u64) -> ListParametersResult {
    let shallow = |rest: &str| depth == 0 || u64::try_from(rest.matches('.').count()).unwrap_or(u64::MAX) < depth;
    let wanted = |name: &str| {
        if prefixes.is_empty() {
            return shallow(name);
        }
        prefixes
            .iter()
            .any(|p| name == p || name.strip_prefix(p.as_str()).and_then(|r| r.strip_prefix('.')).is_some_and(shallow))
    };
    let names: Vec<String> = names.into_iter().filter(|n| wanted(n)).collect();
    let groups: BTreeSet<String> =
        names.iter().filter_map(|n| n.rsplit_once('.').map(|(group, _)| group.to_owned())).collect();
    ListParametersResult { names, prefixes: groups.into_iter().collect() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ids_become_ros_names() {
        assert_eq!(ros_name("object-detection"), "object_detection");
        assert_eq!(ros_name("3d.lidar"), "_3d_lidar");
        assert_eq!(ros_name("planner"), "planner");
    }

    #[test]
    fn lists_as_rclcpp_does() {
        let names = || ["speed", "pid.kp", "pid.ki", "pid.inner.kd", "mode"].map(str::to_owned).to_vec();
        let all = listed(names(), &[], 0);
        assert_eq!(all.names.len(), 5);
        assert_eq!(all.prefixes, ["pid", "pid.inner"]);
        assert_eq!(listed(names(), &[], 1).names, ["speed", "mode"]);
        assert_eq!(listed(names(), &["pid".to_owned()], 1).names, ["pid.kp", "pid.ki"]);
        assert_eq!(listed(names(), &["pid".to_owned()], 0).names, ["pid.kp", "pid.ki", "pid.inner.kd"]);
    }

    #[test]
    fn values_cross_both_ways() {
        for value in [
            ParamValue::Bool(true),
            ParamValue::Int(-3),
            ParamValue::Float(0.5),
            ParamValue::String("cruise".into()),
            ParamValue::FloatList(vec![0.3, 0.3]),
            ParamValue::StringList(vec!["a".into()]),
        ] {
            assert_eq!(from_ros(to_ros(&value)), Ok(value));
        }
        assert!(from_ros(ParameterValue::NotSet).is_err_and(|e| e.contains("undeclared")));
        assert!(from_ros(ParameterValue::ByteArray(vec![1])).is_err_and(|e| e.contains("byte arrays")));
    }
}

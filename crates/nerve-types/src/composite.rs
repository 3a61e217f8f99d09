//! The types ROS 2 derives from a service or an action file beside their parts: a service's
//! `_Event` (what service introspection publishes) and the service itself as a message of
//! its request, response and event; an action's goal, result and feedback services and
//! messages. Their hashes are what a ROS 2 peer checks a service or action against.

use crate::definition::{Array, BaseType, Field, FieldType, Message, Primitive};
use crate::name::{Kind, TypeName};

fn field(name: &str, base: BaseType, array: Array) -> Field {
    Field { name: name.to_owned(), ty: FieldType { base, array }, default: None }
}

fn nested(name: &str, ty: &TypeName) -> Field {
    field(name, BaseType::Message(ty.clone()), Array::Single)
}

fn message(name: TypeName, fields: Vec<Field>) -> Message {
    Message { name, fields, constants: Vec::new() }
}

/// The messages derived from the file of `stem`, besides the parts it spells out.
pub(crate) fn derived(stem: &TypeName) -> Vec<Message> {
    match stem.kind {
        Kind::Msg => Vec::new(),
        Kind::Srv => service(stem),
        Kind::Action => action(stem),
    }
}

/// `<service>_Event` and `<service>` of a service whose request and response exist.
fn service(name: &TypeName) -> Vec<Message> {
    let (request, response, event) = (name.part("Request"), name.part("Response"), name.part("Event"));
    let info = TypeName::msg("service_msgs", "ServiceEventInfo");
    let at_most_one = |n: &str, ty: &TypeName| field(n, BaseType::Message(ty.clone()), Array::Bounded(1));
    vec![
        message(
            event.clone(),
            vec![nested("info", &info), at_most_one("request", &request), at_most_one("response", &response)],
        ),
        message(
            name.clone(),
            vec![
                nested("request_message", &request),
                nested("response_message", &response),
                nested("event_message", &event),
            ],
        ),
    ]
}

/// The services and messages ROS 2's action protocol is made of, and the action itself.
fn action(name: &TypeName) -> Vec<Message> {
    let (goal, result, feedback) = (name.part("Goal"), name.part("Result"), name.part("Feedback"));
    let (send_goal, get_result, feedback_message) =
        (name.part("SendGoal"), name.part("GetResult"), name.part("FeedbackMessage"));
    let uuid = TypeName::msg("unique_identifier_msgs", "UUID");
    let time = TypeName::msg("builtin_interfaces", "Time");
    let primitive = |n: &str, p| field(n, BaseType::Primitive(p), Array::Single);
    let mut out = vec![
        message(send_goal.part("Request"), vec![nested("goal_id", &uuid), nested("goal", &goal)]),
        message(send_goal.part("Response"), vec![primitive("accepted", Primitive::Bool), nested("stamp", &time)]),
        message(get_result.part("Request"), vec![nested("goal_id", &uuid)]),
        message(get_result.part("Response"), vec![primitive("status", Primitive::Int8), nested("result", &result)]),
        message(feedback_message.clone(), vec![nested("goal_id", &uuid), nested("feedback", &feedback)]),
    ];
    out.extend(service(&send_goal));
    out.extend(service(&get_result));
    out.push(message(
        name.clone(),
        vec![
            nested("goal", &goal),
            nested("result", &result),
            nested("feedback", &feedback),
            nested("send_goal_service", &send_goal),
            nested("get_result_service", &get_result),
            nested("feedback_message", &feedback_message),
        ],
    ));
    out
}

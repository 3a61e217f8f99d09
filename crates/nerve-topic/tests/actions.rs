//! Actions across real processes: this test binary re-runs itself as the server process.
//!
//! The two processes meet over Zenoh on loopback through explicit endpoints (the server listens
//! on a port, the client connects to it), with no multicast: one test function, so the process
//! environment is set before any thread uses it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use nerve_topic::action::{
    ActionClient, ActionError, ActionOptions, ActionServer, ExecuteResult, GoalHandle, GoalRequest, GoalStatus,
    ServerGoal,
};
use nerve_topic::arrow_array::{Array, Int64Array};
use nerve_topic::{Parameters, Refusal};

mod common;

use common::{free_port, scratch, spawn_server, unique, wait_for_no_server, zenoh_config};

const TEST: &str = "actions_across_processes_end_every_goal";
const LONG: Duration = Duration::from_secs(30);

fn one(data: &dyn Array) -> Option<i64> {
    let values = data.as_any().downcast_ref::<Int64Array>()?;
    (values.len() == 1).then(|| values.value(0))
}

/// Goals are one Int64 `n`; negative ones are rejected.
fn accept(goal: &GoalRequest) -> Result<(), Refusal> {
    match one(goal.data.as_ref()) {
        Some(n) if n >= 0 => Ok(()),
        _ => Err("n must be one value of at least 0".into()),
    }
}

/// Counts to `n`, a step every `step_ms` (a parameter) or at once; feedback after each step;
/// fails at `fail_at`; stops early on a cancel request. The result is the count reached.
fn count(goal: ServerGoal) -> ExecuteResult {
    let params = &goal.request.metadata.parameters;
    let n = one(goal.request.data.as_ref()).ok_or("not one value")?;
    let step = Duration::from_millis(params.get("step_ms").and_then(serde_json::Value::as_u64).unwrap_or(0));
    let mut reached = 0;
    while reached < n && !goal.wait_cancel(step) {
        reached += 1;
        if params.get("fail_at").and_then(serde_json::Value::as_i64) == Some(reached) {
            return Err(format!("failed at {reached}").into());
        }
        goal.publish_feedback(&Int64Array::from(vec![reached]).into_data(), &Parameters::new())
            .map_err(|e| e.to_string())?;
    }
    let mut params = Parameters::new();
    params.insert("canceled_seen".into(), goal.is_cancel_requested().into());
    Ok((Int64Array::from(vec![reached]).into_data(), params))
}

fn serve(action: &str) {
    let _server =
        ActionServer::new(action, ActionOptions { workers: 4, ..Default::default() }, accept, count).expect("server");
    println!("serving");
    common::until_orphaned();
}

fn send(client: &ActionClient, n: i64, step_ms: u64, fail_at: Option<i64>) -> Result<GoalHandle, ActionError> {
    let mut params = Parameters::new();
    params.insert("step_ms".into(), step_ms.into());
    if let Some(k) = fail_at {
        params.insert("fail_at".into(), k.into());
    }
    client.send_goal(&Int64Array::from(vec![n]).into_data(), &params, Duration::from_secs(10))
}

/// Every feedback value of a goal, read until it ends.
fn feedback_values(goal: &GoalHandle) -> Vec<i64> {
    std::iter::from_fn(|| goal.feedback(LONG)).filter_map(|f| one(f.data.as_ref())).collect()
}

#[test]
fn actions_across_processes_end_every_goal() {
    if let Some(action) = common::served_name() {
        return serve(&action);
    }
    let dir = scratch("actions");
    let port = free_port();
    // SAFETY: this test is the only one of its binary, and has started no thread yet.
    unsafe { common::be_client(&dir, port) };

    same_process();
    a_dropped_server_waits_for_its_goals();
    let action = unique("count");
    let mut server = spawn_server(TEST, &action, &zenoh_config(&dir, "server", port));
    let client = ActionClient::new(&action, ActionOptions::default()).expect("client");
    assert!(client.wait_for_server(Duration::from_secs(60)), "the server never appeared");

    // Success, with every feedback in order; three goals at once, each with its own.
    let goals: Vec<GoalHandle> = (0..3).map(|i| send(&client, 5 + i, 10, None).expect("accepted")).collect();
    for (i, goal) in (0..).zip(&goals) {
        assert_eq!(feedback_values(goal), (1..=5 + i).collect::<Vec<_>>(), "goal {i}");
        let result = goal.result(LONG).expect("a result");
        assert_eq!((result.status, one(result.data.as_ref())), (GoalStatus::Succeeded, Some(5 + i)));
        assert_eq!(goal.status(), GoalStatus::Succeeded);
    }

    match send(&client, -1, 0, None) {
        Err(ActionError::Rejected { reason, .. }) => assert_eq!(reason, "n must be one value of at least 0"),
        other => panic!("expected a rejection, got {other:?}"),
    }

    let failing = send(&client, 10, 0, Some(3)).expect("accepted");
    match failing.result(LONG) {
        Err(ActionError::Aborted { reason, .. }) => assert_eq!(reason, "failed at 3"),
        other => panic!("expected an abort, got {other:?}"),
    }
    assert_eq!(failing.status(), GoalStatus::Aborted("failed at 3".into()));

    // Cancel mid-way: the execute function sees the request and the goal ends canceled.
    let long = send(&client, 1000, 20, None).expect("accepted");
    let first = long.feedback(LONG).expect("feedback");
    assert_eq!(one(first.data.as_ref()), Some(1));
    assert!(matches!(long.status(), GoalStatus::Executing), "{:?}", long.status());
    assert!(long.cancel().expect("cancel"), "the server did not take the cancel");
    let result = long.result(LONG).expect("a result");
    let reached = one(result.data.as_ref()).expect("a count");
    assert_eq!(result.status, GoalStatus::Canceled);
    assert!(reached < 1000, "the goal ran to its end: {reached}");
    assert_eq!(result.metadata.parameters.get("canceled_seen"), Some(&serde_json::json!(true)));
    assert!(!long.cancel().expect("cancel of an ended goal"), "an ended goal took a cancel");

    // A client that reads no feedback holds up nothing: the goal ends, the newest feedback stays.
    let flood = send(&client, 2000, 0, None).expect("accepted");
    let result = flood.result(LONG).expect("a result");
    assert_eq!(one(result.data.as_ref()), Some(2000));
    let kept = feedback_values(&flood);
    assert!(kept.len() <= 64 && kept.windows(2).all(|w| w[0] < w[1]), "{kept:?}");

    // The server dies mid-goal: the goal fails (`ServerGone`, not a `Timeout` of the wait for
    // its result) long before it would have ended: 1000 steps of 50 ms outlast that wait.
    let doomed = send(&client, 1000, 50, None).expect("accepted");
    assert!(doomed.feedback(LONG).is_some(), "no feedback before the kill");
    server.kill().expect("kill server");
    server.wait().expect("reap server");
    assert!(matches!(doomed.result(LONG), Err(ActionError::ServerGone { .. })), "{:?}", doomed.status());
    assert!(matches!(doomed.status(), GoalStatus::Failed(_)), "{:?}", doomed.status());
    wait_for_no_server(|| client.server_count());
    assert!(!client.wait_for_server(Duration::from_millis(100)), "the server is gone");
    assert!(matches!(send(&client, 1, 0, None), Err(ActionError::NoServer { .. })));
    let _ = std::fs::remove_dir_all(&dir);
}

fn same_process() {
    let action = unique("local");
    let _server = ActionServer::new(&action, ActionOptions::default(), accept, count).expect("server");
    let client = ActionClient::new(&action, ActionOptions::default()).expect("client");
    assert!(client.wait_for_server(Duration::from_secs(60)), "the server never appeared");
    let goal = send(&client, 3, 0, None).expect("accepted");
    assert_eq!(feedback_values(&goal), vec![1, 2, 3]);
    assert_eq!(goal.result(LONG).map(|r| one(r.data.as_ref())).expect("result"), Some(3));
    let other_domain = ActionClient::new(&action, ActionOptions { domain: 7, ..Default::default() }).expect("client");
    assert!(!other_domain.wait_for_server(Duration::from_millis(100)), "no server in domain 7");
    assert!(matches!(send(&other_domain, 1, 0, None), Err(ActionError::NoServer { .. })));
}

/// Dropping a server cancels the goals it runs and returns only once they have ended: the goal
/// here ends only on a cancel request, and says so before returning.
fn a_dropped_server_waits_for_its_goals() {
    let action = unique("dropped");
    let ended = Arc::new(AtomicBool::new(false));
    let (started, starting) = mpsc::channel();
    let (started, executing) = (Mutex::new(started), ended.clone());
    let server = ActionServer::new(&action, ActionOptions::default(), accept, move |goal: ServerGoal| {
        started.lock().expect("started").send(()).expect("the test waits");
        while !goal.wait_cancel(LONG) {}
        executing.store(true, Ordering::SeqCst);
        Ok((Int64Array::from(vec![0]).into_data(), Parameters::new()))
    })
    .expect("server");
    let client = ActionClient::new(&action, ActionOptions::default()).expect("client");
    assert!(client.wait_for_server(Duration::from_secs(60)), "the server never appeared");
    let _goal = send(&client, 1, 0, None).expect("accepted");
    starting.recv().expect("the goal started");
    drop(server);
    assert!(ended.load(Ordering::SeqCst), "the drop returned while its goal was still running");
}

//! Serves or calls a counting action from Rust; it meets the Python `server.py` and
//! `client.py` beside it, in either direction.
//!
//! ```text
//! action-counter serve [NAME]                      count to each goal's n, a step every step_ms
//! action-counter send NAME N [--cancel-after SECS] [--step-ms MS] [--fail-at K]
//! ```
//!
//! A goal is one Int64 `n` (0 to 1000; others are rejected). The server sends each count as
//! feedback, watches for a cancel between steps, fails the goal on reaching `fail_at` if the
//! goal asks for that, and answers with the count it reached.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use nerve_topic::action::{
    ActionClient, ActionOptions, ActionServer, ExecuteResult, GoalRequest, GoalStatus, ServerGoal,
};
use nerve_topic::arrow_array::{Array, Int64Array};
use nerve_topic::{Parameters, Refusal};

const USAGE: &str =
    "usage: action-counter serve [NAME] | send NAME N [--cancel-after SECS] [--step-ms MS] [--fail-at K]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.first().map(String::as_str) {
        Some("serve") => serve(args.get(1).map_or("count", String::as_str)),
        Some("send") => send(&args[1..]),
        _ => Err(USAGE.into()),
    };
    outcome.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        ExitCode::FAILURE
    })
}

/// The goal's `n`, if it is one Int64 value.
fn goal_n(data: &dyn Array) -> Option<i64> {
    let values = data.as_any().downcast_ref::<Int64Array>()?;
    (values.len() == 1 && values.is_valid(0)).then(|| values.value(0))
}

fn accept(goal: &GoalRequest) -> Result<(), Refusal> {
    match goal_n(goal.data.as_ref()) {
        Some(n) if (0..=1000).contains(&n) => Ok(()),
        Some(n) => Err(format!("n must be between 0 and 1000, not {n}").into()),
        None => Err("a goal is one Int64 value".into()),
    }
}

fn count(goal: ServerGoal) -> ExecuteResult {
    let params = &goal.request.metadata.parameters;
    let n = goal_n(goal.request.data.as_ref()).ok_or("a goal is one Int64 value")?;
    let step = Duration::from_millis(params.get("step_ms").and_then(serde_json::Value::as_u64).unwrap_or(100));
    let fail_at = params.get("fail_at").and_then(serde_json::Value::as_i64);
    let mut reached = 0;
    while reached < n {
        // The sleep between steps ends early on a cancel request.
        if goal.wait_cancel(step) {
            println!("cancel requested at {reached}");
            break;
        }
        reached += 1;
        if fail_at == Some(reached) {
            return Err(format!("failed at {reached} as asked").into());
        }
        let mut feedback = Parameters::new();
        feedback.insert("of".into(), n.into());
        goal.publish_feedback(&Int64Array::from(vec![reached]).into_data(), &feedback).map_err(|e| e.to_string())?;
    }
    Ok((Int64Array::from(vec![reached]).into_data(), Parameters::new()))
}

fn serve(name: &str) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let _server = ActionServer::new(name, ActionOptions { workers: 4, ..Default::default() }, accept, count)?;
    println!("serving {name}");
    // Until killed, like any server.
    loop {
        std::thread::park();
    }
}

fn send(args: &[String]) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let [name, n, options @ ..] = args else { return Err(USAGE.into()) };
    let n: i64 = n.parse()?;
    let mut cancel_after = None;
    let mut params = Parameters::new();
    for pair in options.chunks(2) {
        match pair {
            [flag, value] if flag == "--cancel-after" => cancel_after = Some(Duration::from_secs_f64(value.parse()?)),
            [flag, value] if flag == "--step-ms" => drop(params.insert("step_ms".into(), value.parse::<u64>()?.into())),
            [flag, value] if flag == "--fail-at" => drop(params.insert("fail_at".into(), value.parse::<i64>()?.into())),
            _ => return Err(USAGE.into()),
        }
    }
    let client = ActionClient::new(name, ActionOptions::default())?;
    // Servers announce themselves asynchronously: give a fresh session a moment to hear one (a
    // goal without one fails at once, "no server").
    let _ = client.wait_for_server(Duration::from_secs(20));
    let goal = match client.send_goal(&Int64Array::from(vec![n]).into_data(), &params, Duration::from_secs(10)) {
        Ok(goal) => goal,
        Err(e) => {
            println!("not accepted: {e}");
            return Ok(ExitCode::FAILURE);
        }
    };
    println!("accepted {}", goal.id());
    let started = Instant::now();
    let mut canceled = false;
    loop {
        if let Some(feedback) = goal.feedback(Duration::from_millis(50)) {
            let values = feedback.data.as_any().downcast_ref::<Int64Array>().map(|a| a.values().to_vec());
            println!("feedback {:?}", values.unwrap_or_default());
        } else if goal.status().is_terminal() {
            break;
        }
        if !canceled && cancel_after.is_some_and(|after| started.elapsed() >= after) {
            canceled = true;
            println!("cancel taken: {}", goal.cancel()?);
        }
    }
    match goal.result(Duration::from_secs(10)) {
        Ok(result) => {
            let reached = goal_n(result.data.as_ref()).unwrap_or(-1);
            println!("{} at {reached}", result.status);
            Ok(if result.status == GoalStatus::Succeeded || canceled { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
        Err(_) => {
            // Aborted or failed, with the reason.
            println!("{}", goal.status());
            Ok(ExitCode::FAILURE)
        }
    }
}

//! `nerve action list|send_goal`: the actions reachable from this host, and sending one a goal
//! by hand.

use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Subcommand;
use nerve_topic::action::{ActionClient, ActionError, ActionOptions, GoalStatus};
use nerve_topic::{Message, Metadata};

use crate::service::{await_server, print_servers};
use crate::{RunFlag, values};

/// `nerve action`.
#[derive(Debug, clap::Args)]
pub struct ActionArgs {
    #[command(subcommand)]
    command: ActionCommand,
}

#[derive(Debug, Subcommand)]
enum ActionCommand {
    /// List the actions that have a server now, with the host of each server.
    List {
        /// Domain to look in.
        #[arg(long, default_value_t = 0, value_name = "N")]
        domain: u32,
    },
    /// Send an action a goal; print its acceptance, each feedback as it comes, and its result.
    #[command(name = "send_goal")]
    SendGoal(SendGoalArgs),
}

#[derive(Debug, clap::Args)]
struct SendGoalArgs {
    /// The action.
    action: String,
    /// The goal's values, as a JSON list (`[1, 2]`, `["a"]`) or a single JSON value.
    data: String,
    /// Arrow type of the values (`Int64`, `Float32`, `Utf8`, `Boolean`…) [default: from the JSON].
    #[arg(long = "type", value_name = "TYPE")]
    data_type: Option<String>,
    /// The goal's metadata, as a JSON object.
    #[arg(long, value_name = "JSON")]
    metadata: Option<String>,
    /// Seconds the goal may take in all; past them it is canceled [default: no limit].
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Cancel the goal this many seconds after it was accepted.
    #[arg(long, value_name = "SECS")]
    cancel_after: Option<f64>,
    /// Domain of the action.
    #[arg(long, default_value_t = 0, value_name = "N")]
    domain: u32,
    #[command(flatten)]
    run: RunFlag,
}

/// How long a goal's acceptance may take when `--timeout` does not say.
const ACCEPT_TIMEOUT: Duration = Duration::from_secs(10);
/// How often the command looks up from waiting for feedback, to cancel on time.
const TICK: Duration = Duration::from_millis(50);

/// Runs `nerve action …`.
pub fn run(args: &ActionArgs) -> anyhow::Result<i32> {
    match &args.command {
        ActionCommand::List { domain } => {
            print_servers(&nerve_topic::action::list(*domain)?, "action", *domain)?;
            Ok(0)
        }
        ActionCommand::SendGoal(goal) => send_goal(goal),
    }
}

fn seconds(value: Option<f64>, flag: &str) -> anyhow::Result<Option<Duration>> {
    value
        .map(|s| Duration::try_from_secs_f64(s).with_context(|| format!("--{flag} must be a number of seconds")))
        .transpose()
}

fn send_goal(args: &SendGoalArgs) -> anyhow::Result<i32> {
    let goal = values::json_array(&args.data, args.data_type.as_deref())?;
    let params = values::json_metadata(args.metadata.as_deref())?;
    let timeout = seconds(args.timeout, "timeout")?;
    let cancel_after = seconds(args.cancel_after, "cancel-after")?;
    let client = ActionClient::new(
        &args.action,
        ActionOptions { domain: args.domain, run: args.run.scope(), ..Default::default() },
    )?;
    let accept_timeout = timeout.unwrap_or(ACCEPT_TIMEOUT);
    await_server(|| client.server_count(), accept_timeout);
    let handle = match client.send_goal(&goal.to_data(), &params, accept_timeout) {
        Ok(handle) => handle,
        Err(ActionError::Rejected { reason, .. }) => {
            println!("rejected: {reason}");
            return Ok(1);
        }
        Err(e) => return Err(e.into()),
    };
    println!("accepted goal {}", handle.id());
    let started = Instant::now();
    let mut cancel_at = cancel_after.map(|after| started + after);
    let deadline = timeout.map(|t| started + t);
    let print = |title: &str, metadata: Metadata, data| {
        let message = Message::new(client.action().into(), metadata, data);
        print!("{title}:\n{}", crate::topic::describe(&message));
        // Each feedback shows as it comes, also through a pipe.
        let _ = std::io::stdout().flush();
    };
    loop {
        if let Some(feedback) = handle.feedback(TICK) {
            print("feedback", feedback.metadata, feedback.data);
        } else if handle.status().is_terminal() {
            break;
        }
        if cancel_at.is_some_and(|at| Instant::now() >= at) {
            cancel_at = None;
            println!("{}", if handle.cancel()? { "cancel requested" } else { "cancel too late: the goal had ended" });
        }
        if deadline.is_some_and(|at| Instant::now() >= at) {
            let canceled = handle.cancel()?;
            let secs = args.timeout.unwrap_or_default();
            println!("no result within {secs} s: {}", if canceled { "goal canceled" } else { "goal ended" });
            return Ok(1);
        }
    }
    let status = handle.status();
    println!("status: {status}");
    match handle.result(Duration::ZERO) {
        Ok(result) => {
            print("result", result.metadata, result.data);
            // A cancel this command asked for is a success; anyone else's is not.
            let asked = args.cancel_after.is_some() && status == GoalStatus::Canceled;
            Ok(if status == GoalStatus::Succeeded || asked { 0 } else { 1 })
        }
        Err(_) => Ok(1),
    }
}

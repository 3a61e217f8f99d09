//! `nerve service list|call`: the services reachable from this host, and calling one by hand.

use std::time::Duration;

use anyhow::Context;
use clap::Subcommand;
use nerve_topic::Message;
use nerve_topic::service::{Client, ServiceOptions};

use crate::{RunFlag, print_columns, run_cell, values};

/// `nerve service`.
#[derive(Debug, clap::Args)]
pub struct ServiceArgs {
    #[command(subcommand)]
    command: ServiceCommand,
}

#[derive(Debug, Subcommand)]
enum ServiceCommand {
    /// List the services that have a server now, with the host of each server.
    List {
        /// Domain to look in.
        #[arg(long, default_value_t = 0, value_name = "N")]
        domain: u32,
    },
    /// Call a service once and print its reply like `nerve topic echo` prints a message.
    Call(CallArgs),
}

#[derive(Debug, clap::Args)]
struct CallArgs {
    /// The service.
    service: String,
    /// The request's values, as a JSON list (`[1, 2]`, `["a"]`) or a single JSON value.
    data: String,
    /// Arrow type of the values (`Int64`, `Float32`, `Utf8`, `Boolean`…) [default: from the JSON].
    #[arg(long = "type", value_name = "TYPE")]
    data_type: Option<String>,
    /// The request's metadata, as a JSON object.
    #[arg(long, value_name = "JSON")]
    metadata: Option<String>,
    /// Seconds to wait for the reply.
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    timeout: f64,
    /// Domain of the service.
    #[arg(long, default_value_t = 0, value_name = "N")]
    domain: u32,
    #[command(flatten)]
    run: RunFlag,
}

/// Runs `nerve service …`.
pub fn run(args: &ServiceArgs) -> anyhow::Result<i32> {
    match &args.command {
        ServiceCommand::List { domain } => {
            print_servers(&nerve_topic::service::list(*domain)?, "service", *domain)?;
            Ok(0)
        }
        ServiceCommand::Call(call) => {
            let request = values::json_array(&call.data, call.data_type.as_deref())?;
            let params = values::json_metadata(call.metadata.as_deref())?;
            let timeout = Duration::try_from_secs_f64(call.timeout).context("--timeout must be a number of seconds")?;
            let options = ServiceOptions { domain: call.domain, run: call.run.scope(), ..Default::default() };
            let client = Client::new(&call.service, options)?;
            await_server(|| client.server_count(), timeout);
            let reply = client.call(&request.to_data(), &params, timeout)?;
            let message = Message::new(client.service().into(), reply.metadata, reply.data);
            print!("{}", crate::topic::describe(&message));
            Ok(0)
        }
    }
}

/// Prints the (host, key) pairs of `nerve service list` or `nerve action list`: each name with
/// the run it belongs to and the host of its server.
pub(crate) fn print_servers(servers: &[(String, String)], kind: &str, domain: u32) -> anyhow::Result<()> {
    if servers.is_empty() {
        println!("no {kind} has a server in domain {domain}");
        return Ok(());
    }
    let rows: Vec<Vec<String>> = servers
        .iter()
        .map(|(host, key)| {
            let (run, name) = nerve_topic::run_scope::split_key(key);
            vec![name.to_owned(), run_cell(run), host.clone()]
        })
        .collect();
    let header = [kind.to_uppercase(), "RUN".to_owned(), "HOST".to_owned()];
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    crate::topic::keep_writing(print_columns(&mut std::io::stdout().lock(), &header, &rows))?;
    Ok(())
}

/// Servers announce themselves asynchronously: gives a fresh session up to `timeout` (at most
/// 2 s) to hear one, so that a call right after start finds it.
pub(crate) fn await_server(count: impl Fn() -> usize, timeout: Duration) {
    let deadline = std::time::Instant::now() + timeout.min(Duration::from_secs(2));
    while count() == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

//! Serves or calls the `add` service from Rust; it meets the Python `server.py` and `client.py`
//! beside it, in either direction.
//!
//! ```text
//! service-adder serve [NAME]          answer each request with the sum of its Int64 values
//! service-adder call NAME V [V ...]   send the values, print the sum or the server's refusal
//! ```
//!
//! The server refuses negative values, so a refusal can be seen from either side.

use std::process::ExitCode;
use std::time::Duration;

use nerve_topic::Parameters;
use nerve_topic::arrow_array::{Array, Int64Array};
use nerve_topic::service::{Client, HandlerResult, Request, Server, ServiceError, ServiceOptions};

const USAGE: &str = "usage: service-adder serve [NAME] | call NAME V [V ...]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.first().map(String::as_str) {
        Some("serve") => serve(args.get(1).map_or("add", String::as_str)),
        Some("call") => call(&args[1..]),
        _ => Err(USAGE.into()),
    };
    outcome.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        ExitCode::FAILURE
    })
}

fn add(request: Request) -> HandlerResult {
    let values = request.data.as_any().downcast_ref::<Int64Array>().ok_or("the request must be Int64 values")?;
    if let Some(negative) = values.iter().flatten().find(|v| *v < 0) {
        return Err(format!("negative values are not accepted ({negative})").into());
    }
    let sum: i64 = values.iter().flatten().sum();
    let mut reply = Parameters::new();
    reply.insert("count".into(), values.len().into());
    Ok((Int64Array::from(vec![sum]).into_data(), reply))
}

fn serve(name: &str) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let _server = Server::new(name, ServiceOptions { workers: 2, ..Default::default() }, add)?;
    println!("serving {name}");
    // Until killed, like any server.
    loop {
        std::thread::park();
    }
}

fn call(args: &[String]) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let [name, values @ ..] = args else { return Err(USAGE.into()) };
    let values = values.iter().map(|v| v.parse::<i64>()).collect::<Result<Vec<_>, _>>()?;
    let client = Client::new(name, ServiceOptions::default())?;
    // Servers announce themselves asynchronously: give a fresh session a moment to hear one (a
    // call without one fails at once, "no server").
    let _ = client.wait_for_server(Duration::from_secs(5));
    match client.call(&Int64Array::from(values).into_data(), &Parameters::new(), Duration::from_secs(10)) {
        Ok(reply) => {
            let sum = reply.data.as_any().downcast_ref::<Int64Array>().filter(|a| a.len() == 1).map(|a| a.value(0));
            println!("sum {}", sum.ok_or("the reply is not one Int64 value")?);
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ ServiceError::Failed { .. }) => {
            println!("refused: {e}");
            Ok(ExitCode::FAILURE)
        }
        Err(e) => Err(e.into()),
    }
}

//! Services across real processes: this test binary re-runs itself as the server process.
//!
//! The two processes meet over Zenoh on loopback through explicit endpoints (the server listens
//! on a port, the client connects to it), with no multicast: one test function, so the process
//! environment is set before any thread uses it.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use nerve_topic::arrow_array::{Array, Int64Array};
use nerve_topic::service::{Client, Server, ServiceError, ServiceOptions};
use nerve_topic::{Metadata, Parameters};

mod common;

use common::{free_port, scratch, spawn_server, unique, wait_for_no_server, zenoh_config};

const TEST: &str = "services_across_processes_never_hang";

/// The server process: doubles every value and refuses negative values. First it sleeps
/// `sleep_ms` (a parameter), which varies how calls interleave, and, given `hold` (a path),
/// creates `<hold>.started` and waits until the test creates `hold`: the test then knows the
/// call is under way, and that its answer cannot come before the test lets it. It runs until
/// killed.
fn serve(service: &str) {
    let _server = Server::new(service, ServiceOptions { workers: 4, ..Default::default() }, |request| {
        let params = &request.metadata.parameters;
        if let Some(serde_json::Value::Number(ms)) = params.get("sleep_ms") {
            std::thread::sleep(Duration::from_millis(ms.as_u64().unwrap_or(0)));
        }
        if let Some(serde_json::Value::String(hold)) = params.get("hold") {
            let hold = Path::new(hold);
            std::fs::write(hold.with_extension("started"), b"").map_err(|e| e.to_string())?;
            common::wait_for_file(hold);
        }
        let values = request.data.as_any().downcast_ref::<Int64Array>().ok_or("expected int64 values")?;
        if values.iter().flatten().any(|v| v < 0) {
            return Err("negative values are not accepted".into());
        }
        let doubled: Int64Array = values.iter().map(|v| v.map(|v| v * 2)).collect();
        let mut params = Parameters::new();
        params.insert("count".into(), values.len().into());
        Ok((doubled.into_data(), params))
    })
    .expect("server");
    println!("serving");
    common::until_orphaned();
}

fn call(
    client: &Client,
    values: &[i64],
    sleep_ms: u64,
    timeout: Duration,
) -> Result<(Vec<i64>, Metadata), ServiceError> {
    let mut params = Parameters::new();
    params.insert("sleep_ms".into(), sleep_ms.into());
    call_with(client, values, params, timeout)
}

/// A call whose handler waits for the file `hold` (see [`serve`]).
fn held_call(client: &Client, hold: &Path, timeout: Duration) -> Result<(Vec<i64>, Metadata), ServiceError> {
    let mut params = Parameters::new();
    params.insert("hold".into(), hold.to_string_lossy().into_owned().into());
    call_with(client, &[1], params, timeout)
}

fn call_with(
    client: &Client,
    values: &[i64],
    params: Parameters,
    timeout: Duration,
) -> Result<(Vec<i64>, Metadata), ServiceError> {
    let reply = client.call(&Int64Array::from(values.to_vec()).into_data(), &params, timeout)?;
    let doubled = reply.data.as_any().downcast_ref::<Int64Array>().expect("int64 reply").values().to_vec();
    Ok((doubled, reply.metadata))
}

#[test]
fn services_across_processes_never_hang() {
    if let Some(service) = common::served_name() {
        return serve(&service);
    }
    let dir = scratch("services");
    let port = free_port();
    // SAFETY: this test is the only one of its binary, and has started no thread yet.
    unsafe { common::be_client(&dir, port) };

    same_process();
    a_dropped_server_waits_for_its_handler();
    let service = unique("double");
    let mut server = spawn_server(TEST, &service, &zenoh_config(&dir, "server", port));
    let client = Arc::new(Client::new(&service, ServiceOptions::default()).expect("client"));
    assert!(client.wait_for_server(Duration::from_secs(60)), "the server never appeared");
    std::thread::scope(|s| {
        for t in 0..4i64 {
            let client = client.clone();
            s.spawn(move || {
                for i in 0..25i64 {
                    let values: Vec<i64> = (0..=(i % 7)).map(|k| t * 1000 + i * 10 + k).collect();
                    let (doubled, meta) =
                        call(&client, &values, (i % 3) as u64, Duration::from_secs(10)).expect("a reply");
                    assert_eq!(doubled, values.iter().map(|v| v * 2).collect::<Vec<_>>(), "call {t}/{i}");
                    assert_eq!(meta.parameters.get("count"), Some(&serde_json::json!(values.len())));
                }
            });
        }
    });
    match call(&client, &[1, -1], 0, Duration::from_secs(10)) {
        Err(ServiceError::Failed { reason, .. }) => assert_eq!(reason, "negative values are not accepted"),
        other => panic!("expected the handler's refusal, got {other:?}"),
    }
    // The handler answers only once the call has ended: the call ends by its own timeout.
    let late = dir.join("late");
    match held_call(&client, &late, Duration::from_millis(300)) {
        Err(e @ ServiceError::Timeout { .. }) => assert!(e.to_string().contains("did not answer within 300ms")),
        other => panic!("expected a timeout, got {other:?}"),
    }
    std::fs::write(&late, b"").expect("let the late answer go");

    // The server dies during a call that it would never answer: the caller learns of the death
    // (`ServerGone`, which a call reports only before its timeout) instead of running out its
    // 30 s.
    let never = dir.join("never");
    let started = never.with_extension("started");
    let killer = std::thread::spawn(move || {
        common::wait_for_file(&started);
        server.kill().expect("kill server");
        server.wait().expect("reap server");
    });
    let died = held_call(&client, &never, Duration::from_secs(30));
    killer.join().expect("killer");
    assert!(matches!(died, Err(ServiceError::ServerGone { .. })), "{died:?}");
    wait_for_no_server(|| client.server_count());
    assert!(!client.wait_for_server(Duration::from_millis(100)), "the server is gone");
    // With no server known, a call fails at once: `NoServer`, never reported after a timeout.
    let none = call(&client, &[1], 0, Duration::from_secs(10));
    assert!(matches!(none, Err(ServiceError::NoServer { .. })), "{none:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn same_process() {
    let service = unique("local");
    let _server = Server::new(&service, ServiceOptions::default(), |r| Ok((r.data.to_data(), Parameters::new())))
        .expect("server");
    let client = Client::new(&service, ServiceOptions::default()).expect("client");
    assert!(client.wait_for_server(Duration::from_secs(60)), "the server never appeared");
    let (echo, _) = call(&client, &[5, 6], 0, Duration::from_secs(10)).expect("reply");
    assert_eq!(echo, vec![5, 6]);
    let other_domain = Client::new(&service, ServiceOptions { domain: 7, ..Default::default() }).expect("client");
    assert!(!other_domain.wait_for_server(Duration::from_millis(100)), "no server in domain 7");
    assert!(matches!(call(&other_domain, &[1], 0, Duration::from_secs(5)), Err(ServiceError::NoServer { .. })));
}

/// Dropping a server returns only once the handler call under way has ended. The handler goes
/// on until the drop has begun (the server's liveliness token is gone), so a drop that did not
/// wait would return first.
fn a_dropped_server_waits_for_its_handler() {
    let service = unique("dropped");
    let watcher = Arc::new(Client::new(&service, ServiceOptions::default()).expect("client"));
    let ended = Arc::new(AtomicBool::new(false));
    let (entered, entering) = mpsc::channel();
    let entered = Mutex::new(entered);
    let handling = (watcher.clone(), ended.clone());
    let server = Server::new(&service, ServiceOptions::default(), move |r| {
        let (watcher, ended) = &handling;
        entered.lock().expect("entered").send(()).expect("the test waits");
        wait_for_no_server(|| watcher.server_count());
        ended.store(true, Ordering::SeqCst);
        Ok((r.data.to_data(), Parameters::new()))
    })
    .expect("server");
    assert!(watcher.wait_for_server(Duration::from_secs(60)), "the server never appeared");
    let caller = std::thread::spawn(move || call(&watcher, &[1], 0, Duration::from_secs(30)));
    entering.recv().expect("the handler was called");
    drop(server);
    assert!(ended.load(Ordering::SeqCst), "the drop returned while its handler was still running");
    // The reply may or may not have left before the server went: either is a clean outcome.
    let outcome = caller.join().expect("caller");
    assert!(matches!(outcome, Ok(_) | Err(ServiceError::ServerGone { .. })), "{outcome:?}");
}

//! Services across real processes: this test binary re-runs itself as the server process.
//!
//! The two processes meet over Zenoh on loopback through explicit endpoints (the server listens
//! on a port, the client connects to it), with no multicast: one test function, so the process
//! environment is set before any thread uses it.

use std::process::{Child, Command};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nerve_topic::arrow_array::{Array, Int64Array};
use nerve_topic::service::{Client, Server, ServiceError, ServiceOptions};
use nerve_topic::{Metadata, Parameters};

const ROLE: &str = "NERVE_SERVICE_TEST_ROLE";
const NAME: &str = "NERVE_SERVICE_TEST_NAME";
const TEST: &str = "services_across_processes_never_hang";

fn unique(name: &str) -> String {
    format!("test/{name}/{}", std::process::id())
}

/// Zenoh settings that listen on `port` (the server) or connect to it (the client).
fn zenoh_config(dir: &std::path::Path, role: &str, port: u16) -> std::path::PathBuf {
    let endpoints = match role {
        "server" => format!("listen: {{ endpoints: [\"tcp/127.0.0.1:{port}\"] }},"),
        _ => format!(
            "listen: {{ endpoints: [\"tcp/127.0.0.1:0\"] }}, connect: {{ endpoints: [\"tcp/127.0.0.1:{port}\"] }},"
        ),
    };
    let path = dir.join(format!("{role}.json5"));
    let text = format!("{{ mode: \"peer\", {endpoints} scouting: {{ multicast: {{ enabled: false }} }} }}");
    std::fs::write(&path, text).expect("zenoh config");
    path
}

fn spawn_server(service: &str, config: &std::path::Path) -> Child {
    Command::new(std::env::current_exe().expect("test binary"))
        .args([TEST, "--exact", "--nocapture"])
        .env(ROLE, "server")
        .env(NAME, service)
        .env(nerve_topic::network::CONFIG_ENV, config)
        .spawn()
        .expect("server process")
}

/// The server process: doubles every value, sleeps `sleep_ms` (a parameter) first, and refuses
/// negative values. It runs until killed.
fn serve() {
    let service = std::env::var(NAME).expect("name");
    let _server = Server::new(&service, ServiceOptions { workers: 4, ..Default::default() }, |request| {
        if let Some(serde_json::Value::Number(ms)) = request.metadata.parameters.get("sleep_ms") {
            std::thread::sleep(Duration::from_millis(ms.as_u64().unwrap_or(0)));
        }
        let values = request.data.as_any().downcast_ref::<Int64Array>().ok_or("expected int64 values")?;
        if values.iter().flatten().any(|v| v < 0) {
            return Err("negative values are not accepted".to_owned());
        }
        let doubled: Int64Array = values.iter().map(|v| v.map(|v| v * 2)).collect();
        let mut params = Parameters::new();
        params.insert("count".into(), values.len().into());
        Ok((doubled.into_data(), params))
    })
    .expect("server");
    println!("serving");
    // Until the test that started it is gone, however that test ends.
    let parent = rustix::process::getppid();
    while rustix::process::getppid() == parent {
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn is_server() -> bool {
    if std::env::var(ROLE).as_deref() == Ok("server") {
        serve();
        return true;
    }
    false
}

fn call(
    client: &Client,
    values: &[i64],
    sleep_ms: u64,
    timeout: Duration,
) -> Result<(Vec<i64>, Metadata), ServiceError> {
    let mut params = Parameters::new();
    params.insert("sleep_ms".into(), sleep_ms.into());
    let reply = client.call(&Int64Array::from(values.to_vec()).into_data(), &params, timeout)?;
    let doubled = reply.data.as_any().downcast_ref::<Int64Array>().expect("int64 reply").values().to_vec();
    Ok((doubled, reply.metadata))
}

fn wait_for_server(client: &Client) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while client.server_count() == 0 {
        assert!(Instant::now() < deadline, "the server never appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn services_across_processes_never_hang() {
    if is_server() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("nerve-services-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("addr").port();
    // SAFETY: set before this test (the only one of this binary) starts any thread, and read
    // only afterwards, when the first service opens the Zenoh session.
    unsafe { std::env::set_var(nerve_topic::network::CONFIG_ENV, zenoh_config(&dir, "client", port)) };

    same_process();
    let service = unique("double");
    let mut server = spawn_server(&service, &zenoh_config(&dir, "server", port));
    let client = Arc::new(Client::new(&service, ServiceOptions::default()).expect("client"));
    wait_for_server(&client);
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
    let started = Instant::now();
    match call(&client, &[1], 3000, Duration::from_millis(300)) {
        Err(e @ ServiceError::Timeout { .. }) => assert!(e.to_string().contains("did not answer within 300ms")),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(2), "the timeout took {:?}", started.elapsed());

    // The server dies during a call: the caller learns it long before its timeout.
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        server.kill().expect("kill server");
        server.wait().expect("reap server");
    });
    let started = Instant::now();
    let died = call(&client, &[1], 10_000, Duration::from_secs(30));
    killer.join().expect("killer");
    assert!(matches!(died, Err(ServiceError::ServerGone { .. })), "{died:?}");
    assert!(started.elapsed() < Duration::from_secs(15), "noticed after {:?}", started.elapsed());
    let deadline = Instant::now() + Duration::from_secs(20);
    while client.server_count() > 0 {
        assert!(Instant::now() < deadline, "the dead server is still counted");
        std::thread::sleep(Duration::from_millis(20));
    }
    let started = Instant::now();
    let none = call(&client, &[1], 0, Duration::from_secs(10));
    assert!(matches!(none, Err(ServiceError::NoServer { .. })), "{none:?}");
    assert!(started.elapsed() < Duration::from_secs(2), "no-server took {:?}", started.elapsed());
    let _ = std::fs::remove_dir_all(&dir);
}

fn same_process() {
    let service = unique("local");
    let _server = Server::new(&service, ServiceOptions::default(), |r| Ok((r.data.to_data(), Parameters::new())))
        .expect("server");
    let client = Client::new(&service, ServiceOptions::default()).expect("client");
    wait_for_server(&client);
    let (echo, _) = call(&client, &[5, 6], 0, Duration::from_secs(10)).expect("reply");
    assert_eq!(echo, vec![5, 6]);
    let other_domain = Client::new(&service, ServiceOptions { domain: 7, ..Default::default() }).expect("client");
    assert!(matches!(call(&other_domain, &[1], 0, Duration::from_secs(5)), Err(ServiceError::NoServer { .. })));
}

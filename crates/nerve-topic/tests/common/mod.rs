//! What the cross-process tests of services and actions share: a test binary that re-runs
//! itself as the server process, and the Zenoh endpoints that let the two processes meet on
//! loopback without multicast.

// Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

/// Environment variable that makes the re-run test binary the server.
pub const ROLE: &str = "NERVE_TEST_ROLE";
/// Environment variable naming the service or action the server serves.
pub const NAME: &str = "NERVE_TEST_NAME";

/// A name no other test process uses.
pub fn unique(name: &str) -> String {
    format!("test/{name}/{}", std::process::id())
}

/// A folder of this test process for its Zenoh configurations.
pub fn scratch(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nerve-{what}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A TCP port of loopback free now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("addr").port()
}

/// Zenoh settings that listen on `port` (the server) or connect to it (the client).
pub fn zenoh_config(dir: &Path, role: &str, port: u16) -> PathBuf {
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

/// Makes this process a client of servers that listen as [`zenoh_config`] says.
///
/// # Safety
/// Call it before the test starts any thread (the environment is read when the first
/// endpoint opens the Zenoh session).
pub unsafe fn be_client(dir: &Path, port: u16) {
    // SAFETY: no other thread runs yet, as the caller promises.
    unsafe { std::env::set_var(nerve_topic::session::CONFIG_ENV, zenoh_config(dir, "client", port)) };
}

/// Runs this test binary's test `test` again, as the server of `name`.
pub fn spawn_server(test: &str, name: &str, config: &Path) -> Child {
    Command::new(std::env::current_exe().expect("test binary"))
        .args([test, "--exact", "--nocapture"])
        .env(ROLE, "server")
        .env(NAME, name)
        .env(nerve_topic::session::CONFIG_ENV, config)
        .spawn()
        .expect("server process")
}

/// The name to serve, when this process is a server started by [`spawn_server`].
pub fn served_name() -> Option<String> {
    (std::env::var(ROLE).as_deref() == Ok("server")).then(|| std::env::var(NAME).expect("name"))
}

/// Waits until the test process that started this server is gone, however that test ends.
pub fn until_orphaned() {
    let parent = rustix::process::getppid();
    while rustix::process::getppid() == parent {
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits up to 60 s (a bound only a broken build reaches) for the file `path` to exist.
pub fn wait_for_file(path: &Path) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !path.exists() {
        assert!(std::time::Instant::now() < deadline, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits up to 20 s for `count` to drop to zero.
pub fn wait_for_no_server(count: impl Fn() -> usize) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while count() > 0 {
        assert!(std::time::Instant::now() < deadline, "a dead server is still counted");
        std::thread::sleep(Duration::from_millis(20));
    }
}

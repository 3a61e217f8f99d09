//! The HTTP server: the page, and the JSON and WebSocket endpoints it reads.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use nerve_message::run_status::RunStatus;
use serde::Deserialize;

use crate::error::StartError;
use crate::stats::Watcher;
use crate::{channel, graph, logs, transforms};

/// The port `nerve view` listens on unless told otherwise.
pub const DEFAULT_PORT: u16 = 8766;

/// How often the runs are looked at while a page is open, and how often the page asks.
const INTERVAL: Duration = Duration::from_secs(1);

/// The runs are looked at only while a page asked for the graph within this long.
const WANTED_FOR: Duration = Duration::from_secs(5);

/// How often the watcher looks whether it is wanted or stopped.
const TICK: Duration = Duration::from_millis(50);

/// How the dashboard is served.
#[derive(Debug, Clone)]
pub struct Options {
    /// Address to listen on: loopback unless the user asks for more.
    pub address: IpAddr,
    /// Port to listen on; 0 picks a free one ([`View::port`] tells which).
    pub port: u16,
    /// Topic domain of the channels and transforms shown.
    pub domain: u32,
}

impl Default for Options {
    fn default() -> Self {
        Self { address: IpAddr::V4(Ipv4Addr::LOCALHOST), port: DEFAULT_PORT, domain: 0 }
    }
}

/// What the request handlers share with the thread that looks at the runs.
pub(crate) struct Shared {
    pub(crate) domain: u32,
    /// Whether it listens on loopback only.
    loopback: bool,
    /// The last look: the runs, and the graph JSON made of them.
    look: Mutex<(Vec<RunStatus>, Bytes)>,
    /// When a page last asked for the graph, in milliseconds since `started`.
    wanted_at: AtomicU64,
    started: Instant,
    stop: AtomicBool,
}

impl Shared {
    /// The runs of the last look.
    pub(crate) fn runs(&self) -> Vec<RunStatus> {
        self.look.lock().unwrap_or_else(PoisonError::into_inner).0.clone()
    }

    fn millis(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

/// The dashboard, served until dropped.
pub struct View {
    port: u16,
    shared: Arc<Shared>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    threads: Vec<JoinHandle<()>>,
}

impl View {
    /// Starts serving on `options.address:options.port`.
    ///
    /// # Errors
    /// [`StartError`] when the address cannot be listened on or a thread cannot start.
    pub fn start(options: &Options) -> Result<Self, StartError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("nerve-view")
            .enable_all()
            .build()
            .map_err(|source| StartError::Spawn { what: "async runtime", source })?;
        let address = SocketAddr::new(options.address, options.port);
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(address))
            .map_err(|source| StartError::Listen { address, source })?;
        let port = listener.local_addr().map_err(|source| StartError::Listen { address, source })?.port();
        let shared = Arc::new(Shared {
            domain: options.domain,
            loopback: options.address.is_loopback(),
            look: Mutex::new((Vec::new(), Bytes::from_static(graph::EMPTY.as_bytes()))),
            wanted_at: AtomicU64::new(0),
            started: Instant::now(),
            stop: AtomicBool::new(false),
        });
        let app = Router::new()
            .route("/", get(|| async { asset("text/html; charset=utf-8", include_str!("../assets/index.html")) }))
            .route("/app.js", get(|| async { asset("text/javascript", include_str!("../assets/app.js")) }))
            .route("/style.css", get(|| async { asset("text/css", include_str!("../assets/style.css")) }))
            .route("/api/graph", get(graph_json))
            .route("/api/logs", get(log_tail))
            .route("/api/channel", get(channel_socket))
            .route("/api/tf", get(tf_socket))
            .with_state(Arc::clone(&shared));
        let (shutdown, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = std::thread::Builder::new()
            .name("nerve-view-http".into())
            .spawn(move || {
                let served = runtime.block_on(async {
                    axum::serve(listener, app).with_graceful_shutdown(async { stopped.await.unwrap_or(()) }).await
                });
                if let Err(e) = served {
                    tracing::error!("the dashboard stopped serving: {e}");
                }
            })
            .map_err(|source| StartError::Spawn { what: "server thread", source })?;
        let watching = Arc::clone(&shared);
        let watcher = std::thread::Builder::new()
            .name("nerve-view-watch".into())
            .spawn(move || watch(&watching))
            .map_err(|source| StartError::Spawn { what: "watcher thread", source })?;
        Ok(Self { port, shared, shutdown: Some(shutdown), threads: vec![server, watcher] })
    }

    /// The port it listens on.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for View {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// Looks at the runs every [`INTERVAL`] while a page wants the graph.
fn watch(shared: &Shared) {
    let mut watcher = Watcher::default();
    let mut keys = graph::OutputKeys::default();
    let mut last: Option<Instant> = None;
    while !shared.stop.load(Ordering::Acquire) {
        let asked = shared.wanted_at.load(Ordering::Acquire);
        let wanted = asked > 0 && shared.started.elapsed().saturating_sub(Duration::from_millis(asked)) < WANTED_FOR;
        if wanted && last.is_none_or(|at| at.elapsed() >= INTERVAL) {
            last = Some(Instant::now());
            let runs = nerve_runtime::inspect::running();
            let stats = watcher.look(&runs);
            keys.update(&runs);
            let json = graph::json(&runs, &stats, &keys, shared.domain, INTERVAL);
            *shared.look.lock().unwrap_or_else(PoisonError::into_inner) = (runs, Bytes::from(json));
        } else if !wanted {
            // Rates start again from the next look: counters read long ago would average them.
            watcher = Watcher::default();
            last = None;
        }
        std::thread::sleep(TICK);
    }
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "no-cache")], body).into_response()
}

/// Whether a request comes from the dashboard's own page: a page of another site the browser
/// has open must not read the robot's data, nor may a site whose name it rebinds to loopback
/// (so a dashboard on loopback answers loopback names only).
fn same_origin(headers: &HeaderMap, loopback: bool) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else { return false };
    let name = host.rsplit_once(':').map_or(host, |(name, _)| name);
    if loopback && !matches!(name, "localhost" | "127.0.0.1" | "[::1]") {
        return false;
    }
    match headers.get(header::ORIGIN).map(|o| o.to_str()) {
        // Not a browser's cross-site request: curl, a test client.
        None => true,
        Some(Ok(origin)) => origin.strip_prefix("http://") == Some(host),
        Some(Err(_)) => false,
    }
}

fn forbidden() -> Response {
    (StatusCode::FORBIDDEN, "the dashboard answers its own page only").into_response()
}

async fn graph_json(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    if !same_origin(&headers, shared.loopback) {
        return forbidden();
    }
    shared.wanted_at.store(shared.millis().max(1), Ordering::Release);
    let json = shared.look.lock().unwrap_or_else(PoisonError::into_inner).1.clone();
    ([(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-cache")], json).into_response()
}

/// `/api/logs?run=RUN_ID&node=NODE&lines=N`.
#[derive(Debug, Deserialize)]
struct LogQuery {
    run: String,
    node: String,
    lines: Option<usize>,
}

async fn log_tail(State(shared): State<Arc<Shared>>, headers: HeaderMap, Query(q): Query<LogQuery>) -> Response {
    if !same_origin(&headers, shared.loopback) {
        return forbidden();
    }
    let runs = shared.runs();
    let lines = q.lines.unwrap_or(logs::DEFAULT_LINES).min(logs::MAX_LINES);
    let tail = tokio::task::spawn_blocking(move || logs::tail(&runs, &q.run, &q.node, lines)).await;
    match tail {
        Ok(Ok(text)) => ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response(),
        Ok(Err(why)) => (StatusCode::NOT_FOUND, why).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// `/api/channel?key=KEY`.
#[derive(Debug, Deserialize)]
struct ChannelQuery {
    key: String,
}

async fn channel_socket(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Query(q): Query<ChannelQuery>,
    ws: WebSocketUpgrade,
) -> Response {
    if !same_origin(&headers, shared.loopback) {
        return forbidden();
    }
    ws.on_upgrade(move |socket| channel::serve(socket, q.key, shared))
}

async fn tf_socket(State(shared): State<Arc<Shared>>, headers: HeaderMap, ws: WebSocketUpgrade) -> Response {
    if !same_origin(&headers, shared.loopback) {
        return forbidden();
    }
    ws.on_upgrade(move |socket| transforms::serve(socket, shared))
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    #[test]
    fn only_the_dashboards_own_page_and_non_browsers_are_answered() {
        let from = |host: &'static str, origin: Option<&'static str>| {
            let mut h = HeaderMap::new();
            h.insert(header::HOST, HeaderValue::from_static(host));
            if let Some(origin) = origin {
                h.insert(header::ORIGIN, HeaderValue::from_static(origin));
            }
            h
        };
        let headers = |origin| from("127.0.0.1:8766", origin);
        assert!(same_origin(&headers(None), true));
        assert!(same_origin(&headers(Some("http://127.0.0.1:8766")), true));
        assert!(!same_origin(&headers(Some("http://evil.example")), true));
        assert!(!same_origin(&headers(Some("http://127.0.0.1:9999")), true));
        // A name rebound to loopback.
        let rebound = from("evil.example:8766", Some("http://evil.example:8766"));
        assert!(!same_origin(&rebound, true));
        assert!(same_origin(&rebound, false), "served beyond loopback, as asked");
        assert!(same_origin(&from("localhost:8766", None), true));
    }
}

//! The transform tree of the shared `tf` and `tf_static` topics, over a WebSocket, once a
//! second while the page's panel is open: the listener exists only as long as the socket.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message as WsMessage, WebSocket};
use nerve_tf::{BufferOptions, TransformBuffer};
use serde_json::{Value, json};

use crate::server::Shared;

/// How often the tree is sent.
const EVERY: Duration = Duration::from_secs(1);

/// Serves the tree on `socket` until the page closes it.
pub(crate) async fn serve(mut socket: WebSocket, shared: Arc<Shared>) {
    let domain = shared.domain;
    let buffer =
        tokio::task::spawn_blocking(move || TransformBuffer::new(BufferOptions { domain, ..BufferOptions::default() }))
            .await;
    let buffer = match buffer {
        Ok(Ok(buffer)) => Arc::new(buffer),
        Ok(Err(e)) => return refuse(socket, &e.to_string()).await,
        Err(e) => return refuse(socket, &e.to_string()).await,
    };
    let mut ticks = tokio::time::interval(EVERY);
    loop {
        tokio::select! {
            _ = ticks.tick() => {
                let looking = Arc::clone(&buffer);
                let Ok(tree) = tokio::task::spawn_blocking(move || tree(&looking)).await else { break };
                if socket.send(WsMessage::Text(tree.to_string().into())).await.is_err() {
                    break;
                }
            }
            received = socket.recv() => match received {
                Some(Ok(WsMessage::Ping(_) | WsMessage::Pong(_))) => {}
                _ => break,
            },
        }
    }
    let _ = tokio::task::spawn_blocking(move || drop(buffer)).await;
}

/// Every edge of the tree with its latest pose: `{"now_ns", "edges": [{"parent", "child",
/// "static", "rate_hz", "latest_ns", "translation", "rotation"}]}`.
fn tree(buffer: &TransformBuffer) -> Value {
    let edges: Vec<Value> = buffer
        .edges()
        .into_iter()
        .map(|edge| {
            let pose = buffer.lookup(&edge.parent, &edge.child, None).ok();
            json!({
                "parent": edge.parent,
                "child": edge.child,
                "static": edge.is_static,
                "rate_hz": edge.rate_hz,
                "latest_ns": edge.latest_ns,
                "translation": pose.as_ref().map(|p| p.transform.translation),
                "rotation": pose.as_ref().map(|p| p.transform.rotation),
            })
        })
        .collect();
    // Stamps are the wall clock's (a simulated run's transforms show their age in its time).
    let now_ns = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    json!({ "now_ns": u64::try_from(now_ns).unwrap_or(u64::MAX), "edges": edges })
}

async fn refuse(mut socket: WebSocket, why: &str) {
    tracing::warn!("cannot listen to the transform tree: {why}");
    let _ = socket.send(WsMessage::Text(json!({ "error": why }).to_string().into())).await;
    let _ = socket.send(WsMessage::Close(None)).await;
}

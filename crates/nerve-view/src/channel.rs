//! A channel's latest value, over a WebSocket, for as long as the page looks at it.
//!
//! The page asks with a `next` text message when it has drawn the last value; the server then
//! sends the newest message that arrived since (a JSON header, and for an image a binary
//! message of its pixels or points, see [`crate::preview`]), at most [`MAX_RATE_HZ`] times a second.
//! Messages in between are skipped: the subscriber keeps only the latest, so nothing queues
//! however slow the browser is, and a fast channel costs the dashboard no more than a slow one.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message as WsMessage, WebSocket};
use nerve_foxglove::channels;
use nerve_topic::{CallbackMode, Callbacks, Message, Subscriber, SubscriberOptions, TopicError};
use serde_json::json;
use tokio::sync::watch;

use crate::preview;
use crate::server::Shared;

/// The most messages of one channel the page is sent per second: enough to watch a camera,
/// and a 30 Hz one costs a third of its frames' conversions.
pub const MAX_RATE_HZ: u32 = 10;

/// Serves the channel of topic key `key` on `socket` until the page closes it.
pub(crate) async fn serve(mut socket: WebSocket, key: String, shared: Arc<Shared>) {
    let (latest, mut newest) = watch::channel::<Option<Arc<Message>>>(None);
    let domain = shared.domain;
    let subscribing = key.clone();
    let subscription = tokio::task::spawn_blocking(move || subscribe(&subscribing, domain, latest)).await;
    let subscription = match subscription {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return refuse(socket, &format!("cannot subscribe to `{key}`: {e}")).await,
        Err(e) => return refuse(socket, &format!("cannot subscribe to `{key}`: {e}")).await,
    };
    let gap = Duration::from_secs(1) / MAX_RATE_HZ;
    let mut next_at = tokio::time::Instant::now();
    loop {
        match socket.recv().await {
            Some(Ok(WsMessage::Text(text))) if text.as_str() == "next" => {}
            Some(Ok(WsMessage::Ping(_) | WsMessage::Pong(_))) => continue,
            _ => break,
        }
        tokio::select! {
            () = tokio::time::sleep_until(next_at) => {}
            () = left(&mut socket) => break,
        }
        let message = tokio::select! {
            changed = newest.changed() => match changed {
                Ok(()) => newest.borrow_and_update().clone(),
                Err(_) => break,
            },
            () = left(&mut socket) => break,
        };
        let Some(message) = message else { continue };
        next_at = tokio::time::Instant::now() + gap;
        let Ok(shown) = tokio::task::spawn_blocking(move || preview::of(&message)).await else { break };
        if socket.send(WsMessage::Text(shown.header.to_string().into())).await.is_err() {
            break;
        }
        if let Some(body) = shown.body
            && socket.send(WsMessage::Binary(body.into())).await.is_err()
        {
            break;
        }
    }
    // Unsubscribing joins the subscriber's thread: not on the async runtime's.
    let _ = tokio::task::spawn_blocking(move || drop(subscription)).await;
}

/// Returns once the page has gone: it sends nothing while it waits for a message but the
/// WebSocket's keepalives, which some clients send (Python's `websockets` every 20 s), so
/// anything else, or the socket's end, is its going away. Cancel-safe, as `recv` is.
async fn left(socket: &mut WebSocket) {
    while let Some(Ok(WsMessage::Ping(_) | WsMessage::Pong(_))) = socket.recv().await {}
}

/// Subscribes to `key`, keeping only its newest message in `latest`.
fn subscribe(key: &str, domain: u32, latest: watch::Sender<Option<Arc<Message>>>) -> Result<Callbacks, TopicError> {
    let (topic, run) = channels::scope_of(key);
    let options =
        SubscriberOptions { domain, scope: channels::reach(domain, key), queue_size: 1, keep_latest: true, run };
    Subscriber::new(&topic, options)?.on_message(CallbackMode::Serial, move |m| {
        latest.send_replace(Some(Arc::new(m)));
    })
}

/// Tells the page why its channel cannot be shown, and closes.
async fn refuse(mut socket: WebSocket, why: &str) {
    tracing::warn!("{why}");
    let _ = socket.send(WsMessage::Text(json!({ "error": why }).to_string().into())).await;
    let _ = socket.send(WsMessage::Close(None)).await;
}

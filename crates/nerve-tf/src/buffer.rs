//! The listener: subscribes to `tf` and `tf_static` and keeps a [`FrameTree`] up to date on
//! the subscribers' callback threads.

use std::collections::HashSet;
use std::mem::Discriminant;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use nerve_shm::sync::{lock, wait_timeout};
use nerve_topic::{CallbackMode, Callbacks, Message, Subscriber, SubscriberOptions};

use crate::broadcaster::TfOptions;
use crate::error::TfError;
use crate::transform::StampedTransform;
use crate::tree::{DEFAULT_CACHE, EdgeInfo, FrameTree};
use crate::wire::{self, TF_STATIC_TOPIC, TF_TOPIC};

/// Messages a transform subscriber holds while its callback is busy: broadcasters send in
/// bursts (several nodes at once), and a lost message is a hole in an edge's history.
const QUEUE: usize = 100;

/// How a [`TransformBuffer`] is set up.
#[derive(Debug, Clone)]
pub struct BufferOptions {
    /// Topic domain, as for the broadcasters.
    pub domain: u32,
    /// History each moving edge keeps.
    pub cache: Duration,
}

impl Default for BufferOptions {
    fn default() -> Self {
        Self { domain: TfOptions::default().domain, cache: DEFAULT_CACHE }
    }
}

struct Shared {
    tree: Mutex<FrameTree>,
    /// Signalled after every message, for lookups that wait.
    changed: Condvar,
    /// Refusals already logged as warnings, by edge and kind: a broadcaster repeating a bad
    /// transform at 100 Hz is reported once, then at debug level.
    reported: Mutex<HashSet<(String, String, Discriminant<TfError>)>>,
}

impl Shared {
    fn receive(&self, message: &Message, is_static: bool) {
        let decoded = match message.object {
            None => wire::decode(&message.data).map_err(|e| e.to_string()),
            Some(_) => Err("not an Arrow array (a Python object published in this process?)".to_owned()),
        };
        let transforms = match decoded {
            Ok(t) => t,
            Err(why) => {
                let e = TfError::Malformed { topic: message.id.to_string(), why };
                tracing::warn!(error = %e, "transform message skipped");
                return;
            }
        };
        let mut tree = lock(&self.tree);
        for t in &transforms {
            if let Err(e) = tree.insert(t, is_static) {
                self.report(t, &e);
            }
        }
        drop(tree);
        self.changed.notify_all();
    }

    fn report(&self, t: &StampedTransform, e: &TfError) {
        if lock(&self.reported).insert((t.parent.clone(), t.child.clone(), std::mem::discriminant(e))) {
            tracing::warn!(error = %e, "transform refused (further refusals of this kind on this edge at debug level)");
        } else {
            tracing::debug!(error = %e, "transform refused");
        }
    }
}

/// Listens to every broadcaster of its domain and answers lookups between any two frames.
///
/// ```no_run
/// use std::time::Duration;
/// use nerve_tf::TransformBuffer;
///
/// let buffer = TransformBuffer::new(Default::default())?;
/// let camera = buffer.lookup_wait("world", "camera", None, Duration::from_secs(1))?;
/// println!("camera at {:?} in world", camera.transform.translation);
/// # Ok::<(), nerve_tf::TfError>(())
/// ```
pub struct TransformBuffer {
    shared: Arc<Shared>,
    _moving: Callbacks,
    _static: Callbacks,
}

impl TransformBuffer {
    /// Subscribes to `tf` and `tf_static`.
    ///
    /// # Errors
    /// The topics or their threads cannot be set up.
    pub fn new(options: BufferOptions) -> Result<Self, TfError> {
        let shared = Arc::new(Shared {
            tree: Mutex::new(FrameTree::new(options.cache)),
            changed: Condvar::new(),
            reported: Mutex::default(),
        });
        let listen = |topic: &str, is_static: bool| -> Result<Callbacks, TfError> {
            let sub = Subscriber::new(
                topic,
                SubscriberOptions { domain: options.domain, queue_size: QUEUE, ..SubscriberOptions::default() },
            )?;
            let shared = shared.clone();
            Ok(sub.on_message(CallbackMode::Serial, move |m| shared.receive(&m, is_static))?)
        };
        let moving = listen(TF_TOPIC, false)?;
        let fixed = listen(TF_STATIC_TOPIC, true)?;
        Ok(Self { shared, _moving: moving, _static: fixed })
    }

    /// The pose of `source` in `target` at `time` (ns; `None`: the latest time the chain
    /// allows); see [`FrameTree::lookup`].
    ///
    /// # Errors
    /// As [`FrameTree::lookup`].
    pub fn lookup(&self, target: &str, source: &str, time: Option<i64>) -> Result<StampedTransform, TfError> {
        lock(&self.shared.tree).lookup(target, source, time)
    }

    /// Like [`TransformBuffer::lookup`], but waits up to `timeout` for the transforms to
    /// arrive (for a listener that just started, or a time a little ahead).
    ///
    /// # Errors
    /// The lookup's error as it stands when `timeout` runs out.
    pub fn lookup_wait(
        &self,
        target: &str,
        source: &str,
        time: Option<i64>,
        timeout: Duration,
    ) -> Result<StampedTransform, TfError> {
        let deadline = Instant::now() + timeout;
        let mut tree = lock(&self.shared.tree);
        loop {
            let err = match tree.lookup(target, source, time) {
                Ok(t) => return Ok(t),
                Err(e) => e,
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(err);
            }
            tree = wait_timeout(&self.shared.changed, tree, left).0;
        }
    }

    /// `point` (coordinates in `source`) in `target`'s coordinates at `time`.
    ///
    /// # Errors
    /// As [`TransformBuffer::lookup`].
    pub fn transform_point(
        &self,
        target: &str,
        source: &str,
        point: [f64; 3],
        time: Option<i64>,
    ) -> Result<[f64; 3], TfError> {
        Ok(self.lookup(target, source, time)?.transform.apply(point))
    }

    /// Adds a transform by hand, as if received (static or not).
    ///
    /// # Errors
    /// As [`FrameTree::insert`].
    pub fn insert(&self, transform: &StampedTransform, is_static: bool) -> Result<(), TfError> {
        lock(&self.shared.tree).insert(transform, is_static)?;
        self.shared.changed.notify_all();
        Ok(())
    }

    /// Every frame heard of, sorted.
    #[must_use]
    pub fn frames(&self) -> Vec<String> {
        lock(&self.shared.tree).frames()
    }

    /// Every edge, with its kind, stamps and rate.
    #[must_use]
    pub fn edges(&self) -> Vec<EdgeInfo> {
        lock(&self.shared.tree).edges()
    }
}

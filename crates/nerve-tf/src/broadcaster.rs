//! Sending transforms: time-stamped ones on `tf`, static ones on `tf_static`, re-sent to every
//! subscriber that joins later.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use nerve_shm::sync::lock;
use nerve_topic::{Arrivals, Parameters, Publisher, PublisherOptions};

use crate::error::TfError;
use crate::transform::StampedTransform;
use crate::wire::{self, TF_STATIC_TOPIC, TF_TOPIC};

/// How often the static broadcaster's re-send thread checks that its broadcaster still lives.
const LIVENESS_CHECK: Duration = Duration::from_millis(200);

/// How broadcasters and buffers are set up.
#[derive(Debug, Clone, Default)]
pub struct TfOptions {
    /// Topic domain (endpoints of two domains never see each other).
    pub domain: u32,
}

fn publisher(topic: &str, options: &TfOptions) -> Result<Publisher, TfError> {
    Ok(Publisher::new(topic, PublisherOptions { domain: options.domain, ..PublisherOptions::default() })?)
}

fn checked(transforms: &[StampedTransform]) -> Result<Vec<StampedTransform>, TfError> {
    transforms.iter().map(StampedTransform::checked).collect()
}

/// Publishes time-stamped transforms on `tf`, several in one message.
///
/// ```no_run
/// use nerve_tf::{StampedTransform, Transform, TransformBroadcaster};
///
/// let broadcaster = TransformBroadcaster::new(Default::default())?;
/// let pose = Transform::new([1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0])?;
/// broadcaster.send(&[StampedTransform::now("world", "base", pose)])?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TransformBroadcaster {
    publisher: Publisher,
}

impl TransformBroadcaster {
    /// Starts publishing on `tf`.
    ///
    /// # Errors
    /// The topic cannot be set up.
    pub fn new(options: TfOptions) -> Result<Self, TfError> {
        Ok(Self { publisher: publisher(TF_TOPIC, &options)? })
    }

    /// Sends `transforms` in one message.
    ///
    /// # Errors
    /// [`TfError::Invalid`] naming the first transform that is not one (nothing is sent), or
    /// the topic failed.
    pub fn send(&self, transforms: &[StampedTransform]) -> Result<(), TfError> {
        let transforms = checked(transforms)?;
        Ok(self.publisher.send(&wire::encode(&transforms), &Parameters::new())?)
    }
}

struct StaticSet {
    publisher: Publisher,
    /// Every static transform sent so far, by child frame.
    transforms: Mutex<BTreeMap<String, StampedTransform>>,
}

impl StaticSet {
    fn publish(&self) -> Result<(), TfError> {
        let all: Vec<StampedTransform> = lock(&self.transforms).values().cloned().collect();
        Ok(self.publisher.send(&wire::encode(&all), &Parameters::new())?)
    }
}

/// Publishes static transforms on `tf_static`: every message holds all the transforms this
/// broadcaster was given (a later one for the same child replaces the earlier), and the set
/// is sent again whenever a subscriber joins, so listeners that start later get it too.
pub struct StaticTransformBroadcaster {
    set: Arc<StaticSet>,
}

impl StaticTransformBroadcaster {
    /// Starts publishing on `tf_static`, and a thread that re-sends to late subscribers.
    ///
    /// # Errors
    /// The topic or the thread cannot be set up.
    pub fn new(options: TfOptions) -> Result<Self, TfError> {
        let set =
            Arc::new(StaticSet { publisher: publisher(TF_STATIC_TOPIC, &options)?, transforms: Mutex::default() });
        let arrivals = set.publisher.arrivals();
        let weak = Arc::downgrade(&set);
        std::thread::Builder::new()
            .name("nerve-tf-static".into())
            .spawn(move || resend_to_late_subscribers(&weak, &arrivals))
            .map_err(|e| TfError::Topic(nerve_topic::TopicError::Thread(e)))?;
        Ok(Self { set })
    }

    /// Adds `transforms` to the set and sends the whole set.
    ///
    /// # Errors
    /// [`TfError::Invalid`] naming the first transform that is not one (nothing is added), or
    /// the topic failed.
    pub fn send(&self, transforms: &[StampedTransform]) -> Result<(), TfError> {
        let transforms = checked(transforms)?;
        {
            let mut set = lock(&self.set.transforms);
            set.extend(transforms.into_iter().map(|t| (t.child.clone(), t)));
        }
        self.set.publish()
    }
}

/// Sends the set again each time a subscriber joins, until the broadcaster is dropped.
fn resend_to_late_subscribers(set: &Weak<StaticSet>, arrivals: &Arrivals) {
    // From zero, not from the count when this thread starts: a subscriber that linked after the
    // first send but before this thread ran would otherwise never get the set.
    let mut seen = 0;
    loop {
        let now = arrivals.wait_past(seen, LIVENESS_CHECK);
        let Some(set) = set.upgrade() else { return };
        if now == seen {
            continue;
        }
        seen = now;
        let empty = lock(&set.transforms).is_empty();
        if empty {
            continue;
        }
        match set.publish() {
            Ok(()) => tracing::debug!(subscribers = now, "static transforms sent to a new subscriber"),
            Err(e) => tracing::warn!(error = %e, "cannot send static transforms to a new subscriber"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::Transform;
    use nerve_topic::{Subscriber, SubscriberOptions};

    /// The re-send thread may start after a subscriber linked and after the first send missed
    /// it (a busy machine): that subscriber must still get the set.
    #[test]
    fn a_subscriber_that_linked_before_the_resend_thread_ran_gets_the_set() -> Result<(), Box<dyn std::error::Error>> {
        let options = TfOptions { domain: 4_242 };
        let set =
            Arc::new(StaticSet { publisher: publisher(TF_STATIC_TOPIC, &options)?, transforms: Mutex::default() });
        let pose = Transform::new([0.2, 0.0, 0.5], [0.0, 0.0, 0.0, 1.0])?;
        lock(&set.transforms).insert("camera".into(), StampedTransform::now("base", "camera", pose));
        set.publish()?;
        let sub = Subscriber::new(TF_STATIC_TOPIC, SubscriberOptions { domain: options.domain, ..Default::default() })?;
        let arrivals = set.publisher.arrivals();
        assert_eq!(arrivals.count(), 1, "the subscriber joined before the thread starts");

        let weak = Arc::downgrade(&set);
        let resend = std::thread::spawn(move || resend_to_late_subscribers(&weak, &arrivals));
        let got = sub.recv(Some(Duration::from_secs(60)))?.expect("the set was sent again");
        assert_eq!(wire::decode(&got.data)?[0].child, "camera");
        drop(set);
        resend.join().map_err(|_| "the re-send thread panicked")?;
        Ok(())
    }
}

//! Sending transforms: time-stamped ones on `tf`, static ones on `tf_static`, latched so every
//! subscriber that joins later gets them.

use std::collections::BTreeMap;
use std::sync::Mutex;

use nerve_shm::sync::lock;
use nerve_topic::{Parameters, Publisher, PublisherOptions};

use crate::error::TfError;
use crate::transform::StampedTransform;
use crate::wire::{self, TF_STATIC_TOPIC, TF_TOPIC};

/// How broadcasters and buffers are set up.
#[derive(Debug, Clone, Default)]
pub struct TfOptions {
    /// Topic domain (endpoints of two domains never see each other).
    pub domain: u32,
}

fn publisher(topic: &str, options: &TfOptions, latched: bool) -> Result<Publisher, TfError> {
    Ok(Publisher::new(topic, PublisherOptions { domain: options.domain, latched, ..PublisherOptions::default() })?)
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
        Ok(Self { publisher: publisher(TF_TOPIC, &options, false)? })
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

/// Publishes static transforms on `tf_static`: every message holds all the transforms this
/// broadcaster was given (a later one for the same child replaces the earlier). The topic is
/// latched, so listeners that start later get the whole set too.
pub struct StaticTransformBroadcaster {
    publisher: Publisher,
    /// Every static transform sent so far, by child frame.
    transforms: Mutex<BTreeMap<String, StampedTransform>>,
}

impl StaticTransformBroadcaster {
    /// Starts publishing on `tf_static`, latched.
    ///
    /// # Errors
    /// The topic cannot be set up.
    pub fn new(options: TfOptions) -> Result<Self, TfError> {
        Ok(Self { publisher: publisher(TF_STATIC_TOPIC, &options, true)?, transforms: Mutex::default() })
    }

    /// Adds `transforms` to the set and sends the whole set.
    ///
    /// # Errors
    /// [`TfError::Invalid`] naming the first transform that is not one (nothing is added), or
    /// the topic failed.
    pub fn send(&self, transforms: &[StampedTransform]) -> Result<(), TfError> {
        let transforms = checked(transforms)?;
        // Held while sending: two sends at once must not leave the older set latched.
        let mut set = lock(&self.transforms);
        set.extend(transforms.into_iter().map(|t| (t.child.clone(), t)));
        let all: Vec<StampedTransform> = set.values().cloned().collect();
        Ok(self.publisher.send(&wire::encode(&all), &Parameters::new())?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::Transform;
    use nerve_topic::{Subscriber, SubscriberOptions};

    #[test]
    fn a_subscriber_that_joins_after_the_send_gets_the_whole_set() -> Result<(), Box<dyn std::error::Error>> {
        let options = TfOptions { domain: 4_242 };
        let broadcaster = StaticTransformBroadcaster::new(options.clone())?;
        let pose = Transform::new([0.2, 0.0, 0.5], [0.0, 0.0, 0.0, 1.0])?;
        broadcaster.send(&[StampedTransform::now("base", "camera", pose)])?;
        broadcaster.send(&[StampedTransform::now("base", "lidar", pose)])?;
        let sub = Subscriber::new(TF_STATIC_TOPIC, SubscriberOptions { domain: options.domain, ..Default::default() })?;
        let got = sub.try_recv()?.expect("the set, on joining");
        let children: Vec<String> = wire::decode(&got.data)?.into_iter().map(|t| t.child).collect();
        assert_eq!(children, ["camera", "lidar"]);
        assert!(sub.try_recv()?.is_none(), "the set once");
        Ok(())
    }
}
